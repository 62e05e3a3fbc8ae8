"""The friendliness study: its mixed plan, its per-group statistics and its verdicts."""

import json

import pandas as pd
import pytest

from itb.errors import ItbError, ScenarioError
from itb.study.friendliness.analysis import analyse, group_runs, ratios
from itb.study.friendliness.args import FriendlinessArgs
from itb.study.friendliness.plan import sweep_of
from itb.study.friendliness.results import FORMAT_VERSION, Results


def _args(**kw):
    base = dict(
        ccs=("cubic",),
        reference="reno",
        c_g=(1.5,),
        rtt_ms=20.0,
        repeat=3,
        seed=1,
        capacity=100_000_000,
        transfer_time=5,
        max_span=0.025,
    )
    base.update(kw)
    return FriendlinessArgs(**base)


def test_the_mixed_cell_alternates_and_the_alone_cell_is_all_reference(tmp_path):
    sw = sweep_of(_args(), tmp_path / "s")
    cells = {c.name: c for c in sw.cells}
    assert set(cells) == {"cubic-vs-reno-cg1.5", "reno-alone-cg1.5"}
    mix = [
        t["cc"] for t in cells["cubic-vs-reno-cg1.5"].doc["transfer"] if t["id"].startswith("bu.")
    ]
    assert len(mix) == 15 and mix[:4] == ["cubic", "reno", "cubic", "reno"]
    assert mix.count("cubic") == 8 and mix.count("reno") == 7
    alone = {t["cc"] for t in cells["reno-alone-cg1.5"].doc["transfer"]}
    assert alone == {"reno"}
    with pytest.raises(ScenarioError, match="reference"):
        sweep_of(_args(ccs=("reno",)), tmp_path / "x")


def _transfers(rows):
    return pd.DataFrame(
        [
            {
                "repetition": r,
                "direction": "forward",
                "cc": cc,
                "streams": 1,
                "completion_s": t,
                "ok": ok,
            }
            for r, cc, t, ok in rows
        ]
    )


def test_group_runs_count_failures_and_average_the_completed():
    runs = group_runs(
        _transfers(
            [
                (1, "cubic", 10.0, True),
                (1, "cubic", 14.0, True),
                (1, "reno", 20.0, True),
                (1, "reno", None, False),
            ]
        )
    )
    by = {r.cc: r for r in runs}
    assert by["cubic"].t_mean == 12.0 and by["cubic"].completed == 2 and by["cubic"].failed == 0
    assert by["reno"].t_mean == 20.0 and by["reno"].failed == 1 and by["reno"].sources == 2
    assert ratios(runs, "cubic", "reno") == [20.0 / 12.0]


def test_analysis_gives_each_group_the_ratio_and_the_cost_to_the_reference(tmp_path):
    a = _args()
    sw = sweep_of(a, tmp_path / "s")
    sw.open()  # writes the scenarios and the index; nothing runs
    mix = [
        (r, cc, t, True)
        for r in (1, 2, 3)
        for cc, t in (("cubic", 10.0 + r), ("cubic", 10.0 + r), ("reno", 15.0 + r))
    ]
    alone = [(r, "reno", 12.0 + 0.1 * r, True) for r in (1, 2, 3)]
    for name, rows in (("cubic-vs-reno-cg1.5", mix), ("reno-alone-cg1.5", alone)):
        d = tmp_path / "s" / "cells" / name
        d.mkdir(parents=True)
        _transfers(rows).to_parquet(d / "transfers.parquet")
    res = analyse(sw)
    (p,) = res.points
    assert p.tested_group.t_mean == pytest.approx(12.0) and p.reference_group.t_mean == 17.0
    assert p.ratio == pytest.approx((16 / 11 + 17 / 12 + 18 / 13) / 3)
    assert p.ratio_ci95 is not None and p.ratio_runs == 3
    assert p.reference_alone.t_mean == pytest.approx(12.2)
    c = p.reference_cost
    assert c.difference == pytest.approx(17.0 / 12.2 - 1) and c.verdict == "slower"
    again = Results.load(tmp_path / "s" / "results.json")
    assert again == res and again.format_version == FORMAT_VERSION
    (tmp_path / "old.json").write_text(json.dumps({"format_version": 0, "points": []}))
    with pytest.raises(ItbError, match="format 0"):
        Results.load(tmp_path / "old.json")


def test_the_key_is_the_one_itb_wrote_before():
    key = FriendlinessArgs(
        ccs="cubic", c_g="0.2", repeat=2, transfer_time=2.0, capacity="100Mbit"
    ).key()
    assert key.pop("scale")["volume_factor"] == 120.0  # 240 s in the documents, 2 s here
    assert key == {
        "ccs": ["cubic"],
        "reference": "reno",
        "c_g": [0.2],
        "rtt_ms": 20.0,
        "repeat": 2,
        "max_span": 0.025,
        "seed": 1,
    }
    with pytest.raises(ScenarioError, match="give one congestion control"):
        FriendlinessArgs(reference="reno,cubic", capacity="100Mbit")
