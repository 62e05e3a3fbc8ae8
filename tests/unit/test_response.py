"""The response-function study's planning and analysis, on synthetic tcp_info logs; its
typed results, written and read back with a checked format version, and read by the
report."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError

from itb.cc.published import PUBLISHED, highspeed_b, nominal_beta, switch_beta
from itb.errors import ItbError, ScenarioError
from itb.study.response_function import analysis as rfa
from itb.study.response_function import plan as rfp
from itb.study.response_function.args import ResponseArgs
from itb.study.response_function.cells import ResponseCell
from itb.study.response_function.fit import fit_algorithm
from itb.study.response_function.results import FORMAT_VERSION, Event, Fit, Results
from itb.study.response_function.results import Point as PointResult
from itb.sweep.index import SweepIndex
from itb.sweep.sweep import Sweep

REPO = Path(__file__).resolve().parents[2]


def test_the_plan_spans_each_algorithms_window_range_below_the_rate_cap():
    a = ResponseArgs(ccs=("reno", "highspeed", "htcp"), points=4, max_rate_bps=100_000_000)
    pts = rfp.points_of(a)
    assert [p.cc for p in pts] == ["reno"] * 4 + ["highspeed"] * 4 + ["htcp"] * 4
    cap20 = 100e6 * 0.02 / (8 * rfp.MSS)  # 172.7 segments at 20 ms
    cap100 = 100e6 * 0.1 / (8 * rfp.MSS)  # 863.3 at 100 ms: HighSpeed's own RTT
    reno = [p for p in pts if p.cc == "reno"]
    assert reno[0].plan_window == pytest.approx(cap20) and reno[-1].plan_window == pytest.approx(30)
    for p in reno:  # p from Reno's w = 1.22 / sqrt(p), to 3 significant digits
        assert PUBLISHED["reno"].window(p.p) == pytest.approx(p.plan_window, rel=0.01)
    hs = [p for p in pts if p.cc == "highspeed"]
    assert (hs[0].plan_window, hs[-1].plan_window) == (pytest.approx(cap100), pytest.approx(800))
    assert {p.rtt_ms for p in hs} == {100.0} and {p.rtt_ms for p in reno} == {20.0}
    assert rfp._doc(a, hs[0])["bottleneck"]["rtt"] == "100ms"
    # H-TCP has no closed form: planned with HighSpeed's
    ht = [p for p in pts if p.cc == "htcp"]
    assert (ht[0].plan_window, ht[-1].plan_window) == (pytest.approx(cap20), pytest.approx(45))
    for p in ht:
        assert PUBLISHED["highspeed"].window(p.p) == pytest.approx(p.plan_window, rel=0.01)
    assert all(5 <= p.warmup_s <= 15 and 20 <= p.measure_s <= 60 for p in reno + ht)
    assert max(p.measure_s for p in hs) > 60  # HighSpeed measures up to 180 s
    # far above the planned rates: at least 1 Gbit/s
    assert {p.rate_bps for p in pts} == {1_000_000_000}
    # the i-th point of each algorithm has its own loss seed, shared across algorithms
    assert [p.seed for p in reno] == [1, 2, 3, 4] == [p.seed for p in hs]
    assert rfp._doc(a, reno[2])["experiment"]["seed"] == 3


def test_bic_is_planned_where_linuxs_bic_follows_its_slope():
    pts = rfp.points_of(ResponseArgs(ccs=("bic",), points=3))
    assert [round(p.plan_window) for p in pts] == [12000, 7746, 5000]
    assert {p.rtt_ms for p in pts} == {200.0}
    assert pts[0].p == pytest.approx((9.0 / 12000) ** 2, rel=0.01)  # Linux's c, not 15.5
    assert pts[0].rate_bps == 1_000_000_000  # 1.25 x 695 Mbit/s is below the 1 Gbit/s floor
    assert rfp._doc(ResponseArgs(ccs=("bic",)), pts[0])["testbed"]["ack_every_segment"] is True
    assert max(p.measure_s for p in pts) == 300  # 40 loss intervals take longer than 60 s


def test_the_plan_refuses_what_it_cannot_fit():
    with pytest.raises(ValidationError, match="greater than or equal to 3"):  # as --points
        ResponseArgs(ccs=("reno",), points=2)
    with pytest.raises(ScenarioError, match="no loss response function"):
        rfp.points_of(ResponseArgs(ccs=("bbr",)))


def test_the_scenario_of_a_point_drops_data_only():
    a = ResponseArgs(ccs=("scalable",), points=3)
    pt = rfp.points_of(a)[0]
    doc = rfp._doc(a, pt)
    assert doc["bottleneck"]["loss"] == pt.p and doc["bottleneck"]["loss_reverse"] == 0
    assert doc["transfer"][0]["cc"] == "scalable" and doc["experiment"]["interval"] == "5ms"


def log(rows):
    """A sender tcp_info log: (t_s, cwnd, ca_state) rows, 1448-byte segments, 20 ms RTT,
    acked bytes growing with cwnd."""
    acked, out = 0, []
    for i, (t, cwnd, state) in enumerate(rows):
        if i:
            acked += int(cwnd * 1448 * (t - rows[i - 1][0]) / 0.02)
        out.append(
            {
                "t_ns": int(t * 1e9),
                "stream": 0,
                "bytes_acked": acked,
                "bytes_sent": acked,
                "cwnd": cwnd,
                "ssthresh": None,
                "rtt_us": 20_000,
                "total_retrans": 0,
                "snd_mss": 1448,
                "state": "ESTABLISHED",
                "ca_state": state,
            }
        )
    return pd.DataFrame(out)


def test_decrease_events_take_cwnd_before_recovery_and_back_in_open():
    rows = [
        (0.00, 100, "Open"),
        (0.01, 100, "Open"),  # in the warm-up: not counted
        (0.02, 90, "Recovery"),
        (0.03, 50, "Open"),
        (1.00, 200, "Open"),
        (1.01, 200, "Disorder"),
        (1.02, 180, "Recovery"),
        (1.03, 150, "Recovery"),
        (1.04, 100, "Open"),
        (2.00, 120, "Open"),
        (2.01, 1, "Loss"),
        (2.02, 2, "Open"),  # a timeout: skipped
        (3.00, 64, "Open"),
        (3.01, 60, "Recovery"),
        (3.02, 56, "Open"),
    ]
    ev = rfa.decrease_events(log(rows), "reno", after_s=0.5)
    assert [(e["cwnd_before"], e["cwnd_after"]) for e in ev] == [(200, 100), (64, 56)]
    assert [e["beta"] for e in ev] == [0.5, 0.125]
    assert all(e["nominal"] == 0.5 for e in ev)


def test_measure_point_turns_goodput_into_a_window():
    rows = [(i * 0.005, 80, "Open") for i in range(4000)]  # 20 s at 80 segments
    m = rfa.measure_point(log(rows), "scalable", warmup_s=5)
    assert m["window"] == pytest.approx(80, rel=0.01)
    assert m["goodput_bps"] == pytest.approx(80 * 1448 * 8 / 0.02, rel=0.01)
    assert m["measured_s"] == pytest.approx(15, abs=0.01) and m["events"] == []
    assert rfa.measure_point(log(rows[:500]), "scalable", warmup_s=5)["window"] is None


def link(n_ms, lost_at):
    """An emulator log of 1 ms intervals, 10 segments each, one lost at each ms in `lost_at`."""
    return pd.DataFrame(
        [
            {
                "t_ns": i * 1_000_000,
                "packets": 10 - (i in lost_at),
                "drops_loss": int(i in lost_at),
                "drops_queue": 0,
            }
            for i in range(n_ms)
        ]
    )


def test_the_loss_is_what_the_link_applied_over_the_measured_span():
    rows = [(i * 0.005, 80, "Open") for i in range(4000)]  # 20 s, measured from 5 s
    lost = {1000, 2000, *range(6000, 6010), 19_990, 19_999}  # 2 in the warm-up, 1 after the end
    m = rfa.measure_point(log(rows), "scalable", warmup_s=5, link=link(21_000, lost))
    assert m["lost"] == 11 and m["p_link"] == pytest.approx(11 / (10 * 14_996), rel=1e-3)
    # the fit takes what the link applied, else the configured p
    assert point("scalable", 0.01, 80, p_link=m["p_link"]).p_fit == m["p_link"]
    assert point("scalable", 0.01, 80, p_link=None).p_fit == 0.01
    m = rfa.measure_point(log(rows), "scalable", warmup_s=5, link=link(21_000, set()))
    assert (m["lost"], m["p_link"], m["queue_drops"]) == (0, 0, 0)


def point(cc, p, window, status="ok", link_limited=False, **kw) -> PointResult:
    """A measured point as the analysis writes it (20 ms, 1 Gbit/s, repetition 1)."""
    return PointResult(
        name=f"{cc}-p{p:.3g}",
        cc=cc,
        p=p,
        plan_window=window,
        warmup_s=5,
        rtt_ms=20.0,
        rate_bps=1_000_000_000,
        repetition=1,
        status=status,
        window=window,
        link_limited=link_limited,
        **kw,
    )


def event(cc, beta, nominal, nominal_switch=None) -> Event:
    return Event(
        cc=cc,
        p=1e-4,
        t_s=10.0,
        cwnd_before=100.0,
        cwnd_after=100.0 * (1 - beta),
        beta=beta,
        nominal=nominal,
        nominal_switch=nominal_switch,
    )


def test_the_fit_recovers_c_and_d_and_judges_beta():
    ps = np.geomspace(1e-6, 1e-4, 5)  # windows 262–12530: above d_from (300) in the median
    points = [point("highspeed", p, 0.12 / p**0.835) for p in ps]
    points.append(point("highspeed", 1e-6, 1e5, link_limited=True))
    points.append(point("highspeed", 1e-4, 3, status="corrupt window"))
    events = [event("highspeed", highspeed_b(w) + 0.01, highspeed_b(w)) for w in (50, 100, 200)]
    f = fit_algorithm("highspeed", points, events)
    assert f.n == 5 and f.d == pytest.approx(0.835) and f.c == pytest.approx(0.12)
    assert f.d_ok and f.beta_ok and f.beta_error == pytest.approx(0.01)
    assert (f.w_min, f.w_max) == (
        pytest.approx(0.12 / 1e-4**0.835),
        pytest.approx(0.12 / 1e-6**0.835),
    )
    assert (f.c_published, f.d_published, f.d_from) == (0.12, 0.835, 300)
    events = [event("highspeed", 0.5, highspeed_b(200))]
    assert fit_algorithm("highspeed", points, events).beta_ok is False
    assert fit_algorithm("htcp", points, []).d is None  # no points of its own
    # below the windows where Linux's HighSpeed follows the slope: measured, not judged
    low = [p.model_copy(update={"window": p.window / 20}) for p in points]
    f = fit_algorithm("highspeed", low, [])
    assert f.d == pytest.approx(0.835) and f.d_ok is None


def test_nominal_decreases_are_linuxs():
    assert nominal_beta("reno", 500) == 0.5
    # BIC: ssthresh = cwnd * 819 / 1024 above low_window = 14, halving at or below
    assert (nominal_beta("bic", 14), nominal_beta("bic", 15)) == (
        0.5,
        pytest.approx(0.2002, abs=1e-4),
    )
    assert (nominal_beta("scalable", 8), nominal_beta("scalable", 500)) == (0.125, 0.125)
    # HighSpeed: the table row holding cwnd (row 1 is 39..118: 112/256)
    assert nominal_beta("highspeed", 38) == 0.5 and nominal_beta("highspeed", 100) == 112 / 256
    assert nominal_beta("htcp", 100, 20_000, 21_000) == pytest.approx(0.2)  # no queue
    assert nominal_beta("htcp", 100, 20_000, 80_000) == pytest.approx(0.5)  # clamped
    assert nominal_beta("htcp", 100) is None
    assert nominal_beta("cubic", 100) == 0.3


def test_highspeed_b_is_the_rfcs():
    from itb.cc import highspeed

    for w in (39, 100, 1000, 83000):
        assert highspeed_b(w) == pytest.approx(highspeed.b_of(w))
    assert highspeed_b(83000) == pytest.approx(0.1) and highspeed_b(20) == 0.5


def test_a_window_range_given_applies_to_every_algorithm():
    a = ResponseArgs(ccs=("highspeed", "reno"), points=3, rtt_ms=50, windows=(120, 1000))
    pts = rfp.points_of(a)
    assert {round(p.plan_window) for p in pts} == {120, 346, 1000}
    assert ResponseArgs(ccs=("reno",)).key() != a.key()


def test_a_point_ends_with_its_measured_span(tmp_path):
    a = ResponseArgs(ccs=("highspeed",), points=3)
    pt = rfp.points_of(a)[0]
    doc = rfp._doc(a, pt)
    [clock] = doc["udp"]
    assert clock["duration"] == f"{int(pt.warmup_s + pt.measure_s + rfp.SETUP_S)}s"
    assert (clock["src"], clock["dst"]) == ("r1", "l1")  # the reverse direction: no loss
    assert doc["transfer"][0]["wait"] is False  # stopped when the clock ends
    import tomli_w

    from itb.scenario.scenario import load_scenario

    (tmp_path / "p.toml").write_text(tomli_w.dumps(doc))
    load_scenario(tmp_path / "p.toml")  # a valid scenario
    rate = pt.plan_window * rfp.MSS * 8 / (pt.rtt_ms / 1e3)
    assert pt.volume >= 3 * rate / 8 * (pt.warmup_s + pt.measure_s)  # never done early


def test_the_report_of_a_partial_study_renders(tmp_path):
    from itb.study.response_function.report import build

    a = ResponseArgs(ccs=("reno",), points=3)
    state = {"digest": "x", "status": "incomplete", "created": "now", "args": a.key(), "cells": []}
    done = point(
        "reno",
        1e-3,
        38.0,
        p_link=1.1e-3,
        lost=40,
        measured_s=20.0,
        goodput_bps=2.2e7,
        published_window=38.6,
        mean_cwnd=40.0,
        loss_seen=1e-3,
        events=30,
        beta=0.5,
    )
    not_run = PointResult(
        name="reno-p0.0001",
        cc="reno",
        p=1e-4,
        plan_window=122.0,
        warmup_s=5,
        rtt_ms=20.0,
        rate_bps=1_000_000_000,
        repetition=1,
        status="not run",
        window=None,
    )
    fits = [fit_algorithm("reno", [done, not_run], [])]
    res = Results(points=[done, not_run], fits=fits, events=[])
    path = build(tmp_path, state, a, res)
    html = path.read_text()
    assert "not run" in html
    assert "each algorithm&#39;s own" in html or "each algorithm's own" in html


def test_htcp_events_are_compared_with_the_nearer_of_its_two_rules():
    # no queue: the RTT rule gives 0.2; the bandwidth switch gives 1/2
    ev = [event("htcp", b, 0.2, switch_beta("htcp")) for b in (0.5, 0.5, 0.21, 0.5)]
    assert [e.nearer_nominal for e in ev] == [0.5, 0.5, 0.2, 0.5]
    f = fit_algorithm("htcp", [], ev)
    assert f.beta_ok and f.beta_nominal == 0.5 and f.switch_share == 0.75
    # a decrease neither rule gives is caught
    ev = [e.model_copy(update={"beta": 0.35}) for e in ev]
    assert fit_algorithm("htcp", [], ev).beta_ok is False
    # the other algorithms have one rule
    assert switch_beta("reno") is None
    f = fit_algorithm("reno", [], [event("reno", 0.5, 0.5)])
    assert f.beta_ok and f.switch_share is None


# ---- the typed results ---------------------------------------------------------------


def results() -> Results:
    pts = [
        point("reno", p, 1.22 / p**0.5, p_link=p * 1.1, lost=40, events=2, beta=0.5)
        for p in (1e-4, 1e-3, 1e-2)
    ]
    pts.append(
        PointResult(
            name="reno-p0.05",
            cc="reno",
            p=0.05,
            plan_window=5.5,
            warmup_s=5,
            rtt_ms=20.0,
            rate_bps=1_000_000_000,
            repetition=1,
            status="not run",
            window=None,
        )
    )
    ev = [event("reno", 0.5, 0.5), event("reno", 0.45, 0.5)]
    return Results(points=pts, fits=[fit_algorithm("reno", pts, ev)], events=ev)


def test_results_round_trip_through_json(tmp_path):
    res = results()
    res.save(tmp_path / "results.json")
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["format_version"] == FORMAT_VERSION == Results.FORMAT
    assert len(doc["points"]) == 4 and len(doc["events"]) == 2
    assert doc["points"][3]["window"] is None and doc["points"][3]["status"] == "not run"
    back = Results.load(tmp_path / "results.json")
    assert back == res
    assert back.points[0].p_fit == pytest.approx(1.1e-4)  # what the link applied
    assert back.fits[0].n == 3 and back.fits[0].d_ok is True


@pytest.mark.parametrize("version", [FORMAT_VERSION + 1, 0, None])
def test_results_of_another_format_are_refused(tmp_path, version):
    doc = results().model_dump(mode="json")
    if version is None:
        del doc["format_version"]
    else:
        doc["format_version"] = version
    (tmp_path / "results.json").write_text(json.dumps(doc))
    with pytest.raises(ItbError, match="results format"):
        Results.load(tmp_path / "results.json")


def test_the_fit_carries_what_the_report_and_the_cli_show():
    f = results().fits[0]
    # windows 1.22/sqrt(p) at p_link = 1.1 p: w = (1.22·sqrt(1.1)) / p_link^0.5, exactly
    assert f.d == pytest.approx(0.5) and f.c == pytest.approx(1.22 * 1.1**0.5)
    assert f.r2 == pytest.approx(1.0) and f.d_ci95 == pytest.approx(0, abs=1e-9)
    assert (f.c_published, f.d_published, f.beta_published) == (1.22, 0.5, "1/2")
    assert (f.w_min, f.w_max) == (pytest.approx(12.2), pytest.approx(122))
    assert f.rtt_ms == 20.0 and f.events == 2
    # β: median of 0.5 and 0.45; error: median of 0 and −0.05
    assert (f.beta, f.beta_nominal, f.beta_error) == (
        pytest.approx(0.475),
        0.5,
        pytest.approx(-0.025),
    )
    assert f.beta_ok is True and f.switch_share is None
    assert set(Fit.model_fields) >= {
        "cc",
        "n",
        "d",
        "d_ci95",
        "d_ok",
        "d_published",
        "c",
        "c_published",
        "r2",
        "beta",
        "beta_ok",
        "beta_nominal",
        "events",
    }


def test_the_report_reads_the_typed_results(tmp_path):
    from itb.study.response_function.report import build

    res = results()
    a = ResponseArgs(ccs=("reno",), points=3)
    index = SweepIndex[ResponseCell](
        format=1,
        kind="response-function",
        digest="x",
        args=a.key(),
        created="now",
        cells=[],
        order=[],
        status="complete",
    )
    html = build(tmp_path, index, a, res).read_text()
    assert "0.500 ± 0.000" in html  # d ± its interval
    assert f"{res.fits[0].c:.3f}" == "1.280" and "1.280" in html
    assert "12–122" in html  # the fitted windows
    assert "1.25× each algorithm" in html  # the default bottleneck (LINK_HEADROOM)
    assert html.count(">not run<") == 1
    assert (tmp_path / "report" / "response-loglog.png").exists()
    assert (tmp_path / "report" / "decrease.png").exists()


def test_analyse_builds_the_typed_results_from_a_run_directory(tmp_path):
    """One point measured (20 s of tcp_info at 80 segments, two halvings after the
    warm-up, the link's loss log), one not run."""
    cell = ResponseCell(
        name="reno-p0.0001",
        cc="reno",
        p=1e-4,
        plan_window=122.0,
        warmup_s=5.0,
        measure_s=20.0,
        volume=10_000_000,
        rtt_ms=20.0,
        rate_bps=1_000_000_000,
        run="cells/a",
    )
    sweep = Sweep(tmp_path, "response-function", SweepIndex[ResponseCell], {}, [], 1, 1)
    sweep.index = SweepIndex[ResponseCell](
        format=1,
        kind="response-function",
        digest="x",
        args={},
        created="now",
        order=[],
        cells=[cell, cell.model_copy(update={"name": "reno-p0.001", "p": 1e-3, "run": "cells/b"})],
        status="complete",
    )
    rep = tmp_path / "cells" / "a" / "rep-001"
    (rep / "nodes" / "l1").mkdir(parents=True)
    (rep / "result.json").write_text('{"status": "ok"}')
    rows = [(i * 0.005, 80, "Open") for i in range(4000)]
    for i in (1600, 2400):  # at 8 s and 12 s: Recovery, back in Open at 40
        rows[i] = (rows[i][0], 80, "Recovery")
        rows[i + 1] = (rows[i + 1][0], 40, "Open")
    log(rows).to_csv(rep / "nodes" / "l1" / "rf.send.csv", index=False)
    (rep / "emulator" / "bn").mkdir(parents=True)
    lost = {2000, *range(6000, 20_000, 1000)}  # 1 ms intervals of 10 segments: 1 in the warm-up
    pd.DataFrame(
        [
            {
                "t_ns": i * 1_000_000,
                "packets": 10 - (i in lost),
                "drops_loss": int(i in lost),
                "drops_queue": 0,
            }
            for i in range(20_000)
        ]
    ).to_csv(rep / "emulator" / "bn" / "linkem-ab.csv", index=False)

    res = rfa.analyse(sweep, ResponseArgs(ccs=("reno",), points=3))
    ok, not_run = res.points
    # measured from 5 s to 19.995 s: 2999 intervals of 5 ms, 2997 at 80 segments, 2 at 40
    assert ok.status == "ok" and ok.measured_s == pytest.approx(14.995)
    # (cwnd/4 segments acked per 5 ms at 20 ms; log() rounds each step down to whole bytes)
    assert ok.window == pytest.approx((2997 * 80 + 2 * 40) / 4 * 0.02 / 14.995, abs=3e-3)
    assert ok.goodput_bps == pytest.approx((2997 * 80 + 2 * 40) / 4 * 1448 * 8 / 14.995, rel=1e-4)
    # the link: 14 losses over the 14 996 intervals of the span
    assert (ok.lost, ok.queue_drops) == (14, 0) and ok.p_link == pytest.approx(14 / 149_960)
    assert ok.published_window == pytest.approx(1.22 * (149_960 / 14) ** 0.5)
    assert (ok.events, ok.beta, ok.link_limited, ok.rtt_ms) == (2, 0.5, False, 20.0)
    assert not_run.status == "not run" and not_run.window is None and not_run.rtt_ms == 20.0
    assert [(e.t_s, e.cwnd_before, e.cwnd_after, e.beta, e.p) for e in res.events] == [
        (8.0, 80, 40, 0.5, 1e-4),
        (12.0, 80, 40, 0.5, 1e-4),
    ]
    [f] = res.fits
    assert f.n == 1 and f.d is None and f.events == 2 and f.beta_ok is True
    # the files: results.json read back as the same results; the CSVs with every field
    assert Results.load(tmp_path / "results.json") == res
    points = pd.read_csv(tmp_path / "points.csv")
    assert list(points.columns) == list(PointResult.model_fields) and len(points) == 2
    events = pd.read_csv(tmp_path / "events.csv")
    assert list(events.columns) == list(Event.model_fields)
    assert list(events["beta"]) == [0.5, 0.5]


def test_the_cli_table_reads_the_typed_fits(monkeypatch, tmp_path):
    """`itb study response-function` prints the fits of the study's typed results (the
    sweep's life replaced: nothing runs)."""
    from typer.testing import CliRunner

    from itb.cli import app  # with its commands registered
    from itb.sweep import sweep

    asked = []

    def drive(sw, analyse, report, say, tick, analyse_run):
        asked.append(sw)
        return sweep.Outcome(sw.out, "complete", results(), sw.out / "report" / "report.html")

    monkeypatch.setattr(sweep, "drive", drive)
    r = CliRunner().invoke(
        app, ["study", "response-function", "--cc", "reno", "--points", "3", "--out", str(tmp_path)]
    )
    assert r.exit_code == 0, r.output
    assert asked[0].key["ccs"] == ["reno"] and asked[0].key["points"] == 3
    assert len(asked[0].cells) == 3 and all(c.name.startswith("reno-p") for c in asked[0].cells)
    row = next(line for line in r.output.splitlines() if "reno" in line)
    # d ± its interval and the verdict, c measured (1.22·sqrt(1.1)) and published, β
    for cell in ("0.5 ± 0 ✓", "1.28", "1.22", "0.475 ✓"):
        assert cell in row
