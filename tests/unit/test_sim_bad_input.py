"""The simulator under bad input, in its parts: the memory estimate and its refusal, the
cap on background flows over the whole timeline, a congestion control the simulator has
not, a sleep longer than a timer can be, the simulator's failures said for people,
ns-3 without its libraries, the workers of a parallel sweep, `--transfer-time 0`."""

from __future__ import annotations

import sys

import pytest

from itb.backends.sim import config, driver, memory
from itb.backends.sim.testbed import failure
from itb.errors import PreflightError, ScenarioError
from itb.scenario import load_testbed
from itb.scenario.scenario import scenario_from_data, timeline_on
from itb.sweep.parallel import workers

MIB = 2**20


def dumbbell(pairs: int, rate: str, rtt: str, buf: str, transfers: list[dict]) -> dict:
    return {
        "testbed": {"name": "bad", "topology": "dumbbell"},
        "dumbbell": {"pairs": pairs},
        "bottleneck": {"rate": rate, "rtt": rtt, "buffer": buf},
        "experiment": {"duration": "60s"},
        "transfer": transfers,
    }


def bulk(n: int, volume: str) -> list[dict]:
    return [
        {"src": f"l{k}", "dst": f"r{k}", "at": "0s", "volume": volume, "cc": "reno"}
        for k in range(1, n + 1)
    ]


def test_the_estimate_counts_twice_what_the_links_hold_when_the_windows_could_fill_them():
    sc = scenario_from_data(dumbbell(4, "100Mbit", "20ms", "10MB", bulk(4, "1GB")), "t")
    est = memory.estimate(sc.topology, list(sc.experiment.events))
    # the bottleneck's forward direction: 10e6 // 1514 = 6605 frames of queue and
    # 1e8 · 0.010 / 8 // 1514 = 82 of pipe; the access links are unlimited, without delay
    # windows: 4 × ceil(16 MiB / 1448) = 4 × 11587 = 46348 segments > 2 × 6687 = 13374
    assert est.total_bytes == 32 * MIB + 4 * 16384 + 4 * 12288 + 13374 * 8192
    assert "13374 TCP segments in flight, twice what the links hold (6687 frames" in est.biggest
    assert "link rl-rr forward: queue 6605 and pipe 82 frames" in est.biggest


def test_short_transfers_are_counted_by_their_volume_not_by_the_path():
    sc = scenario_from_data(dumbbell(4, "100Mbit", "20ms", "10MB", bulk(4, "2MB")), "t")
    est = memory.estimate(sc.topology, list(sc.experiment.events))
    # 4 × ceil(2e6 / 1448) = 4 × 1382 = 5528 segments, fewer than the links hold twice
    assert est.terms[next(k for k in est.terms if "TCP segments" in k)] == 5528 * 8192
    assert "5528 TCP segments in flight, the flows' windows" in " ".join(est.terms)


def test_an_absurd_scenario_is_refused_by_its_memory_estimate_naming_the_biggest_term():
    # 40 Gbit/s, 2 s RTT, a 1 GB queue, 100 flows (itb-sim grew ~20 MB/s until bad_alloc)
    sc = scenario_from_data(dumbbell(100, "40Gbit", "2s", "1GB", bulk(100, "100GB")), "t")
    events = list(sc.experiment.events)
    # queue 1e9 // 1514 = 660501, pipe 40e9 · 1 s / 8 // 1514 = 3302509: twice 3963010
    # segments of 8 KiB, 100 transfers and connections, itb-sim: 60.5 GiB
    est = memory.estimate(sc.topology, events)
    assert est.total_bytes == 32 * MIB + 100 * (16384 + 12288) + 2 * 3963010 * 8192
    why = memory.refusal(sc.topology, events, available=16 * 2**30)
    assert why == (
        "its simulation would need about 60.5 GiB, most of it 7926020 TCP segments in flight, "
        "twice what the links hold (3963010 frames; the most on link rl-rr forward: queue "
        "660501 and pipe 3302509 frames), more than the 16.0 GiB this machine has available "
        "(a smaller queue, rate, RTT or fewer flows; docs/simulation.md)"
    )
    assert memory.refusal(sc.topology, events, available=64 * 2**30) is None


