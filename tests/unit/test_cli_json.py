"""`--json` on every command that prints a result (docs/cli.md): one JSON document on
stdout, the typed results in the form their files hold. The commands that run experiments
are checked through the documents they build from their result models (nothing is run);
the others end to end where no root is needed."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from itb.analysis.benchmark import BenchRow
from itb.analysis.compare import Comparison
from itb.analysis.profile_model import Sample, fit
from itb.cli import app, run, studies
from itb.cli.output import jsonable, legacy_args
from itb.engine.runner import RunResult
from itb.study.bench import summary as bench
from itb.study.registry import Line, Table
from itb.sweep.sweep import Outcome

from .test_run_results import _metrics

# Commands that print no result of their own: a server, and one that asks at the terminal
WITHOUT = {("serve",), ("inventory", "trust")}


def leaves() -> list[tuple[str, ...]]:
    found = []

    def walk(cmd, path):
        subs = getattr(cmd, "commands", None)
        if subs is None:
            found.append(path)
        for name, sub in (subs or {}).items():
            walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return sorted(found)


def strict(doc) -> object:
    """The document as a strict JSON reader gets it (no NaN, no Infinity)."""
    return json.loads(json.dumps(jsonable(doc), allow_nan=False))


def test_every_command_that_prints_a_result_takes_json():
    commands = typer.main.get_command(app)
    lacking = []
    for path in leaves():
        cmd = commands
        for name in path:
            cmd = cmd.commands[name]
        if path not in WITHOUT and "--json" not in {o for p in cmd.params for o in p.opts}:
            lacking.append(" ".join(path))
    assert not lacking, f"no --json: {lacking}"
    assert len(leaves()) >= 30


def test_a_value_that_is_not_a_number_becomes_null_and_models_keep_their_aliases():
    @dataclass
    class Point:
        at: Path
        value: float

    row = BenchRow(
        app="BU", variant=None, cls="F", cc="cubic", repetitions=2, transfers=10, failed=0
    )
    row.t_mean, row.cov = 4.25, math.nan
    doc = strict({"p": Point(Path("runs/x"), math.inf), "row": row, "t": (1, 2.5)})
    assert doc["p"] == {"at": "runs/x", "value": None}
    assert doc["row"]["class"] == "F" and "cls" not in doc["row"]  # table.json's key
    assert doc["row"]["t_mean"] == 4.25 and doc["row"]["cov"] is None
    assert doc["t"] == [1, 2.5]


def test_bench_json_holds_the_rows_comparisons_and_paths_of_the_table():
    row = BenchRow(app="BU", variant=None, cls="B", cc="reno", repetitions=2, transfers=8, failed=1)
    row.t_mean, row.t_mean_ci95 = 6.5, 0.25
    comparison = Comparison(
        tested="reno",
        reference="cubic",
        n_tested=2,
        n_reference=2,
        mean_tested=6.5,
        mean_reference=6.0,
        difference=6.5 / 6.0 - 1,
    )
    out = Path("runs/bench-abc")
    result = bench.BenchResult(out, "complete", [row], [comparison], out / "report.html", ["w1"])
    doc = strict(bench.bench_document(result, ["K = 1 for the data-centre classes"], True))
    assert doc["out"] == "runs/bench-abc" and doc["status"] == "complete"
    assert doc["signal"] is None
    assert doc["table"] == "runs/bench-abc/table.csv"
    assert doc["report"] == "runs/bench-abc/report.html"
    (r,) = doc["rows"]
    assert (r["app"], r["class"], r["cc"], r["failed"]) == ("BU", "B", "reno", 1)
    assert (r["t_mean"], r["t_mean_ci95"]) == (6.5, 0.25)
    (c,) = doc["comparisons"]
    assert (c["tested"], c["reference"]) == ("reno", "cubic")
    assert c["difference"] == pytest.approx(1 / 12)  # 6.5 s against 6.0 s: +8.33 %
    assert doc["axes"] == ["K = 1 for the data-centre classes"]
    assert doc["quick"] == bench.QUICK_SHORTENS and doc["warnings"] == ["w1"]


def test_run_json_holds_each_repetition_and_the_metrics_as_metrics_json(tmp_path):
    metrics = _metrics()
    reps = [{"status": "ok", "reason": None}, {"status": "failed", "reason": "flow exited 1"}]
    result = RunResult(tmp_path / "run", "complete", reps, metrics, None)
    doc = strict(run.run_document(result))
    assert doc["run_dir"] == str(tmp_path / "run") and doc["status"] == "complete"
    assert doc["repetitions"][1] == {"status": "failed", "reason": "flow exited 1"}
    metrics.save(tmp_path / "metrics.json")
    on_disk = json.loads((tmp_path / "metrics.json").read_text())
    assert doc["metrics"] == strict(on_disk)  # the same document, NaN as null
    assert doc["metrics"]["format_version"] == metrics.FORMAT


def test_study_json_holds_the_results_and_the_tables_printed():
    outcome = Outcome(Path("runs/streams-1"), "incomplete", _metrics(), Path("r.html"), 2)
    shown = [
        Table(title="T by streams", columns=["streams", "T"], rows=[["1", "4.2"]]),
        Line(text="reno fastest"),
        Line(text="1 cell not run", err=True),
    ]
    doc = strict(studies.study_document(("study", "streams"), outcome, shown))
    assert doc["study"] == "study streams"
    assert (doc["status"], doc["signal"]) == ("incomplete", 2)
    assert doc["results_file"] == "runs/streams-1/results.json"
    assert doc["results"]["format_version"] == _metrics().FORMAT
    assert doc["tables"] == [
        {"title": "T by streams", "columns": ["streams", "T"], "rows": [["1", "4.2"]]}
    ]
    assert doc["lines"] == ["reno fastest"]  # stderr's line stays on stderr


def test_profile_predict_json_by_hand(tmp_path):
    # goodput = 0.9·X − 1 Mbit/s, throughput = X + 2 Mbit/s (test_profile_model's model)
    s = [
        Sample(
            rtt_ms=20,
            input_bps=x,
            goodput_bps=0.9 * x - 1e6,
            throughput_bps=x + 2e6,
            throughput_max_bps=x,
        )
        for x in (1e8, 2e8, 3e8)
    ]
    fit(s, "nocc-pacing", linear_max_bps=1e9).save(tmp_path / "m.json")
    args = ["profile", "predict", "0:102Mbit,5:202Mbit", "--volume", "100MB", "--rtt", "20ms"]
    res = CliRunner().invoke(app, [*args, "--model", str(tmp_path / "m.json"), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["mechanism"] == "nocc-pacing" and doc["rtt_ms"] == 20
    assert [(r["from_s"], r["input_bps"]) for r in doc["steps"]] == [(0, 100e6), (5, 200e6)]
    assert doc["steps"][1]["expected_goodput_bps"] == pytest.approx(0.9 * 200e6 - 1e6)
    assert doc["scenario_profile"] == [[0, "100.000Mbit"], [5, "200.000Mbit"]]
    assert doc["volume_bytes"] == 100_000_000 and doc["extrapolated"] is False
    # 89 Mbit/s of goodput for 5 s (55.625 MB), then 179 Mbit/s for the 44.375 MB left
    assert doc["completion_s"] == pytest.approx(5 + 44.375e6 * 8 / 179e6, abs=1e-6)


def test_testbed_plan_json_lists_every_node_and_its_commands():
    res = CliRunner().invoke(app, ["testbed", "plan", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert (doc["testbed"], doc["kind"]) == ("default", "dumbbell")
    first = doc["nodes"][0]
    assert first["steps"][0]["argv"] == ["ip", "netns", "add", first["netns"]]
    emulators = [s for n in doc["nodes"] for s in n["steps"] if "config" in s]
    assert emulators and all(s["config_path"] for s in emulators)


@pytest.mark.parametrize(
    "given,expected",
    [
        # the form before --json meant stdout: the calibration written to a file
        (
            ["calibrate", "--json", "runs/calibration.json"],
            ["calibrate", "--json-file", "runs/calibration.json"],
        ),
        (
            ["-q", "calibrate", "tb.toml", "--json", "c.json"],
            ["-q", "calibrate", "tb.toml", "--json-file", "c.json"],
        ),
        (["calibrate", "--json=c.json"], ["calibrate", "--json-file=c.json"]),
        # --json as every command has it: a testbed file after it is calibrate's argument
        (["calibrate", "--json", "tb.toml"], ["calibrate", "--json", "tb.toml"]),
        (["calibrate", "--json"], ["calibrate", "--json"]),
        (["run", "--json", "x.json"], ["run", "--json", "x.json"]),
    ],
)
def test_calibrate_json_with_a_file_still_writes_the_file(given, expected):
    args, note = legacy_args(given)
    assert args == expected
    assert (note is not None) == (args != given)
