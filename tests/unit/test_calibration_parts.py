"""Pieces of calibration that need no testbed: parsing, path expectations, verdicts."""

from __future__ import annotations

from itb.backends.host import RecordingHost
from itb.calibration.probes import parse_ping
from itb.calibration.verdict import at_least, at_most, relative
from itb.emulation import monitor
from itb.scenario import load_testbed
from itb.scenario.testbed.pathspec import default_pair, path_spec


def test_parse_ping():
    text = (
        "64 bytes from 198.18.2.1: icmp_seq=1 ttl=62 time=20.1 ms\n"
        "64 bytes from 198.18.2.1: icmp_seq=2 ttl=62 time=19.95 ms\n"
        "--- 198.18.2.1 ping statistics ---\n"
    )
    assert parse_ping(text) == [20.1, 19.95]


def test_path_spec_dumbbell():
    topo = load_testbed(None, {"rate": "1Gbit", "rtt": "20ms", "loss": "1%"})
    src, dst = default_pair(topo)
    assert (src, dst) == ("l1", "r1")
    spec = path_spec(topo, src, dst)
    assert spec.rtt_us == 20_000 and spec.rate_bps == 1_000_000_000
    assert abs(spec.loss - 0.01) < 1e-12
    assert spec.bottleneck.kind == "bottleneck"
    assert spec.queue_delay_us == 20_000  # one BDP at the rate: one RTT of queueing
    assert spec.bdp_bytes == 2_500_000


def test_path_spec_access_binds_when_slower():
    topo = load_testbed(None, {"rate": "1Gbit", "access_rate": "100Mbit"})
    assert path_spec(topo, "l1", "r1").rate_bps == 100_000_000


def test_verdicts():
    assert relative("rtt", 20.0, 20.15, "ms", 1.0).verdict == "ok"
    off = relative("rtt", 20.0, 20.5, "ms", 1.0)
    assert not off.ok and off.verdict == "off by +2.50 %"
    assert at_least("tcp", 1000, 950, "Mbit/s", 90).ok
    assert not at_least("tcp", 1000, 850, "Mbit/s", 90).ok
    assert at_most("peak", 1005, 1004, "Mbit/s").ok and not at_most("peak", 1005, 1010, "").ok


def test_monitor_windows(tmp_path):
    path = tmp_path / "linkem-ab.csv"
    lines = [",".join(monitor.FIELDS)]
    for i in range(300):  # 300 intervals of 1 ms, 125 kB each: 1 Gbit/s
        lines.append(f"{1_000_000_000 + i * 1_000_000},125000,83,0,0,0,0,0,0.0")
    path.write_text("\n".join(lines) + "\n")
    rows = monitor.read_log(path)
    assert len(rows) == 300
    rates = monitor.windowed_rates_bps(rows, 100_000_000)
    assert len(rates) == 2 and all(abs(r - 1e9) < 1 for r in rates)
    assert abs(monitor.mean_rate_bps(rows) - 1e9) < 1
    assert len(monitor.between(rows, 1_000_000_000, 1_010_000_000)) == 10


def test_recording_host_records_argv():
    h = RecordingHost("x")
    h.run(["ip", "link", "show"])
    assert h.log == [["ip", "link", "show"]]


def test_path_spec_direction_follows_the_path():
    topo = load_testbed(None, {"pairs": 1})
    assert path_spec(topo, "l1", "r1").direction == "ab"
    assert path_spec(topo, "r1", "l1").direction == "ba"


def test_a_chains_queues_along_the_path_bound_the_extra_rtt_under_load_together():
    from pathlib import Path

    from itb.scenario.scenario import load_scenario

    root = Path(__file__).resolve().parents[2]
    topo = load_scenario(root / "scenarios" / "examples" / "chain-transfers.toml").topology
    spec = path_spec(topo, "src", "dst")
    # one BDP each: 100 Mbit/s x 10 ms, 50 Mbit/s x 20 ms, 100 Mbit/s x 10 ms of RTT hold
    # 10, 20 and 10 ms; the bottleneck (50 Mbit/s) alone 20
    assert spec.rate_bps == 50_000_000 and spec.bottleneck.name == "c1-c2"
    assert spec.queue_delay_us == 20_000 and spec.path_queue_delay_us == 40_000
    # the cross flow crosses the middle link only
    assert path_spec(topo, "x1", "x2").path_queue_delay_us == 20_000
