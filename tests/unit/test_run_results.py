"""metrics.json as a typed model: written and read back with its format version, refused
in another format, and read by attribute by the benchmark, the sweep, the CLI and the run
report."""

import json

import pytest

from itb.analysis.metrics import run_metrics
from itb.analysis.results import OtherFormat
from itb.analysis.run_results import FORMAT_VERSION, Dispatch, RunMetrics
from itb.errors import ItbError
from itb.report.build import write_html
from itb.rundir.layout import RunDirError
from itb.suite import stats
from itb.sweep.index import IndexCell, SweepIndex
from itb.sweep.sweep import Sweep, _took

from .test_metrics import CONTEXT, _run_tables

DISPATCH = {
    "events": 4,
    "p50_ms": 0.01,
    "p99_ms": 0.05,
    "max_ms": 0.06,
    "per_repetition": [
        {"repetition": 1, "events": 2, "p99_ms": 0.05, "max_ms": 0.06},
        {"repetition": 2, "events": 2, "p99_ms": 0.02, "max_ms": 0.02},
    ],
}


def _metrics() -> RunMetrics:
    m = run_metrics(*_run_tables(), CONTEXT)
    m.dispatch = Dispatch.model_validate(DISPATCH)
    return m


def test_round_trip_keeps_the_documented_layout(tmp_path):
    m = _metrics()
    m.save(tmp_path / "metrics.json")
    doc = json.loads((tmp_path / "metrics.json").read_text())
    assert doc["format_version"] == FORMAT_VERSION == 2
    assert set(doc) == {
        "format_version",
        "repetitions",
        "overall",
        "context",
        "dispatch",
        "profiles",
    }
    assert doc["overall"]["completion"]["n"] == 3 and doc["dispatch"] == DISPATCH
    assert doc["context"] == {
        "capacity_bps": 100e6,
        "reverse_capacity_bps": 100e6,
        "mtu": 1500,
        "link": None,
        "payload_share": 1.0,
    }
    assert set(doc["repetitions"][0]) == {
        "repetition",
        "completion",
        "n_corrupt",
        "margins",
        "jain",
        "jain_by_cc",
        "bin_s",
        "efficiency",
        "utilisation",
        "link_utilisation",
        "queueing_delay",
        "fair_share",
        "transfers",
    }
    again = RunMetrics.load(tmp_path / "metrics.json")
    assert again == m
    assert again.repetition(2).completion.t_mean == 0.3 and again.repetition(3) is None


@pytest.mark.parametrize("version", [None, 0, FORMAT_VERSION + 1])
def test_another_format_is_refused_naming_the_file(tmp_path, version):
    doc = _metrics().model_dump(mode="json")
    if version is None:
        del doc["format_version"]  # a run from before formats were recorded
    else:
        doc["format_version"] = version
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(OtherFormat) as e:
        RunMetrics.load(path)
    assert str(path) in str(e.value) and f"format {version!r}" in str(e.value)
    assert f"itb report {tmp_path}" in str(e.value)


def test_unreadable_or_wrong_content_is_bad_input_exit_2(tmp_path):
    path = tmp_path / "metrics.json"
    path.write_text("{")
    with pytest.raises(ItbError, match="cannot read the metrics") as e:
        RunMetrics.load(path)
    assert e.value.exit_code == 2
    doc = _metrics().model_dump(mode="json")
    del doc["overall"]["completion"]
    path.write_text(json.dumps(doc))
    with pytest.raises(ItbError, match=r"not a run's metrics .*overall\.completion") as e:
        RunMetrics.load(path)
    assert not isinstance(e.value, OtherFormat) and str(path) in str(e.value)


def test_benchmark_rows_read_the_model_and_the_sweep_line_says_how_long_a_run_took():
    m = _metrics()
    rows = stats.per_repetition(m)
    # rep 1: a 0.25 s, b 0.5 s, J 0.9; rep 2: a 0.3 s, b failed
    assert [(r["repetition"], r["n"], r["n_failed"], r["t_mean"]) for r in rows] == [
        (1, 2, 0, 0.375),
        (2, 1, 1, 0.3),
    ]
    assert rows[0]["jain"] == pytest.approx(0.9) and rows[1]["sigma_t"] is None
    # a repetition's line: its timeline, zero to end (3.3 s); nothing without them
    assert _took({"zero_ns": 10**9, "end_ns": 4_300_000_000}) == ", 3.3 s"
    assert _took({"status": "ok"}) == ""


