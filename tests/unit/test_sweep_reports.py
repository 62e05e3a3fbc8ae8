"""A sweep measures its cells at each look and when it stops (metrics, no figures; only
where a repetition ended after them) and draws each cell's report once, when it stops
running it: only the cells whose report is older than their metrics.json (or missing);
one that cannot be drawn is said, the others still drawn."""

from __future__ import annotations

import os

from itb.study.profile_margin.cells import MarginCell
from itb.sweep.index import SweepIndex
from itb.sweep.sweep import Sweep, SweepCell

from .test_sweep_index import MARGIN_INFO as INFO  # a margin cell's labels


def _sweep(tmp_path, names):
    cells = [SweepCell(MarginCell(name=n, **INFO), {}) for n in names]
    return Sweep(tmp_path / "s", "profile-margin", SweepIndex[MarginCell], {}, cells, 1, 1)


def _files(sweep, name, metrics_at: int | None, report_at: int | None):
    run = sweep.run_dir(name)
    (run / "report").mkdir(parents=True)
    for path, at in (
        (run / "metrics.json", metrics_at),
        (run / "report" / "report.html", report_at),
    ):
        if at is not None:
            path.write_text("{}")
            os.utime(path, ns=(at, at))


def test_only_cells_whose_report_is_older_than_their_metrics_are_drawn_once(tmp_path):
    sweep = _sweep(tmp_path, ["new", "drawn", "never-ran", "no-report"])
    _files(sweep, "new", metrics_at=2_000, report_at=1_000)  # ran after its last report
    _files(sweep, "drawn", metrics_at=1_000, report_at=2_000)
    _files(sweep, "never-ran", metrics_at=None, report_at=None)
    _files(sweep, "no-report", metrics_at=1_000, report_at=None)
    calls, said = [], []
    sweep.analyse_run = lambda run, figures=True: calls.append((run.name, figures))
    sweep.draw_reports(said.append)
    assert calls == [("new", True), ("no-report", True)]
    assert said == ["drawing the reports of 2 cell(s)"]


def test_a_report_that_cannot_be_drawn_is_said_and_the_next_is_still_drawn(tmp_path):
    sweep = _sweep(tmp_path, ["a", "b"])
    _files(sweep, "a", metrics_at=2, report_at=None)
    _files(sweep, "b", metrics_at=2, report_at=1)
    calls, said = [], []

    def analyse(run, figures=True):
        calls.append(run.name)
        if run.name == "a":
            raise ValueError("no samples")

    sweep.analyse_run = analyse
    sweep.draw_reports(said.append)
    assert calls == ["a", "b"]
    assert said[1] == "warning: the report of a could not be drawn: no samples"


def test_during_the_sweep_each_run_is_measured_without_figures(tmp_path):
    sweep = _sweep(tmp_path, ["a"])
    seen = []
    sweep.analyse_run = lambda run, figures=True: seen.append(figures)
    measure = sweep._measure()
    assert measure is not None
    measure(tmp_path)
    assert seen == [False]


def _commit(sweep, name, rep: int, at: int):
    marker = sweep.run_dir(name) / f"rep-{rep:03d}" / "result.json"
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text("{}")
    os.utime(marker, ns=(at, at))


def test_metrics_are_made_again_only_where_a_repetition_ended_after_them(tmp_path):
    sweep = _sweep(tmp_path, ["ran", "measured", "no-run", "first"])
    _files(sweep, "ran", metrics_at=1_000, report_at=None)
    _commit(sweep, "ran", 1, at=500)
    _commit(sweep, "ran", 2, at=1_500)  # ended after the metrics
    _files(sweep, "measured", metrics_at=2_000, report_at=None)
    _commit(sweep, "measured", 1, at=1_500)
    _files(sweep, "no-run", metrics_at=None, report_at=None)
    _files(sweep, "first", metrics_at=None, report_at=None)
    _commit(sweep, "first", 1, at=100)
    calls, said = [], []
    sweep.analyse_run = lambda run, figures=True: calls.append((run.name, figures))
    sweep.measure(said.append)
    assert calls == [("ran", False), ("first", False)] and said == []


def test_a_cell_that_ran_since_its_report_is_analysed_once_with_its_figures(tmp_path):
    sweep = _sweep(tmp_path, ["ran", "same"])
    _files(sweep, "ran", metrics_at=1_000, report_at=1_100)
    _commit(sweep, "ran", 2, at=2_000)  # a repetition ended after both
    _files(sweep, "same", metrics_at=1_000, report_at=1_100)
    _commit(sweep, "same", 1, at=900)
    calls, said = [], []
    sweep.analyse_run = lambda run, figures=True: calls.append((run.name, figures))
    sweep.draw_reports(said.append)
    # metrics and figures in one analysis, not the metrics first and then both again
    assert calls == [("ran", True)] and said == ["drawing the reports of 1 cell(s)"]
