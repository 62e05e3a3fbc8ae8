"""A run's execution stages: the testbed built (reservation) and started (a testbed of
hosts: deployment, configuration, the quick calibration: itb.engine.hosted), then each
repetition executed by the testbed and committed; after a failed one the testbed is torn
down and rebuilt for the next, and a rebuild that fails fails that repetition only. The
workflow around them (the run directory, signals, analysis) is itb.engine.runner's.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

from itb import rundir
from itb.backends.outcome import Outcome
from itb.backends.testbed import Repetitions, RunContext, Testbed
from itb.errors import BackendError, OutputError, PreflightError, os_reason
from itb.scenario.experiment.background import events_for_repetition
from itb.scenario.scenario import Scenario


def _build(sc: Scenario, tb: Testbed, run_dir: Path, meta: dict, stage, reps, tick) -> Repetitions:
    with stage("reservation"):
        tb.up(run_dir)
    return tb.start(RunContext(sc, run_dir, meta, stage, reps, tick))


def _empty_rep_dir(run_dir: Path, r: int) -> Path:
    """The repetition's directory, empty: an attempt that did not commit starts again."""
    rd = rundir.rep_dir(run_dir, r)
    try:
        if rd.exists():
            shutil.rmtree(rd)
        rd.mkdir(parents=True)
    except OSError as e:
        raise OutputError(rd, f"cannot be written: {os_reason(e)}") from None
    return rd


def _failed_build(run_dir, r, reps, e, tb, meta, stage, say) -> None:
    rd = _empty_rep_dir(run_dir, r)
    reason = f"the testbed could not be rebuilt: {e}"
    rundir.commit(
        rd,
        {
            "repetition": r,
            "status": "failed",
            "reason": reason,
            "environment": True,
            "dispatch": [],
            "procs": {},
            "clock": {},
        },
    )
    say(f"repetition {r}/{reps}: failed — {reason}")
    _teardown(tb, meta, stage, say)


def _teardown(tb, meta, stage, say) -> None:
    """Between repetitions: what cannot be restored now (a host that does not answer)
    is a warning; the next build restores it first, `itb clean` retries it."""
    with stage("cleaning"):
        try:
            tb.down()
        except BackendError as e:
            meta.setdefault("warnings", []).append(str(e))
            say(f"warning: {e}")


def execute_all(sc, tb: Testbed, run_dir, reps, done, meta, stage, stop, say, tick) -> None:
    """The repetitions not `done`, in order, until `stop` is set. The testbed's
    repetitions end with it (`tb.down()`: here after a failed one, else the runner's)."""
    runs: Repetitions | None = None  # the built testbed's, until it is torn down
    rebuilt = False
    for r in range(1, reps + 1):
        if r in done:
            say(f"repetition {r}/{reps}: already done, skipped")
            continue
        if stop.is_set():
            break
        if runs is None:
            try:
                runs = _build(sc, tb, run_dir, meta, stage, reps, tick)
            except (PreflightError, BackendError) as e:
                # The first build's errors stop the run (nothing was measured yet); a
                # rebuild after a failed repetition (a host that stopped answering)
                # fails this repetition only, and the sweep goes on.
                if not rebuilt:
                    raise
                _failed_build(run_dir, r, reps, e, tb, meta, stage, say)
                continue
        outcome = run_repetition(sc, run_dir, r, runs, stop)
        rundir.check_space(run_dir)  # a full disk may have cut the programs' logs
        rundir.commit(rundir.rep_dir(run_dir, r), {"repetition": r, **outcome.to_json()})
        say(
            f"repetition {r}/{reps}: {outcome.status}"
            + (f" — {outcome.reason}" if outcome.reason else "")
        )
        for w in outcome.warnings[:3]:
            say(f"warning: {w}")
        if outcome.status != "ok":
            runs = None
            rebuilt = True
            _teardown(tb, meta, stage, say)  # the next repetition starts on a fresh testbed


def run_repetition(
    sc: Scenario, run_dir: Path, r: int, runs: Repetitions, stop: threading.Event
) -> Outcome:
    """Repetition r's events (its draws made) into its empty directory, run."""
    rd = _empty_rep_dir(run_dir, r)
    events = events_for_repetition(sc.experiment, r)
    rundir.write_json(rd / "events.json", [e.model_dump(mode="json") for e in events])
    return runs.run(events, rd, r, stop)