def test_sweep_rebuilds_metrics_of_an_older_format(tmp_path):
    sweep = Sweep(tmp_path, "bench", SweepIndex[IndexCell], {}, [], 1, 1)
    cell = IndexCell(name="x")  # its run: cells/x
    run = tmp_path / "cells" / "x"
    run.mkdir(parents=True)
    assert sweep.metrics(cell) is None  # not run yet

    rebuilt = []

    def analyse(d):
        rebuilt.append(d)
        _metrics().save(d / "metrics.json")
        return RunMetrics.load(d / "metrics.json")

    sweep.analyse_run = analyse  # what `drive` gives it (the CLI's itb.report.build.analyse_run)
    old = _metrics().model_dump(mode="json")
    del old["format_version"]
    (run / "metrics.json").write_text(json.dumps(old))
    assert sweep.metrics(cell).overall.completion.n == 3 and rebuilt == [run]
    assert sweep.metrics(cell) == _metrics() and rebuilt == [run]  # current: read as is

    def no_logs(d):
        raise RunDirError(f"{d}: rep-001 is missing")

    sweep.analyse_run = no_logs
    (run / "metrics.json").write_text(json.dumps(old))
    with pytest.raises(
        ItbError,
        match=r"metrics format None.*rebuilding it failed: .*rep-001 is "
        "missing",
    ) as e:
        sweep.metrics(cell)
    assert str(run / "metrics.json") in str(e.value)


def test_run_report_and_cli_summary(tmp_path, capsys):
    from itb.cli.run import _print_metrics

    m = _metrics()
    meta = {
        "scenario": "demo",
        "status": "complete",
        "repetitions": 2,
        "seed": 1,
        "scenario_hash": "0123456789abcdef",
    }
    html = write_html(tmp_path / "report.html", meta, m, []).read_text()
    # all forward completions 0.25, 0.5, 0.3 (b of rep 2 failed): mean 0.35, fair share
    # 0.2 s each: +75 %
    assert "n = 3, mean 0.35 s, min 0.25 s,\nmax 0.50 s" in html
    assert "; 1 not completed" in html
    assert "+75.0 % over 3 completed transfers" in html and "reverse" in html
    assert "Dispatch error over 4 events: p50 0.010 ms" in html
    assert "&#34;t_mean_mean&#34;: 0.3375" in html  # the overall block, as JSON
    _print_metrics(m)
    text = capsys.readouterr().out
    # σ_T of 0.25, 0.5, 0.3 (1/N) = √((0.1² + 0.15² + 0.05²) / 3) = 0.1080; CoV = σ_T / 0.35
    assert "completion time mean 0.35 s (min 0.25, max 0.50, CoV 0.309)" in text
    assert "forward transfers not completed: 1" in text
    assert (
        "fair-share ideal: mean 0.20 s; measured 0.35 s (+75.0 %); the model ignores "
        "the reverse traffic" in text
    )
    assert "dispatch error over 4 events: p50 0.010 ms, p99 0.050 ms, max 0.060 ms" in text


def test_profiles_kept_in_the_report_and_summary(tmp_path, capsys):
    """A profile alone on its link shows its per-step ratios; one that shared the link says
    with what, and shows no ratio."""
    from itb.analysis.steps import ProfileKept, StepRate
    from itb.cli.run import _print_metrics

    def kept(event, shared, ratio):
        step = StepRate(
            at_s=0,
            rate_bps=1e8,
            wire_bps=1.03e8,
            from_s=1,
            to_s=9,
            measured_bps=1.03e8 * (ratio or 1.5),
            ratio=ratio,
        )
        return ProfileKept(
            event=event,
            kind="command",
            repetition=1,
            link="rl-rr",
            direction="forward",
            shared_with=shared,
            steps=[step],
        )

    m = _metrics()
    m.profiles = [kept("alone", [], 0.9876), kept("crowded", ["other"], None)]
    meta = {
        "scenario": "demo",
        "status": "complete",
        "repetitions": 2,
        "seed": 1,
        "scenario_hash": "0123456789abcdef",
    }
    html = write_html(tmp_path / "report.html", meta, m, []).read_text()
    assert "<td>0.9876</td>" in html
    assert "the link also carried other: no step is this event's alone" in html
    _print_metrics(m)
    text = capsys.readouterr().out
    assert "command alone" in text and "0.9876" in text
    assert "shared rl-rr (forward) with other" in text
