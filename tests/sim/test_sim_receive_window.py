"""itb-sim's receivers offer Linux's window (native/sim/rcv_window.h), as the testbed's do:
from tcp_rmem[1] (131 072 bytes), autotuned as the reader takes the data; with
`open_receive_window = true` their whole buffer at once."""

from __future__ import annotations

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
