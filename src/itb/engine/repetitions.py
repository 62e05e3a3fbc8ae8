"""A run's execution stages: the testbed built (reservation, deployment, configuration,
the quick calibration), then each repetition planned, executed (itb.engine.execute),
gathered and committed; after a failed one the testbed is torn down and rebuilt for the
next, and a rebuild that fails fails that repetition only. The engine runs real-time
meanwhile. The workflow around them (the run directory, signals, analysis) is
itb.engine.runner's.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from dataclasses import asdict
from pathlib import Path

from itb import rundir
from itb.backends.testbed import Testbed
from itb.engine import checks, processes, records, steal
from itb.engine.execute import Repetition
from itb.engine.nodes import Workers
from itb.engine.outcome import Outcome
from itb.errors import BackendError, OutputError, PreflightError, os_reason
from itb.say import Say
from itb.scenario.experiment.background import events_for_repetition
from itb.scenario.scenario import Scenario

ENGINE_RT_PRIORITY = 5  # below the workers' (10): they date the spawns


@contextlib.contextmanager
def _real_time():
    """The engine and the threads it starts (one reader per worker) run real-time while
    repetitions execute: with thousands of busy transfer threads the normal scheduler
    gave it so little CPU that exits were handled 100 s late. It mostly sleeps."""
    try:
        before = os.sched_getscheduler(0), os.sched_getparam(0)
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(ENGINE_RT_PRIORITY))
    except (OSError, AttributeError):
        yield
        return
    try:
        yield
    finally:
        os.sched_setscheduler(0, before[0], before[1])


def execute_all(sc, tb: Testbed, run_dir, reps, done, meta, stage, stop, say, tick) -> None:
    # not for a simulation: its simulator would inherit the policy and, busy as it is,
    # keep every other program of the machine off its core
    with contextlib.nullcontext() if tb.simulated else _real_time():
        _execute_reps(sc, tb, run_dir, reps, done, meta, stage, stop, say, tick)


def _build(sc: Scenario, tb: Testbed, run_dir: Path, meta: dict, stage) -> Workers:
    with stage("reservation"):
        tb.up(run_dir)
    if tb.simulated:  # no host, no process, no measurement of a real path
        return Workers([])
    with stage("deployment"):
        meta["sysctls"] = checks.deployment_check(sc, tb.host)
        facts = tb.facts()  # SSH hosts: CPU, kernel, NIC of each (the calibration table)
        if facts:
            meta["hosts"] = facts
    with stage("configuration"):
        workers = Workers(tb.hosts())
    if "calibration" not in meta:
        try:
            with stage("calibration"):
                cal = checks.quick_calibration(sc, tb)
                rundir.write_json(run_dir / "calibration.json", cal)
                meta["calibration"] = "calibration.json"
        except BaseException:
            workers.close()
            raise
    return workers


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


def _execute_reps(sc, tb, run_dir, reps, done, meta, stage, stop, say, tick) -> None:
    workers = None
    rebuilt = False
    try:
        for r in range(1, reps + 1):
            if r in done:
                say(f"repetition {r}/{reps}: already done, skipped")
                continue
            if stop.is_set():
                break
            if workers is None:
                try:
                    workers = _build(sc, tb, run_dir, meta, stage)
                except (PreflightError, BackendError) as e:
                    # The first build's errors stop the run (nothing was measured yet); a
                    # rebuild after a failed repetition (a host that stopped answering)
                    # fails this repetition only, and the sweep goes on.
                    if not rebuilt:
                        raise
                    _failed_build(run_dir, r, reps, e, tb, meta, stage, say)
                    continue
            with stage(f"execution {r}/{reps}"):
                outcome = run_repetition(sc, run_dir, r, workers, tb, stop, tick)
            with stage(f"gathering {r}/{reps}"):
                for host in tb.gather(rundir.rep_dir(run_dir, r), outcome.end_ns):
                    outcome.fail(
                        f"host {host} stopped answering: its logs of this repetition "
                        "could not be gathered",
                        environment=True,
                    )
                try:
                    records.gather_emulator_logs(run_dir, r, tb.emulators, outcome)
                except OSError as e:
                    raise OutputError(
                        rundir.rep_dir(run_dir, r) / "emulator",
                        f"cannot be written: {os_reason(e)}",
                    ) from None
                rundir.check_space(run_dir)  # a full disk may have cut the programs' logs
                rundir.commit(rundir.rep_dir(run_dir, r), {"repetition": r, **outcome.to_json()})
            say(
                f"repetition {r}/{reps}: {outcome.status}"
                + (f" — {outcome.reason}" if outcome.reason else "")
            )
            for w in outcome.warnings[:3]:
                say(f"warning: {w}")
            if outcome.status != "ok":
                workers.close()
                workers = None
                rebuilt = True
                _teardown(tb, meta, stage, say)  # the next repetition starts on a fresh testbed
    finally:
        if workers is not None:
            workers.close()


def run_repetition(
    sc: Scenario,
    run_dir: Path,
    r: int,
    workers: Workers,
    tb: Testbed,
    stop: threading.Event,
    tick: Say,
) -> Outcome:
    exp = sc.experiment
    rd = _empty_rep_dir(run_dir, r)
    events = events_for_repetition(exp, r)
    rundir.write_json(rd / "events.json", [e.model_dump(mode="json") for e in events])
    if tb.simulated:
        return simulated(tb, events, rd, exp, r, tick, stop)
    # on the testbed's topology: the hosts' real addresses; the names its hosts select
    # the congestion controls by (ITB's eBPF ones are itb_<name>)
    plan = processes.build(events, tb.topology, rd, exp.interval_us, tb.cc_names())
    rundir.write_json(rd / "plan.json", [asdict(p) for p in plan.procs])
    try:
        tb.prepare(rd)
    except BackendError as e:  # a host that stopped answering between repetitions
        out = Outcome()
        out.fail(f"preparing the repetition: {e}", environment=True)
        return out
    # The commit marker (result.json) is written by the caller, after the gathering.
    before = steal.read_cpu_times() if tb.same_machine else None
    out = Repetition(plan, workers, tb.emulators, exp.duration_us, tick, stop, tag=r).run()
    if before is not None:
        out.cpu_steal = steal.steal_share(before, steal.read_cpu_times())
        if w := steal.steal_warning(out.cpu_steal):
            out.warnings.append(w)
    return out


def simulated(
    tb: Testbed, events, rd: Path, exp, r: int, tick: Say, stop: threading.Event
) -> Outcome:
    """A simulated repetition: the simulator writes what the processes and emulators
    would have; its result, as a repetition's (interrupted, to be run again, when the
    run was stopped during it)."""
    tick(f"repetition {r}: simulating")
    res = tb.simulate(events, rd, exp.duration_us, exp.interval_us, r, stop)
    out = Outcome()
    if res["status"] != "ok":
        out.fail(res["reason"], status=res["status"])
        return out
    out.start_ns, out.zero_ns, out.end_ns = res["start_ns"], res["zero_ns"], res["end_ns"]
    if res["unfinished"]:
        out.cut_short(exp.duration_us, res["unfinished"])
    out.warnings.append(
        f"simulated: {res['simulated_s']:.3f} s in {res['wall_s']:.3f} s of wall time, "
        f"peak memory {res['peak_rss_bytes'] / 2**20:.0f} MiB"
    )
    return out
