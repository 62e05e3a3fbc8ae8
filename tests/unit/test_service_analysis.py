"""`itb study service`'s analysis on a transfers table made by hand: a TS1 cell's misses
(also among the requests the planner admitted), lateness and the margin it would need."""

from __future__ import annotations

import pandas as pd
import pytest

from itb.study.service.analysis import cell_result
from itb.study.service.cells import PlannedRequest, ServiceCell

ZERO = 5_000_000_000  # the repetition's zero, ns
LEAD = 1.1


def test_ts1_misses_lateness_and_the_margin_it_would_need():
    reqs = [
        PlannedRequest(id="r1", volume_bytes=1_000_000, release_s=0.0, deadline_s=10.0,
                       max_rate_bps=1e9, admitted=True, start_s=0.0, finish_s=8.0),
        PlannedRequest(id="r2", volume_bytes=1_000_000, release_s=2.0, deadline_s=6.0,
                       max_rate_bps=1e9, admitted=True, start_s=2.0, finish_s=5.0),
    ]  # fmt: skip
    cell = ServiceCell(name="w-TS1-reno", workload="w", policy="TS1", cc="reno", mechanism="reno",
                       b_in_bps=8e6, lead_s=LEAD, planning_s=0.0, optimum=None, requests=reqs)  # fmt: skip
    # r1 ends at 9.5 s (0.5 s early), r2 at 7.0 s (1 s late): workload dates + the lead
    tr = pd.DataFrame(
        {
            "repetition": [1, 1],
            "transfer": ["r1", "r2"],
            "direction": ["forward", "forward"],
            "ok": [True, True],
            "completion_s": [9.4, 4.9],
            "end_ns": [ZERO + int((LEAD + 9.5) * 1e9), ZERO + int((LEAD + 7.0) * 1e9)],
            "rep_start_ns": [ZERO, ZERO],
            "bytes": [1_000_000, 1_000_000],
        }
    )
    c = cell_result(cell, tr, planned={"r2"})
    assert (c.transfers, c.misses, c.misses_of_planned, c.failed) == (2, 1, 1, 0)
    assert c.late_max_s == pytest.approx(1.0) and c.late_p50_s == pytest.approx(0.25)
    # margin: 1 − fluid duration / measured: r1 1 − 8/9.5 = 0.1579, r2 1 − 3/5 = 0.4
    assert c.margin_p68 == pytest.approx(0.1579 + 0.68 * (0.4 - 0.1579), abs=1e-3)
    assert c.f1_s == pytest.approx(9.5)  # r1: 9.5 s from its release
    # 2 MB over the span 0 – 9.5 s of an 8 Mbit/s link (1 MB/s): 2 / 9.5
    assert c.f2 == pytest.approx(2 / 9.5)