def test_the_simulator_refuses_what_would_not_fit_in_the_memory_available(monkeypatch):
    sc = scenario_from_data(dumbbell(100, "40Gbit", "2s", "1GB", bulk(100, "100GB")), "t")
    monkeypatch.setattr(memory, "available_bytes", lambda: 16 * 2**30)
    why = config.unsupported(sc.topology, list(sc.experiment.events))
    assert why is not None and why.startswith("its simulation would need about 60.5 GiB")


def background(n: int) -> dict:
    return {
        "src": ["l1"], "dst": ["r1"], "at": "0s", "duration": "50s", "mean_gap": "5ms",
        "sizes": {"distribution": "fixed", "mean": "10kB"}, "id": f"bg{n}",
    }  # fmt: skip


def test_background_flows_are_capped_over_the_whole_timeline_not_per_section():
    topo = load_testbed(None, {})
    # 50 s / 5 ms = 10 000 flows a section: one is at the cap, two are 20 000
    timeline_on(topo, {"tcp_background": [background(1)]}, "t")
    with pytest.raises(ScenarioError, match="20000 background flows expected in all"):
        timeline_on(topo, {"tcp_background": [background(1), background(2)]}, "t")
    with pytest.raises(ScenarioError, match="100000 background flows expected in all"):
        timeline_on(topo, {"tcp_background": [background(k) for k in range(10)]}, "t")


def test_a_congestion_control_without_linux_code_here_is_refused_with_the_ones_there_are():
    topo = load_testbed(None, {})
    ev = list(
        timeline_on(topo, {"transfer": [{"id": "b", "src": "l1", "dst": "r1", "at": "0s",
                                         "volume": "1MB", "cc": "bbr"}]}, "t").experiment.events
    )  # fmt: skip
    assert config.unsupported(topo, ev) == (
        "b: congestion control 'bbr': its Linux code does not run in the simulator (Linux's: "
        "reno, cubic, bic, highspeed, htcp, scalable, vegas); ns-3's models run as "
        "ns3:<model>, e.g. ns3:TcpBbr"
    )


def test_a_sleep_longer_than_the_timeline_is_a_timer_that_ends_with_it():
    topo = load_testbed(None, {})
    for seconds in ("1e30", "1e308", "inf"):
        exp = timeline_on(
            topo, {"command": [{"id": "s", "host": "l1", "at": "1s", "argv": ["sleep", seconds]}]},
            "t",
        ).experiment  # fmt: skip
        assert config.unsupported(topo, list(exp.events)) is None
        text = config.config(topo, list(exp.events), 0, 60_000_000, 100_000, 1, 1)
        # past the timeline's end (60 s) it never fires: 59 s + 1 µs after its date
        assert "timer s 1000000 59000001 1" in text.splitlines(), seconds


def test_a_simulator_that_fails_says_how_it_ended_and_where_its_messages_are(tmp_path):
    rep = tmp_path / "rep-001"
    rep.mkdir()
    (rep / "sim.err").write_text("")
    assert failure(-9, rep, 12.34, 100 * MIB, 16 * 2**30) == (
        "itb-sim killed by SIGKILL (signal 9) after 12.3 s (its messages: rep-001/sim.err (empty))"
    )
    (rep / "sim.err").write_text("itb-sim: transfer t1 between unknown nodes\n")
    assert failure(2, rep, 0.1, MIB, 16 * 2**30) == (
        "itb-sim exited 2 after 0.1 s; it said: itb-sim: transfer t1 between unknown nodes "
        "(its messages: rep-001/sim.err)"
    )
    (rep / "sim.err").write_text(
        "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  "
        "std::bad_alloc\n"
    )
    assert failure(-6, rep, 30.0, 2 * 2**30, 3 * 2**30) == (
        "itb-sim ran out of memory after 30.0 s (killed by SIGABRT (signal 6), at 2.00 GiB; "
        "its limit 3.0 GiB, the memory the machine had available at its start): the scenario "
        "needs more than this machine has (its messages: rep-001/sim.err)"
    )


