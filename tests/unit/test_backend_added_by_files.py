"""A backend is added by creating files only (itb.backends.registry): here one written in
the test, in a directory of its own on PYTHONPATH (`itb/backends/recorder/`, two files),
that records the events it is given and fakes their outcomes. Nothing of ITB's tree is
changed, yet `itb run --backend recorder` runs on it, with its own option, and every
command that runs anything offers it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

INIT = '''"""A backend of a test: records the events it is given and fakes their outcomes."""
'''

BACKEND = """
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from itb.backends.outcome import Outcome
from itb.backends.registry import Backend, Kind, Option


class RecorderTestbed:
    name = "recorder"
    same_machine = True

    def __init__(self, topology, record_to: Path, fail_at: int | None):
        self.topology, self.warnings = topology, []
        self.record_to, self.fail_at, self._up = record_to, fail_at, False

    def preflight(self, sc):
        self.ccs = sorted(sc.experiment.ccs())
        return ["a recorder runs nothing"]

    def provenance(self):
        return {"backend": self.name, "congestion_controls": [{"name": c} for c in self.ccs]}

    def unsupported(self, events):
        return None

    def up(self, run_dir):
        self._up = True

    def built(self):
        return self._up

    def start(self, run):
        return Recording(self)

    def down(self):
        self._up = False
        return {}

    def release(self):
        pass


class Recording:
    def __init__(self, tb):
        self.tb = tb

    def run(self, events, rep_dir, repetition, stop):
        with open(self.tb.record_to, "a") as f:
            for e in events:
                f.write(json.dumps({"repetition": repetition, "id": e.id, "kind": e.kind}) + "\\n")
        out = Outcome()
        if repetition == self.tb.fail_at:
            out.fail("faked by the recorder")
        return out


@dataclass(frozen=True)
class Recorder(Backend):
    record_to: str = "recorded.jsonl"
    fail_at: int | None = None

    name: ClassVar[str] = "recorder"
    exclusive: ClassVar[bool] = False

    def key(self):
        return {"backend": self.name}

    def open(self, topology, ccs, *, hosted=None, seed=1, say=None, only=None):
        return RecorderTestbed(topology, Path(self.record_to), self.fail_at)


KIND = Kind(
    name="recorder",
    help="records the events it is given and fakes their outcomes",
    options=(
        Option("record_to", "--record-to", str | None, "Where the recorder writes.",
               default=None),
        Option("fail_at", "--fail-at", int | None, "The repetition it fails."),
    ),
    make=lambda record_to=None, fail_at=None: Recorder(record_to or "recorded.jsonl", fail_at),
    from_key=lambda key: Recorder() if key.get("backend") == "recorder" else None,
)
"""

SCENARIO = """
[testbed]
name = "two"
topology = "dumbbell"

[dumbbell]
pairs = 2

[experiment]
name = "recorded"
duration = "5s"
repetitions = 3

[[transfer]]
id = "t1"
src = "l1"
dst = "r1"
at = "0s"
volume = "1MB"

[[transfer]]
id = "t2"
src = "l2"
dst = "r2"
at = "1s"
volume = "1MB"
"""


@pytest.fixture
def plugin(tmp_path: Path) -> dict[str, str]:
    """The backend's two files, and the environment that finds them."""
    pkg = tmp_path / "plugins" / "itb" / "backends" / "recorder"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(INIT)
    (pkg / "backend.py").write_text(BACKEND)
    # ITB first: a directory `itb/` without __init__.py ahead of it would be taken for
    # the package itself (a namespace package)
    path = os.pathsep.join([str(REPO / "src"), str(tmp_path / "plugins")])
    env = os.environ | {"PYTHONPATH": path, "ITB_PREFIX": "itbrec"}
    return env


def itb(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "itb.cli", *args],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=120,
    )  # fmt: skip


def test_a_backend_of_two_new_files_runs_a_scenario_with_its_own_option(plugin, tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO)
    record = tmp_path / "recorded.jsonl"
    res = itb(
        "run", str(scenario), "--backend", "recorder", "--record-to", str(record),
        "--fail-at", "2", "--out", str(tmp_path / "run"), env=plugin, cwd=tmp_path,
    )  # fmt: skip
    # repetition 2 failed as faked: exit 1, the others ok
    assert res.returncode == 1, res.stderr + res.stdout
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert meta["backend"] == "recorder" and meta["repetition_status"] == ["ok", "failed", "ok"]
    assert meta["warnings"][0] == "a recorder runs nothing"
    got = [json.loads(line) for line in record.read_text().splitlines()]
    # each repetition's events, in order; after the failed one, the testbed was rebuilt
    assert [(g["repetition"], g["id"]) for g in got] == [
        (1, "t1"), (1, "t2"), (2, "t1"), (2, "t2"), (3, "t1"), (3, "t2"),
    ]  # fmt: skip
    result = json.loads((tmp_path / "run" / "rep-002" / "result.json").read_text())
    assert result["reason"] == "faked by the recorder"


def test_every_command_that_runs_anything_offers_the_added_backend(plugin, tmp_path):
    for command in (
        ["run"],
        ["bench"],
        ["calibrate"],
        ["study", "streams"],
        ["profile", "calibrate"],
    ):
        res = itb(*command, "--help", env=plugin | {"COLUMNS": "200"}, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        assert "recorder" in res.stdout and "--record-to" in res.stdout, command


def test_an_option_of_the_added_backend_is_refused_on_another(plugin, tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO)
    res = itb("run", str(scenario), "--backend", "sim", "--fail-at", "1", env=plugin, cwd=tmp_path)
    assert res.returncode == 2
    assert "--fail-at: an option of --backend recorder, not sim" in res.stderr
    assert not (tmp_path / "runs").exists()  # refused: nothing made
