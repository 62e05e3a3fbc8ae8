"""itb-sim's receivers offer Linux's window (native/sim/rcv_window.h), as the testbed's do:
from tcp_rmem[1] (131 072 bytes), autotuned as the reader takes the data; with
`open_receive_window = true` their whole buffer at once."""

from __future__ import annotations

import json

import pandas as pd

from tests.sim.test_sim_fidelity import OVERSHOOT
from tests.sim.test_sim_run import simulated


def _fourth_round_trip(run) -> pd.DataFrame:
    """The sender's tcp_info rows of its fourth round trip (50 ms each, from the first)."""
    (log,) = (run / "rep-001" / "nodes" / "l1").glob("*.send.csv")
    ti = pd.read_csv(log)
    t_ms = (ti["t_ns"] - ti["t_ns"].iloc[0]) / 1e6
    return ti[(t_ms >= 140) & (t_ms < 200)]


def test_the_fourth_round_trip_is_held_to_what_linuxs_first_buffer_offers(tmp_path):
    r4 = _fourth_round_trip(simulated(tmp_path, OVERSHOOT))
    # slow start's window reaches 80 segments, but 131 072 bytes of buffer at Linux's
    # scaling ratio 170/256 offer 87 040 bytes = 60.1 segments of 1 448 until the
    # autotuning's first growth, measured at the next round's first read (the testbed:
    # 58 segments in flight then, tcp_probe, 2026-12-07)
    assert r4["cwnd"].max() >= 76, r4
    assert r4["unacked"].max() <= 60, r4


def test_receivers_that_open_their_window_let_the_fourth_round_trip_fill_it(tmp_path):
    scenario = OVERSHOOT.replace(
        'topology = "dumbbell"', 'topology = "dumbbell"\nopen_receive_window = true'
    )
    r4 = _fourth_round_trip(simulated(tmp_path, scenario))
    assert r4["unacked"].max() >= 76, r4


def _packets(run) -> tuple[int, int]:
    """The bottleneck's packets forward (data) and reverse (ACKs) over the whole run."""
    bl = pd.read_parquet(run / "bottleneck.parquet")
    by = bl.groupby("direction")["packets"].sum()
    return int(by["forward"]), int(by["reverse"])


def test_a_testbed_that_acks_every_segment_is_simulated_with_twice_the_acks(tmp_path):
    # 30 MB is 20 718 segments of 1 448 bytes (plus a handshake's few packets)
    for side in ("d", "q"):
        (tmp_path / side).mkdir()
    data, acks = _packets(simulated(tmp_path / "d", OVERSHOOT))
    # Linux's bulk receiver (ns-3's DelAckCount 2): about one ACK per two segments
    # (one per segment while out of order, after the overshoot's losses)
    assert 20_718 <= data <= 23_000 and 0.45 * data <= acks <= 0.70 * data, (data, acks)
    scenario = OVERSHOOT.replace(
        'topology = "dumbbell"', 'topology = "dumbbell"\nack_every_segment = true'
    )
    data, acks = _packets(simulated(tmp_path / "q", scenario))
    # the testbed's routes then carry quickack: one ACK per segment
    assert 20_718 <= data <= 23_000 and 0.97 * data <= acks <= 1.03 * data, (data, acks)


# one cubic flow of 100 MB on a 10 Gbit/s, 20 ms dumbbell with a one-BDP queue
TEN_GBIT = (
    OVERSHOOT.replace('"500Mbit"', '"10Gbit"')
    .replace('"50ms"', '"20ms"')
    .replace('"0.5bdp"', '"1bdp"')
    .replace('"30MB"', '"100MB"')
    .replace('"reno"', '"cubic"')
)
assert all(x in TEN_GBIT for x in ('"10Gbit"', '"20ms"', '"1bdp"', '"100MB"', '"cubic"'))


def test_at_10_gbits_the_window_grows_past_the_first_buffer_as_the_testbeds_does(tmp_path):
    """A round trip's whole burst arrives within the reader's wake-up lag at 10 Gbit/s: left
    unread at its first read, it held the window at 131 072 × 170/256 bytes (35 segments
    in flight, 20 Mbit/s: 100 MB in ~40 s). On the testbed at 5 Gbit/s the buffer doubles
    every round trip (tcp_rcvbuf_grow, 2026-12-08): here the flight passes 10 000
    segments and the 100 MB (69 061 segments) take well under a second."""
    run = simulated(tmp_path, TEN_GBIT)
    (log,) = (run / "rep-001" / "nodes" / "l1").glob("*.send.csv")
    assert pd.read_csv(log)["unacked"].max() >= 10_000
    (sent,) = (run / "rep-001" / "nodes" / "l1").glob("*.send.json")
    send = json.loads(sent.read_text())
    assert send["ok"] and (send["end_ns"] - send["start_ns"]) / 1e9 < 1.0, send
