"""A simulated cell's worker runs its repetitions in order and stops at the first that
was interrupted (a Ctrl-C reached the worker too): the rest would only be interrupted
in turn, and a resume runs them all again."""

from __future__ import annotations

from pathlib import Path

from itb.engine import runner
from itb.sweep import parallel


def test_a_cell_stops_at_its_first_interrupted_repetition(tmp_path, monkeypatch):
    ran = []
    statuses = {1: "ok", 2: "interrupted", 3: "ok"}

    def fake_run(sc, opts):
        ran.append(opts.repetitions)
        reps = [{"status": statuses[r]} for r in range(1, opts.repetitions + 1)]
        return runner.RunResult(Path(opts.out), "incomplete", reps)

    monkeypatch.setattr(runner, "run", fake_run)
    monkeypatch.setattr("itb.scenario.scenario.load_scenario", lambda p: None)
    got = parallel.run_cell("s.toml", str(tmp_path / "cell"), [1, 2, 3], None)
    assert ran == [1, 2] and [s for _, s, _ in got] == ["ok", "interrupted"]


def test_once_a_repetition_is_interrupted_no_other_cell_starts(tmp_path, monkeypatch):
    log = tmp_path / "ran"

    def fake_run(sc, opts):  # (in the pool's forked worker)
        with open(log, "a") as f:
            f.write(f"{Path(opts.out).name}\n")
        status = "interrupted" if Path(opts.out).name == "a" else "ok"
        return runner.RunResult(Path(opts.out), "incomplete", [{"status": status}])

    monkeypatch.setattr(runner, "run", fake_run)
    monkeypatch.setattr("itb.scenario.scenario.load_scenario", lambda p: None)
    cells = {"a": [1], "b": [1], "c": [1]}
    ended = parallel.run_cells(
        cells, lambda n: tmp_path / f"{n}.toml", lambda n: tmp_path / n, None,
        lambda m: None, jobs=1,
    )  # fmt: skip
    assert not ended and log.read_text().split() == ["a"]
