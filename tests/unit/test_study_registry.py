"""The studies' registry: every study is one subpackage of itb.study, found by scanning the
package; its command, options, run, results and report come from that subpackage alone.
A toy study written into a directory of its own is found, gets its `itb study toy`
command, and runs on a fake sweep (no engine, no root) to its results and its report."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import itb.study
from itb.cli import studies as cli_studies
from itb.study.args import option_of
from itb.study.registry import Study, studies

REPO = Path(__file__).resolve().parents[2]

TOY = {
    "__init__.py": '''
        """A toy study: one cell per word, each worth 10 × the level."""

        from __future__ import annotations

        from itb.study.toy.args import ToyArgs


        class Toy:
            name = ("study", "toy")
            kind = "toy"
            rank = 99
            group_help = None
            Args = ToyArgs
            help = """Count the words, ten times the level each."""

            def plan(self, args, out, say):
                from itb.study.toy.plan import sweep_of

                say(f"planning {len(args.words)} cells")
                return sweep_of(args, out)

            def analyse(self, sweep, args):
                from itb.study.toy.plan import analyse

                return analyse(sweep)

            def conclude(self, outcome, args):
                from itb.study.registry import Table

                r = outcome.results
                return [Table(title=f"toy ({outcome.status})", columns=["cells", "total"],
                              rows=[[str(r.cells), str(r.total)]])]


        STUDY = Toy()
        ''',
    "args.py": """
        from __future__ import annotations

        from typing import Annotated

        from pydantic import Field

        from itb.study import options
        from itb.study.args import Option, OutDir, Seed, StudyArgs


        class ToyArgs(StudyArgs):
            words: Annotated[tuple[str, ...], Option("--words", options.texts)] = Field(
                "a,b,c", validate_default=True, description="Words, comma-separated.")
            level: Annotated[int, Option("--level")] = Field(
                2, ge=1, le=9, description="How much a word is worth, in tens.")
            out_dir: OutDir = Field(None, description="Study directory.")
            seed: Seed = Field(1, description="Seed of the run order.")
        """,
    "plan.py": '''
        from __future__ import annotations

        import json

        from itb.analysis.results import VersionedResults
        from itb.sweep.sweep import Sweep, SweepCell
        from itb.sweep.index import IndexCell, SweepIndex

        DOC = {"testbed": {"name": "toy"}, "dumbbell": {"pairs": 1},
               "transfer": [{"src": "l1", "dst": "r1", "volume": "1MB"}]}


        class ToyResults(VersionedResults):
            cells: int
            total: int


        class ToyCell(IndexCell):
            worth: int


        class FakeSweep(Sweep[ToyCell]):
            """Runs nothing: each cell's run directory gets its word's worth."""

            def run(self, say, tick):
                for c in self.index.cells:
                    d = self.out / c.run
                    d.mkdir(parents=True, exist_ok=True)
                    (d / "worth.json").write_text(json.dumps({"worth": c.worth}))
                return "complete"


        def sweep_of(a, out):
            cells = [SweepCell(ToyCell(name=w, worth=10 * a.level), DOC) for w in a.words]
            return FakeSweep(out, "toy", SweepIndex[ToyCell], a.key(), cells, 1, a.seed)


        def analyse(sweep):
            worth = [json.loads((sweep.out / c.run / "worth.json").read_text())["worth"]
                     for c in sweep.index.cells]
            res = ToyResults(cells=len(worth), total=sum(worth))
            res.save(sweep.out / "results.json")
            return res
        ''',
    "report.py": """
        from __future__ import annotations

        from itb.draw.page import study_report


        def build(out, index, args, res):
            return study_report(__package__, out, index=index, args=args, res=res)
        """,
    "report.html.j2": """
        {% extends "base.html.j2" %}
        {% block body %}
        <h1>Toy {{ index.digest }}</h1>
        <p>words {{ args.words|join("+") }}; total {{ res.total }} over {{ res.cells }} cells</p>
        {% endblock %}
        """,
}


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy study's subpackage in a directory of its own, seen as part of itb.study
    (as a subpackage added to the source tree would be); nothing else is changed."""
    pkg = tmp_path / "pkgs" / "toy"
    pkg.mkdir(parents=True)
    for name, text in TOY.items():
        (pkg / name).write_text(textwrap.dedent(text).lstrip())
    monkeypatch.setattr(itb.study, "__path__", [*itb.study.__path__, str(pkg.parent)])
    monkeypatch.setenv("ITB_STATE_DIR", str(tmp_path / "state"))  # the sweep's lock
    monkeypatch.chdir(tmp_path)
    yield pkg
    for mod in [m for m in sys.modules if m == "itb.study.toy" or m.startswith("itb.study.toy.")]:
        del sys.modules[mod]


def app_with_studies() -> tuple[typer.Typer, list]:
    """A fresh `itb` with an empty `study` group, the registry's commands added to it."""
    root, study_group = typer.Typer(), typer.Typer()
    root.add_typer(study_group, name="study")
    groups = {(): root, ("study",): study_group, ("profile",): typer.Typer()}
    root.add_typer(groups[("profile",)], name="profile")
    return root, cli_studies.scan(groups)


