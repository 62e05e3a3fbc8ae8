"""The predictability study's points, its level parsing and its analysis (fits, σ_T)."""

import json

import pytest

from itb.bench.scaling import make_scale
from itb.bench.sweep import Sweep
from itb.errors import ScenarioError
from itb.study.predictability import (SYMMETRIC, StudyArgs, analyse, parse_levels, points_of,
                                      sweep_of)


def _args(**kw):
    base = dict(ccs=("cubic", "reno"), c_g=(0.5, 1.0, 1.5, 2.0), reverse=(0.0,), spacing_s=1.0,
                sync_c_g=2.0, fit_range=(1.0, 2.0), rtt_ms=20.0, repeat=2, seed=1,
                scale=make_scale(factor=None, capacity_bps=100_000_000, transfer_time_s=5))
    base.update(kw)
    return StudyArgs(**base)


def test_parse_levels():
    assert parse_levels("0,0.7, 1.1,sym", "--reverse", True) == (0.0, 0.7, 1.1, SYMMETRIC)
    with pytest.raises(ScenarioError):
        parse_levels("sym", "--cg")
    with pytest.raises(ScenarioError):
        parse_levels("1,1", "--cg")


def test_points_cover_the_sweep_and_the_synchronised_case():
    pts = points_of(_args())
    assert len(pts) == 2 * 4 + 2  # + spacing 0 at C_g 2 per protocol
    sync = [p for p in pts if p.spacing_s == 0]
    assert {(p.cc, p.c_g) for p in sync} == {("cubic", 2.0), ("reno", 2.0)}
    sym = points_of(_args(reverse=(SYMMETRIC,)))
    assert all(p.r_level == p.c_g for p in sym)


def test_sweep_scenarios_keep_the_spacing_exactly(tmp_path):
    sw = sweep_of(_args(), tmp_path / "s")
    cell = next(c for c in sw.cells if c.name == "reno-cg2-r0.0-s1")
    starts = [t["at"] for t in cell.doc["transfer"] if t["id"].startswith("bu")]
    assert len(starts) == 20 and starts[:3] == ["0ms", "1s", "2s"]
    sync = next(c for c in sw.cells if c.name == "reno-cg2-r0.0-s0")
    assert {t["at"] for t in sync.doc["transfer"]} == {"0ms"}


def _fake_metrics(t_means, sigma):
    return {"repetitions": [{"repetition": i + 1, "jain": 1, "efficiency": 1, "utilisation": 1,
                             "completion": {"n": 10, "n_failed": 0, "t_mean": t, "t_min": t - 1,
                                            "t_max": t + 1, "sigma_t": sigma, "cov": sigma / t}}
                            for i, t in enumerate(t_means)]}


def test_analysis_fits_and_compares_spacing(tmp_path):
    a = _args(c_g=(0.5, 1.0, 1.25, 1.5, 2.0))  # 1.25 at K = 10: 12 sources, C_g 1.2
    sw = sweep_of(a, tmp_path / "s")
    sw.state = {"cells": [{"name": c.name, **c.info, "run": f"cells/{c.name}"} for c in sw.cells],
                "args": a.key()}
    for c in sw.state["cells"]:
        realised = round(c["c_g"] * 10) / 10
        t = 10 * realised + (5 if c["cc"] == "reno" else 0)  # linear in the realised C_g
        d = tmp_path / "s" / c["run"]
        d.mkdir(parents=True)
        (d / "metrics.json").write_text(json.dumps(
            _fake_metrics([t, t], 3.0 if c["spacing_s"] == 0 else 1.0)))
    points, fits, spacing = analyse(sw, a)
    f = {x["cc"]: x for x in fits}
    assert f["cubic"]["a"] == pytest.approx(10) and f["cubic"]["b"] == pytest.approx(0)
    assert f["reno"]["b"] == pytest.approx(5) and f["reno"]["r2"] == pytest.approx(1)
    assert f["reno"]["n"] == 4  # C_g 1, 1.25, 1.5, 2: 0.5 lies outside the fit range
    assert f["reno"]["r2"] == pytest.approx(1) and f["reno"]["x"] == "realised C_g"
    assert {p["c_g"]: p["c_g_realised"] for p in points}[1.25] == 1.2
    s = {x["cc"]: x for x in spacing}
    assert s["cubic"]["sigma_t_sync"] == 3.0 and s["cubic"]["sigma_t_spaced"] == 1.0
    assert (tmp_path / "s" / "points.csv").exists()


def test_a_directory_of_other_arguments_is_refused(tmp_path):
    sw = sweep_of(_args(), tmp_path / "s")
    sw.open()
    other = sweep_of(_args(repeat=3), tmp_path / "s")
    with pytest.raises(ScenarioError, match="other arguments"):
        other.open()
    assert isinstance(sw, Sweep)
