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
