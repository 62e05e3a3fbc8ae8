"""Bring a dumbbell up, measure RTT and rate through the emulator, tear it down."""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import pytest

from itb.backends import local, procs
from itb.calibration import probes
from itb.emulation import monitor
from itb.scenario import load_testbed

from .conftest import itb


def _addr(status: dict, name: str) -> str:
    return next(h["ipv4"] for h in status["hosts"] if h["name"] == name)


def test_up_measure_down(isolated):
    topo = load_testbed(None, {"pairs": 2, "rate": "100Mbit", "rtt": "20ms"})
    state = local.up(topo)
    st = local.status(state)
    assert {h["name"] for h in st["hosts"]} == {"l1", "l2", "r1", "r2"}
    assert {h["side"] for h in st["hosts"]} == {"left", "right"}
    assert all(h["netns"].startswith("itbt-") and h["ipv4"] and h["ipv6"] for h in st["hosts"])
    bottleneck = next(lk for lk in st["links"] if lk["kind"] == "bottleneck")
    assert bottleneck["emulator"]["alive"]

    l1, r1 = local.host(state, "l1"), local.host(state, "r1")
    dst = _addr(st, "r1")
    probes.ping(l1, dst, 3, 0.1)
    rtts = probes.ping(l1, dst, 50, 0.02)
    assert abs(statistics.median(rtts) - 20.0) <= 0.2, rtts

    v6 = next(h["ipv6"] for h in st["hosts"] if h["name"] == "r2")
    assert probes.ping(local.host(state, "l2"), v6, 3, 0.1)

    res = probes.Iperf(l1, r1, dst).run([], 4, 1)
    goodput = res["end"]["sum_received"]["bits_per_second"]
    assert 90e6 <= goodput <= 100.5e6, goodput

    stats = local.down()
    assert not local.owned_namespaces()
    s = stats[bottleneck["name"]]
    assert s["ab"]["tx_bytes"] > 40e6  # the transfer went through the emulator
    # linkem timed its departures with the kernel's transmit stamps: one sample per
    # 500 us at most (~5 s of transfer: ~10 000), all stamped, the median a few us at
    # 100 Mbit/s (one segment per chunk); a stamp matched to the wrong frame or a clock
    # mix-up would be milliseconds or seconds off
    dep = s["ab"]["departure_error"]
    assert 2_000 <= dep["samples"] <= 60_000, dep
    assert dep["unstamped"] == 0 and dep["abs_p50_us"] <= 100, dep
    assert -1_000_000 < dep["min_ns"] <= dep["max_ns"] < 1_000_000_000, dep
    assert not procs.pids_in(bottleneck["emulator"]["netns"])


def test_status_json_and_down_via_cli(isolated):
    res = itb("testbed", "up", "--pairs", "1", "--rate", "1Gbit", "--rtt", "2ms")
    assert res.returncode == 0, res.stderr
    res = itb("testbed", "status", "--json")
    assert res.returncode == 0, res.stderr
    st = json.loads(res.stdout)
    for h in st["hosts"]:
        assert set(h) >= {"name", "netns", "role", "side", "ipv4", "ipv6"}
    assert st["links"]
    res = itb("testbed", "down")
    assert res.returncode == 0, res.stderr
    assert not local.owned_namespaces()
    assert itb("testbed", "status").returncode != 0


def test_an_idle_testbeds_emulator_log_rotates_and_stays_bounded(isolated, monkeypatch):
    """With small segments (64 KiB, ~2 s of an idle link's rows), linkem rotates and
    drops the oldest; what is kept reads back as one unbroken series; `down` removes it."""
    monkeypatch.setattr(monitor, "LOG_SEGMENT_BYTES", 64 << 10)
    monkeypatch.setattr(monitor, "LOG_KEEP_BYTES", 192 << 10)
    topo = load_testbed(None, {"pairs": 1, "rate": "100Mbit", "rtt": "10ms"})
    state = local.up(topo)
    try:
        em = local.emulators_of(state)[0]
        t0 = time.monotonic_ns()
        time.sleep(12)
        files = monitor.log_files(em.log_dir, "ab")
        closed = files[:-1]
        assert files[-1].name == "linkem-ab.csv" and len(closed) >= 2, files
        assert sum(p.stat().st_size for p in closed) <= 192 << 10
        assert int(closed[0].name.split(".")[1]) > 1, "the oldest segments were not dropped"
        lo = monitor._first_t(closed[0])
        df = monitor.read_window(em.log_dir, "ab", lo, time.monotonic_ns())
        steps = set(df["t_ns"].diff().dropna().astype(int))
        assert steps == {1_000_000} and df["t_ns"].iloc[-1] - lo > 4e9, steps
        with pytest.raises(monitor.LogGone):
            monitor.read_window(em.log_dir, "ab", t0, time.monotonic_ns())
        monitor.drop_consumed(em.log_dir, "ab", time.monotonic_ns())
        assert [p.name for p in monitor.log_files(em.log_dir, "ab")] == ["linkem-ab.csv"]
    finally:
        local.down()
    assert not Path(em.log_dir).exists()
