"""The predictability study's points, its level parsing, its planner against the fluid
model of an ideal protocol, and its analysis (fits, σ_T)."""

import json
import statistics

import pytest

from itb.analysis.fairshare import tcp_payload_share
from itb.analysis.run_results import Completion, Context, Overall, Repetition, RunMetrics
from itb.analysis.statistics import fit_linear
from itb.errors import ItbError, ScenarioError
from itb.scenario.units import parse_duration
from itb.study.options import SYMMETRIC, levels
from itb.study.predictability.analysis import analyse
from itb.study.predictability.args import PredictabilityArgs
from itb.study.predictability.cells import PredictabilityCell
from itb.study.predictability.plan import planned_ideal, points_of, sweep_of
from itb.study.predictability.results import FORMAT_VERSION, Results
from itb.sweep.index import SweepIndex, read_index
from itb.sweep.sweep import Sweep


def _args(**kw):
    base = dict(
        ccs=("cubic", "reno"),
        c_g=(0.5, 1.0, 1.5, 2.0),
        reverse=(0.0,),
        spacing_s=1.0,
        sync_c_g=2.0,
        fit_range=(1.0, 2.0),
        rtt_ms=20.0,
        repeat=2,
        seed=1,
        capacity=100_000_000,
        transfer_time=5,
        r_levels=(0.0, 0.8, 1.5),
    )
    base.update(kw)
    return PredictabilityArgs(**base)


def test_parse_levels():
    assert levels("0,0.7, 1.1,sym", "--reverse", True) == (0.0, 0.7, 1.1, SYMMETRIC)
    with pytest.raises(ScenarioError):
        levels("sym", "--cg")
    with pytest.raises(ScenarioError):
        levels("1,1", "--cg")


def test_points_cover_the_sweep_and_the_synchronised_case():
    pts = points_of(_args())
    assert len(pts) == 2 * 4 + 2 + 2 * 2  # + spacing 0 at C_g 2, + R 0.8 and 1.5 at C_g 2
    r_sweep = {(p.cc, p.reverse) for p in pts if p.c_g == 2.0 and p.spacing_s == 1.0}
    assert r_sweep == {(cc, r) for cc in ("cubic", "reno") for r in (0.0, 0.8, 1.5)}
    assert len(points_of(_args(r_levels=()))) == 2 * 4 + 2
    sync = [p for p in pts if p.spacing_s == 0]
    assert {(p.cc, p.c_g) for p in sync} == {("cubic", 2.0), ("reno", 2.0)}
    sym = points_of(_args(reverse=(SYMMETRIC,), r_levels=()))
    assert all(p.r_level == p.c_g for p in sym)


def _starts(cell, prefix="bu"):
    return [
        parse_duration(t["at"]) / 1e6 for t in cell.doc["transfer"] if t["id"].startswith(prefix)
    ]


def test_starts_stay_within_the_span_cap_and_reverse_starts_after(tmp_path):
    a = _args(reverse=(0.5,), c_g=(2.0,))
    sw = sweep_of(a, tmp_path / "s")
    cell = next(c for c in sw.cells if c.name == "reno-cg2-r0.5-s1")
    starts = _starts(cell)
    assert len(starts) == 20
    # 1 s asked; 20 starts within 2.5 % of the 5 s transfer: 0.125 s / 19 apart
    assert starts[1] == pytest.approx(0.125 / 19, abs=1e-6)
    assert starts[-1] == pytest.approx(0.125, abs=1e-5)
    assert cell.info.spacing_realised_s == pytest.approx(0.125 / 19)
    rev = _starts(cell, "rev")
    assert len(rev) == 5 and min(rev) > max(starts)  # RR-6256 §4.3
    assert rev[1] - rev[0] == pytest.approx(starts[1] - starts[0], abs=1e-5)
    sync = next(c for c in sw.cells if c.name == "reno-cg2-r0.5-s0")
    assert set(_starts(sync)) == {0.0}
    uncapped = sweep_of(_args(max_span=None), tmp_path / "u")
    assert _starts(next(c for c in uncapped.cells if c.name == "reno-cg2-r0.0-s1"))[:3] == [0, 1, 2]


def _metrics_json(reps: list[dict]) -> dict:
    """metrics.json of a run with these repetitions (completion stats and Jain, efficiency,
    utilisation), as the run would write it."""
    rows = [
        Repetition(
            repetition=i + 1,
            bin_s=0.1,
            completion=Completion(**r["completion"]),
            **{k: v for k, v in r.items() if k != "completion"},
        )
        for i, r in enumerate(reps)
    ]
    overall = Overall(n_repetitions=len(rows), completion=Completion(n=0, n_failed=0))
    return RunMetrics(repetitions=rows, overall=overall, context=Context()).model_dump(mode="json")