def test_the_registry_finds_the_benchmark_and_the_fifteen_studies_by_their_commands():
    found = {r.study.name: r.package for r in studies()}
    assert found == {
        ("bench",): "itb.study.bench",
        ("study", "predictability"): "itb.study.predictability",
        ("study", "friendliness"): "itb.study.friendliness",
        ("study", "response-function"): "itb.study.response_function",
        ("profile", "calibrate"): "itb.study.profile_calibration",
        ("study", "profile", "margin"): "itb.study.profile_margin",
        ("study", "profile", "pair"): "itb.study.profile_pair",
        ("study", "profile", "transition"): "itb.study.profile_transition",
        ("study", "profile", "stage0"): "itb.study.profile_stage0",
        ("study", "rtt-sweep"): "itb.study.rtt_sweep",
        ("study", "incremental"): "itb.study.incremental",
        ("study", "pacing-vs-tbf"): "itb.study.pacing_tbf",
        ("study", "streams"): "itb.study.streams",
        ("study", "multiplexing"): "itb.study.multiplexing",
        ("study", "service"): "itb.study.service",
        ("study", "crossval"): "itb.study.crossval",
    }
    assert all(isinstance(r.study, Study) for r in studies())


def test_a_parsed_options_default_is_its_text_validated_as_a_given_one():
    """The help shows the text the user would type; the field is typed as the parsed
    value, so its default says it is validation's input (`validate_default=True`)."""
    for r in studies():
        for name, field in r.study.Args.model_fields.items():
            opt = option_of(field)
            default = field.get_default()
            if opt is None or opt.parse is None or default is None:
                continue
            assert isinstance(default, str) and field.validate_default, (r.package, name)
            opt.parse(default, opt.name)


def test_every_study_ships_its_template_next_to_its_report():
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["itb.study"]
    for r in studies():
        pkg = REPO / "src" / Path(*r.package.split("."))
        assert (pkg / "report.py").exists() and (pkg / "report.html.j2").exists(), r.package
        rel = f"{pkg.name}/report.html.j2"  # package data of itb.study, as setuptools sees it
        assert any(fnmatch.fnmatch(rel, p) for p in patterns), rel


def test_a_toy_study_added_as_one_subpackage_gets_its_command_and_its_options(toy):
    root, found = app_with_studies()
    assert ("study", "toy") in {r.study.name for r in found}
    res = CliRunner().invoke(root, ["study", "toy", "--help"], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "Count the words, ten times the level each." in out  # the study's help
    for text in (
        "--words",
        "Words, comma-separated.",
        "[default: a,b,c]",  # a parsed text
        "--level",
        "[1<=x<=9]",
        "How much a word is worth, in tens.",
        "[default: 2]",
        "--out",
        "Study directory.",
        "--seed",
        "[x>=0]",
    ):
        assert text in out, text
    # the bounds are the option's: 10 is refused before the study starts (exit 2)
    res = CliRunner().invoke(root, ["study", "toy", "--level", "10"])
    assert res.exit_code == 2 and not (toy.parent.parent / "runs").exists()


def test_the_toy_study_runs_on_its_fake_sweep_to_its_results_and_its_report(toy, tmp_path):
    root, _ = app_with_studies()
    res = CliRunner().invoke(root, ["study", "toy", "--words", "x,y", "--level", "3"])
    assert res.exit_code == 0, res.output
    # the key: every field but --out; the directory: runs/toy-<first 10 hex of its SHA-256>
    key = {"words": ["x", "y"], "level": 3, "seed": 1}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:10]
    out = tmp_path / "runs" / f"toy-{digest}"
    index = json.loads((out / "toy.json").read_text())
    assert index["args"] == key and index["cells"] == [
        {"name": w, "worth": 30, "scenario": f"scenarios/{w}.toml", "run": f"cells/{w}"}
        for w in ("x", "y")
    ]
    # two words worth 10 × 3 each
    assert json.loads((out / "results.json").read_text()) == {
        "format_version": 1,
        "cells": 2,
        "total": 60,
    }
    html = (out / "report" / "report.html").read_text()
    assert "words x+y; total 60 over 2 cells" in html and f"Toy {index['digest']}" in html
    lines = res.output.splitlines()
    assert any("2" in line and "60" in line for line in lines)  # the study's table
    assert f"results: {Path('runs') / out.name / 'results.json'}" in res.output
    assert f"report: {Path('runs') / out.name / 'report' / 'report.html'}" in res.output
    # the same command again resumes the same directory
    again = CliRunner().invoke(root, ["study", "toy", "--words", "x,y", "--level", "3"])
    assert again.exit_code == 0 and f"study directory: runs/{out.name}" in again.output


def test_building_the_commands_imports_no_numerical_library():
    """Every `itb` command builds every study's options: a study's arguments module that
    pulls pandas (or numpy, scipy) costs each command ~1 s and ~100 MB (measured: `itb
    run` refusing a bad file took 1.8-2.7 s and 136 MB, 0.6 s and 41 MB without)."""
    import subprocess
    import sys

    code = (
        "import sys, itb.cli.studies; "
        "print(sorted(m for m in ('pandas', 'numpy', 'scipy') if m in sys.modules))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"
