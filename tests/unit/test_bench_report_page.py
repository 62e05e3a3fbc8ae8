"""The benchmark's report leads with the answer: in headless Chromium at 1280 × 800 the
verdict matrix is whole on the first screen, the page is no wider than the window (the
table scrolls inside it), no console error; undecided comparisons say why; figures are
titled and never draw an error bar below 0 s."""

from __future__ import annotations

import shutil

import pytest

from itb.analysis.benchmark import BenchComparison, BenchRow
from itb.report.browser import WINDOW, check_page
from itb.study.bench import report_figures as figures
from itb.study.bench.report import build_bench_report, verdict_matrix
from itb.suite import benchmark
from itb.suite.classes import CLASSES
from itb.suite.scaling import make_scale

GBIT = 1_000_000_000


def _comparison(app, cls, tested, verdict, diff, ci, **kw) -> BenchComparison:
    return BenchComparison(
        app=app, variant=None, cls=cls, tested=tested, reference="cubic", n_tested=4,
        n_reference=4, mean_tested=10 * (1 + diff), mean_reference=10.0, sd_tested=0.1,
        sd_reference=0.05, family=8, difference=diff, difference_ci=ci, verdict=verdict, **kw,
    )  # fmt: skip


COMPS = [
    _comparison("BU", "B", "reno", "equivalent", 0.001, (-0.01, 0.012)),
    _comparison("BU", "B", "bbr", "faster", -0.05, (-0.07, -0.03)),
    _comparison("BU", "F", "reno", "inconclusive", 0.01, (-0.05, 0.07),
                reason="9 repetitions per protocol would settle it", stopped_by="budget"),
    _comparison("BU", "F", "bbr", "slower", 0.3, (0.2, 0.4)),
]  # fmt: skip


def test_the_matrix_has_a_row_per_application_and_class_and_says_why_one_is_undecided():
    m = verdict_matrix(COMPS)
    assert m.protocols == ["reno", "bbr"] and [r.key for r in m.rows] == ["BU B", "BU F"]
    assert [c.verdict for c in m.rows[1].cells if c] == ["inconclusive", "slower"]
    [(key, c, why)] = m.undecided
    # CoV = sd / mean: 0.1 / 10.1 and 0.05 / 10
    assert key == "BU F" and why == (
        "CoV reno 0.99 %, cubic 0.5 %; 9 repetitions per protocol would settle it; "
        "the budget stopped its repetitions"
    )


def test_a_rows_repetitions_are_those_its_verdicts_stand_on_as_printed():
    from itb.analysis.benchmark import repetitions_compared

    # the budget ended during the look at 5: cubic had 4, reno 5, so reno vs cubic was
    # looked at with 4 on each side; bbr vs cubic was decided at the look at 3
    at_4 = _comparison("BU", "F", "reno", "inconclusive", 0.01, (-0.05, 0.07))
    at_3 = _comparison("BU", "F", "bbr", "slower", 0.3, (0.2, 0.4))
    at_3.n_tested = at_3.n_reference = 3
    assert repetitions_compared([at_4, at_3]) == 4 and repetitions_compared([]) == 0
    [row] = verdict_matrix([at_4, at_3]).rows
    assert row.repetitions == 4  # what the printed matrix's "reps" says


@pytest.mark.skipif(not shutil.which("chromium"), reason="needs Chromium")
def test_the_verdicts_are_on_the_first_screen_of_a_wide_table(tmp_path):
    scale = make_scale(factor=None, capacity_bps=GBIT, transfer_time_s=10.0)
    classes = tuple(CLASSES[c] for c in "ABCDEF")
    args = benchmark.BenchArgs(("BU", "PA"), classes, ("cubic", "reno", "bbr"), 3, 1, 1.0, scale)
    sweep = benchmark.sweep_of(args, tmp_path / "b")
    sweep.open()  # scenarios written, nothing runs
    rows = benchmark.summarise(sweep).rows  # 36 rows, no repetition yet
    html = build_bench_report(sweep.out, sweep.index, rows, COMPS)
    page = check_page(html, screenshot=tmp_path / "first-screen.png")
    assert page.console == [] and page.broken == 0
    assert page.first_screen(), page  # the matrix ends within the first 800 px
    assert page.window_width == WINDOW[0] and page.page_width is not None
    assert page.page_width <= page.window_width, page  # the table scrolls in its box
    text = html.read_text()
    assert text.index('id="verdicts"') < text.index("<h2>Benchmark table</h2>")
    assert "the budget stopped its repetitions" in text


def test_error_bars_stop_at_0_and_few_values_are_drawn_as_points(tmp_path, monkeypatch):
    drawn = {}

    def bar(self, xs, ys, width, yerr=None, **kw):
        drawn["yerr"] = yerr
        drawn["ys"] = ys

    from matplotlib.axes import Axes

    monkeypatch.setattr(Axes, "bar", bar)
    row = BenchRow.model_validate(
        {"app": "PA", "variant": None, "class": "F", "cc": "cubic", "repetitions": 2,
         "transfers": 2, "failed": 0, "t_mean": 4.0, "t_mean_ci95": 11.8}
    )  # fmt: skip
    figures.tmean_by_protocol([row], tmp_path / "t.png")
    # the interval's half-width is 11.8 s around 4.0 s: the bar goes down to 0, not -7.8
    assert drawn["yerr"] == [[4.0], [11.8]]
    boxes = {}
    monkeypatch.setattr(Axes, "boxplot", lambda self, data, **kw: boxes.setdefault("n", data))
    figures.completion_by_protocol(
        {("PA F", "cubic"): [4.1, 4.2], ("BU F", "cubic"): [1, 2, 3, 4, 5]}, tmp_path / "c.png"
    )
    assert boxes["n"] == [[1, 2, 3, 4, 5]]  # the box from 5 values only