def _ideal_metrics(times):
    t = statistics.fmean(times)
    s = statistics.pstdev(times)
    return _metrics_json(
        [
            {
                "completion": {
                    "n": len(times),
                    "n_failed": 0,
                    "t_mean": t,
                    "t_min": min(times),
                    "t_max": max(times),
                    "sigma_t": s,
                    "cov": s / t,
                }
            }
        ]
    )


def _ideal_study(tmp_path, transfer_s=15, **kw):
    """The study's own plan, run by the fluid model of a perfectly fair protocol, then
    through the study's analysis."""
    a = _args(
        c_g=(0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
        repeat=1,
        capacity=1_000_000_000,
        transfer_time=transfer_s,
        **kw,
    )
    sw = sweep_of(a, tmp_path / "s")
    sw.open()  # writes the scenarios (the ideal is computed from them) and the index
    for c, cell in zip(sw.index.cells, sw.cells):
        d = tmp_path / "s" / c.run
        d.mkdir(parents=True)
        (d / "metrics.json").write_text(json.dumps(_ideal_metrics(planned_ideal(cell.doc))))
    return analyse(sw, a)


# the former default transfers and the CLI's
@pytest.mark.parametrize("transfer_s", [15, 90])
def test_an_ideal_protocol_on_the_planner_shows_no_manufactured_effect(tmp_path, transfer_s):
    res = _ideal_study(tmp_path, transfer_s)
    # synchronised ideal: each source moves its payload at its pacing rate until the link's
    # payload rate C·1448/1514 is shared: T = max(T1, C_g · T1 / share); its slope over 1–2
    xs = [1.0, 1.2, 1.4, 1.6, 1.8, 2.0]
    ideal_slope = fit_linear(
        xs, [max(transfer_s, x * transfer_s / tcp_payload_share()) for x in xs]
    )["a"]
    spaced = [p for p in res.points if p.spacing_s == 1.0]
    assert max(p.cov for p in spaced) < 0.001  # CoV ≈ 0
    for f in (f for f in res.fits if f.model == "linear"):
        assert f.a == pytest.approx(ideal_slope, rel=0.02)
        assert f.r2 > 0.999
    for s in res.spacing:  # synchronised: 0; spaced: equal within 0.1 % of T_mean
        assert s.sigma_t_sync >= s.sigma_t_spaced - 0.001 * s.t_mean_spaced
        assert s.sigma_t_spaced == pytest.approx(s.ideal_sigma_t_spaced)


def test_the_old_uncapped_plan_fails_the_same_check(tmp_path):
    """1 s spacing with 15 s transfers (the former default): the plan alone bends the
    slope and creates spread, which the check above would catch."""
    res = _ideal_study(tmp_path, max_span=None)
    f = next(f for f in res.fits if f.cc == "reno" and f.model == "linear")
    assert f.a < 0.5 * 15 / tcp_payload_share()
    cg2 = next(p for p in res.points if p.c_g == 2.0 and p.spacing_s == 1.0 and p.cc == "reno")
    assert cg2.cov > 0.05
    s = next(s for s in res.spacing if s.cc == "reno")
    assert s.sigma_t_spaced > s.sigma_t_sync + 0.01 * s.t_mean_spaced


def _fake_metrics(t_means, sigma):
    return _metrics_json(
        [
            {
                "jain": 1,
                "efficiency": 1,
                "utilisation": 1,
                "completion": {
                    "n": 10,
                    "n_failed": 0,
                    "t_mean": t,
                    "t_min": t - 1,
                    "t_max": t + 1,
                    "sigma_t": sigma,
                    "cov": sigma / t,
                },
            }
            for t in t_means
        ]
    )


def test_analysis_fits_and_compares_spacing(tmp_path):
    a = _args(c_g=(0.5, 1.0, 1.25, 1.5, 2.0))  # 1.25 at K = 10: 12 sources, C_g 1.2
    sw = sweep_of(a, tmp_path / "s")
    sw.open()  # writes the scenarios (the ideal is computed from them) and the index
    for c in sw.index.cells:
        realised = round(c.c_g * 10) / 10
        t = 10 * realised + (5 if c.cc == "reno" else 0)  # linear in the realised C_g
        d = tmp_path / "s" / c.run
        d.mkdir(parents=True)
        (d / "metrics.json").write_text(
            json.dumps(_fake_metrics([t, t], 3.0 if c.spacing_s == 0 else 1.0))
        )
    res = analyse(sw, a)
    f = {x.cc: x for x in res.fits}
    assert f["cubic"].a == pytest.approx(10) and f["cubic"].b == pytest.approx(0)
    assert f["reno"].b == pytest.approx(5) and f["reno"].r2 == pytest.approx(1)
    assert f["reno"].n == 4  # C_g 1, 1.25, 1.5, 2: 0.5 lies outside the fit range
    assert f["reno"].x == "realised C_g" and f["reno"].model == "linear"
    assert {p.c_g: p.c_g_realised for p in res.points}[1.25] == 1.2
    s = {x.cc: x for x in res.spacing}
    assert s["cubic"].sigma_t_sync == 3.0 and s["cubic"].sigma_t_spaced == 1.0
    assert (tmp_path / "s" / "points.csv").exists()
    again = Results.load(tmp_path / "s" / "results.json")
    assert again == res and again.format_version == FORMAT_VERSION


def test_scalable_also_gets_the_quadratic_model(tmp_path):
    a = _args(ccs=("scalable",), c_g=(1.0, 1.2, 1.5, 1.8, 2.0))
    sw = sweep_of(a, tmp_path / "s")
    sw.open()  # writes the scenarios (the ideal is computed from them) and the index
    for c in sw.index.cells:
        x = c.c_g_realised
        d = tmp_path / "s" / c.run
        d.mkdir(parents=True)  # RR-6256's Scalable model: 130.4·X² − 234.83·X + 454.83
        t = 130.4 * x * x - 234.83 * x + 454.83
        (d / "metrics.json").write_text(json.dumps(_fake_metrics([t, t], 1.0)))
    fits = {f.model: f for f in analyse(sw, a).fits}
    assert fits["quadratic"].coef == pytest.approx([130.4, -234.83, 454.83])
    assert fits["quadratic"].r2 == pytest.approx(1)
    assert fits["linear"].r2 < 1


def test_results_of_another_format_are_refused(tmp_path):
    p = tmp_path / "results.json"
    p.write_text(json.dumps({"format_version": 1, "points": [], "fits": [], "spacing": []}))
    with pytest.raises(ItbError, match="format 1"):
        Results.load(p)


def test_a_directory_of_other_arguments_is_refused(tmp_path):
    sw = sweep_of(_args(), tmp_path / "s")
    sw.open()
    other = sweep_of(_args(repeat=3), tmp_path / "s")
    with pytest.raises(ScenarioError, match="other arguments"):
        other.open()
    assert isinstance(sw, Sweep)


def test_the_report_has_the_ideal_line_t_vs_r_and_sync_vs_spaced(tmp_path):
    from itb.study.predictability.report import build

    res = _ideal_study(tmp_path)
    index = read_index(tmp_path / "s" / "predictability.json", SweepIndex[PredictabilityCell])
    html = build(
        tmp_path / "s",
        index,
        _args(
            c_g=(0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
            repeat=1,
            capacity=1_000_000_000,
            transfer_time=15,
        ),
        res,
    ).read_text()
    for name in ("tmean-vs-cg", "tmean-vs-r", "cov-vs-r", "spacing-sigma"):
        assert (tmp_path / "s" / "report" / f"{name}.png").stat().st_size > 1000, name
    assert "ideal slope" in html and "Synchronised vs spaced" in html
    # T_mean against R at C_g 2: the ideal ignores the reverse direction, so the three
    # levels give the same ideal T_mean
    at2 = {
        p.reverse: p.ideal_t_mean_s
        for p in res.points
        if p.cc == "reno" and p.c_g == 2.0 and p.spacing_s == 1.0
    }
    assert set(at2) == {0.0, 0.8, 1.5} and max(at2.values()) == pytest.approx(min(at2.values()))


def test_the_key_is_the_one_itb_wrote_before_and_the_options_texts_parse_to_it():
    """The same fields and values as before the arguments were a model (a study begun then
    resumes in runs/predictability-HASH): --scale, --capacity and --transfer-time only as
    the scale they make."""
    a = PredictabilityArgs(
        ccs="reno",
        c_g="0.5,1",
        reverse="0",
        r_levels="",
        sync_c_g=1.0,
        repeat=2,
        transfer_time=2.0,
        capacity="100Mbit",
    )
    key = a.key()
    scale = key.pop("scale")
    assert key == {
        "ccs": ["reno"],
        "c_g": [0.5, 1.0],
        "reverse": [0.0],
        "spacing_s": 1.0,
        "max_span": 0.025,
        "r_levels": [],
        "sync_c_g": 1.0,
        "fit_range": [1.0, 2.0],
        "rtt_ms": 20.0,
        "repeat": 2,
        "seed": 1,
    }
    # 100 Mbit/s given; 30 GB in 240 s at 1 Gbit/s, here in 2 s: a volume factor of 120
    assert scale == {
        "capacity_bps": 100_000_000,
        "factor": None,
        "transfer_time_s": 2.0,
        "source": "--capacity",
        "mode": "rate",
        "volume_factor": 120.0,
    }
    with pytest.raises(ScenarioError, match="give two increasing levels"):
        PredictabilityArgs(fit_range="2,1", capacity="100Mbit")
