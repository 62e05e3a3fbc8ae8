"""NXE's workflow for one scenario on the local backend, stage by stage, each logged and
timed: preflight → reservation → deployment → configuration → calibration →
execution (× repetitions) → gathering → analysis → archiving and cleaning.

A failed repetition is recorded with its reason; the testbed is then rebuilt from
scratch and the next repetition goes on. An interruption (Ctrl-C) stops the running
repetition, tears everything down and leaves the run directory marked incomplete;
`--resume` finishes it without redoing the repetitions that ended.

The execution stages (the testbed built, each repetition executed, gathered and
committed, a rebuild after a failure) are `itb.engine.repetitions`; the checks around
the testbed are `itb.engine.checks`; what the run records besides the repetitions'
results (meta.json's provenance, emulator logs, dispatch summary, manifest) is
`itb.engine.records`.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from itb import cc, rundir
from itb.backends import owner
from itb.backends.registry import DEFAULT, Backend, named
from itb.engine import records
from itb.engine.hosted import HOSTED
from itb.engine.repetitions import execute_all
from itb.errors import OutputError, os_reason
from itb.say import Say
from itb.scenario.scenario import Scenario


@dataclass
class RunOptions:
    out: Path
    repetitions: int | None = None  # overrides the scenario's
    seed: int | None = None
    resume: bool = False
    # tables, metrics and report from the run directory, given by the caller (a higher
    # layer: itb.report.build.analyse_run); None: the raw logs only
    analyse: Callable[[Path], Any] | None = None  # the caller's analysis: its typed metrics
    backend: Backend = field(default_factory=lambda: named(DEFAULT))  # where it runs


@dataclass
class RunResult:
    run_dir: Path
    status: str  # complete | incomplete
    repetitions: list[dict] = field(default_factory=list)
    metrics: Any = None  # what RunOptions.analyse returned (itb.analysis.run_results.RunMetrics)
    signal: int | None = None  # the signal that stopped it (SIGINT, SIGTERM, SIGHUP)


class Stages:
    """Times every stage into meta["stages"] and tells the user."""

    def __init__(self, meta: dict, say: Say):
        self.meta, self.say = meta, say

    def __call__(self, name: str):
        stages, say = self.meta.setdefault("stages", []), self.say

        class _Stage:
            def __enter__(self):
                say(f"stage: {name}")
                self.t0 = time.monotonic()
                return self

            def __exit__(self, kind, exc, tb):
                stages.append(
                    {
                        "stage": name,
                        "seconds": round(time.monotonic() - self.t0, 3),
                        "ok": kind is None,
                    }
                )
                return False

        return _Stage()


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def run(
    sc: Scenario, opts: RunOptions, say: Say = lambda s: None, tick: Say = lambda s: None
) -> RunResult:
    """Runs the scenario under the prefix's lock (`Busy`, nothing touched, when another
    command holds it), on the backend's hosts reserved for it if they must be; a
    simulation uses nothing of the machine's and takes none."""
    lock = owner.exclusive(f"itb run into {opts.out}") if opts.backend.exclusive else None
    with lock or contextlib.nullcontext(), opts.backend.reserved(say) as backend:
        return _run(sc, replace(opts, backend=backend), say, tick)