def test_a_program_in_the_simulators_place_that_does_not_run_is_said_so(tmp_path):
    crash = tmp_path / "crash"
    crash.write_text("#!/bin/sh\nkill -SEGV $$\n")
    crash.chmod(0o755)
    with pytest.raises(PreflightError, match=r"killed by SIGSEGV \(signal 11\)"):
        driver.check_runs(crash, "$ITB_SIM")
    plain = tmp_path / "plain"
    plain.write_text("not a program")
    with pytest.raises(PreflightError, match="cannot be run: Permission denied"):
        driver.check_runs(plain, "$ITB_SIM")
    with pytest.raises(PreflightError, match="No such file or directory"):
        driver.check_runs(tmp_path / "nowhere", "$ITB_SIM")
    usage = tmp_path / "usage"
    usage.write_text("#!/bin/sh\necho 'itb-sim: usage: itb-sim CONFIG OUTDIR' >&2\nexit 2\n")
    usage.chmod(0o755)
    assert driver.check_runs(usage, "$ITB_SIM") == usage


def test_ns3_without_its_libraries_is_a_missing_prerequisite(tmp_path, monkeypatch):
    root = tmp_path / "ns3"
    (root / "include" / "ns3").mkdir(parents=True)
    (root / "lib64").mkdir()
    (root / "lib64" / "libns3.44-core.so").write_bytes(b"")
    (root / "lib64" / "libns3.44-internet.so").write_bytes(b"")
    monkeypatch.delenv("ITB_SIM", raising=False)
    monkeypatch.setattr(driver, "ns3_root", lambda: root)
    with pytest.raises(PreflightError) as e:
        driver.program([])
    assert str(e.value) == (
        f"{root}/lib64: ns-3 3.44 without its libraries libns3.44-network.so, "
        "libns3.44-point-to-point.so, libns3.44-applications.so (itb-sim needs them; "
        "reinstall it: `pip install --force-reinstall ns3`)"
    )


def test_a_parallel_sweep_runs_no_more_workers_than_cores_cells_or_memory_allow():
    assert workers(100_000, 1, 2) == (1, ["--jobs 100000: capped at this machine's 2 core(s)"])
    assert workers(100_000, 36, 2) == (2, ["--jobs 100000: capped at this machine's 2 core(s)"])
    assert workers(2, 36, 8) == (2, [])
    n, notes = workers(8, 36, 8, fit=3)
    assert n == 3 and notes == [
        "3 simulation(s) at a time: what this machine's memory holds of the largest cell"
    ]
    assert workers(4, 36, 8, fit=0)[0] == 1  # (one at a time still runs: its run refuses)


def test_bench_refuses_a_transfer_time_of_zero_instead_of_taking_the_default(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import itb.suite.benchmark as benchmark
    from itb.cli import app

    ran: list = []
    monkeypatch.setattr(benchmark, "sweep_of", lambda args, *a, **k: ran.append(args))
    out = tmp_path / "b"
    res = CliRunner().invoke(
        app, ["bench", "--app", "BU", "--class", "B", "--cc", "reno", "--capacity", "10Mbit",
              "--transfer-time", "0", "--out", str(out)],
    )  # fmt: skip
    # (the typed error, which `itb` turns into its exit status: 2)
    assert ran == [] and isinstance(res.exception, ScenarioError), (res.output, ran)
    assert (
        str(res.exception)
        == "<command line>: --transfer-time: must be a positive number of seconds"
    )
    assert res.exception.exit_code == 2 and not out.exists()


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