def _run(sc: Scenario, opts: RunOptions, say: Say, tick: Say) -> RunResult:
    exp = sc.experiment
    reps = opts.repetitions or exp.repetitions
    seed = exp.seed if opts.seed is None else opts.seed
    if seed != exp.seed:
        exp = exp.model_copy(update={"seed": seed})
        sc = Scenario(sc.topology, exp, sc.source)
    run_dir = opts.out
    tb = opts.backend.open(sc.topology, cc.support(), hosted=HOSTED, seed=exp.seed, say=say)
    if opts.resume:
        meta = rundir.open_for_resume(run_dir, sc.content_hash())
        done = rundir.repetitions_done(run_dir, reps, say)
        meta.setdefault("resumed", []).append(time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        meta["repetitions"] = reps
    else:
        if run_dir.exists() and any(run_dir.iterdir()):
            raise rundir.RunDirError(
                f"{run_dir} exists and is not empty: choose another --out or add --resume"
            )
        meta, done = records.run_meta(sc, reps, seed), set()
    meta["backend"] = tb.name
    stage = Stages(meta, say)
    stop = threading.Event()
    result = RunResult(run_dir, "incomplete")
    main = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS} if main else {}

    def on_signal(signum, frame):  # first signal: stop cleanly; a second: the default
        stop.set()
        result.signal = result.signal or signum
        say(
            f"{signal.Signals(signum).name}: stopping the repetition and tearing the "
            "testbed down (Ctrl-C again to abort at once)"
        )
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    for sig in previous:
        signal.signal(sig, on_signal)
    failure: BaseException | None = None
    try:
        with stage("preflight"):
            # congestion controls: the kernel's where it has them, else ITB's eBPF ones
            meta["warnings"] = tb.preflight(sc)
            meta.update(tb.provenance())
            for w in meta["warnings"]:
                say(f"warning: {w}")
        _create(run_dir, sc, exp, meta, opts.resume)
        execute_all(sc, tb, run_dir, reps, done, meta, stage, stop, say, tick)
    except BaseException as e:
        failure = e
        raise
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        try:
            try:
                if tb.built():  # ours: the check above refused to run next to another
                    with stage("cleaning"):
                        tb.down()
            finally:
                tb.release()
        except BaseException as e:  # the run's records are finished all the same
            _finish(result, run_dir, reps, meta, stage, stop, opts, failure or e)
            raise
        _finish(result, run_dir, reps, meta, stage, stop, opts, failure)
    return result


def _create(run_dir: Path, sc: Scenario, exp, meta: dict, resume: bool) -> None:
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        if not resume and sc.source:
            shutil.copyfile(sc.source, run_dir / "scenario.toml")
    except OSError as e:
        raise OutputError(run_dir, f"cannot be written: {os_reason(e)}") from None
    rundir.write_json(
        run_dir / "scenario.resolved.json",
        {
            "topology": json.loads(sc.topology.canonical_json()),
            "experiment": json.loads(exp.canonical_json()),
        },
    )
    rundir.write_json(run_dir / "meta.json", meta)


def _finish(
    result: RunResult,
    run_dir: Path,
    reps: int,
    meta: dict,
    stage,
    stop,
    opts: RunOptions,
    failure: BaseException | None,
) -> None:
    """Status, analysis and manifest of the run. When the output cannot be written, only
    what can be is: the repetitions' commit markers already say what is whole."""
    if not run_dir.exists():
        return
    try:
        finished = rundir.repetitions_done(run_dir, reps)
    except OSError:
        finished = set()
    complete = len(finished) == reps and not stop.is_set() and failure is None
    result.status = meta["status"] = "complete" if complete else "incomplete"
    if isinstance(failure, OutputError):
        meta.setdefault("warnings", []).append(f"stopped: {failure}")
        with contextlib.suppress(OutputError):
            rundir.write_json(run_dir / "meta.json", meta)
        return
    try:
        meta["dispatch"] = records.dispatch_summary(run_dir, reps)
        if opts.analyse is not None and failure is None:
            # the analysis reads meta.json (the dispatch error): written first
            rundir.write_json(run_dir / "meta.json", meta)
            try:
                with stage("analysis"):
                    result.metrics = opts.analyse(run_dir)
            except OutputError:
                raise
            except Exception as e:  # a broken analysis must not lose the raw results
                meta.setdefault("warnings", []).append(f"analysis failed: {e!r}")
        result.repetitions = [
            rundir.rep_result(run_dir, r) or {"status": "not run"} for r in range(1, reps + 1)
        ]
        meta["repetition_status"] = [r.get("status") for r in result.repetitions]
        with stage("archiving"):
            meta["files"] = records.manifest(run_dir)
        rundir.write_json(run_dir / "meta.json", meta)
    except OutputError:
        if failure is None:
            raise
