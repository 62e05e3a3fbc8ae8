"""The engine's process execution on a testbed of hosts (`itb.backends.testbed.Hosted`:
the local testbed, SSH hosts): before a run, the programs and inputs the scenario needs;
once the testbed is up, its deployment (socket buffers against the paths' BDP, each
host's facts), configuration (one node worker per host) and calibration (the idle RTT of
every pair); then each repetition planned (the processes of its events), executed
(itb.engine.execute), and its logs gathered from the hosts and the emulators. The engine
and the threads it starts run real-time meanwhile. A simulator runs its repetitions
itself (itb.backends.sim).
"""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import asdict
from pathlib import Path

from itb import rundir
from itb.backends.outcome import Outcome
from itb.backends.testbed import Hosts, RunContext
from itb.engine import checks, processes, records, steal
from itb.engine.execute import Repetition
from itb.engine.nodes import Workers
from itb.errors import BackendError, OutputError, os_reason
from itb.scenario.scenario import Scenario

ENGINE_RT_PRIORITY = 5  # below the workers' (10): they date the spawns


@contextlib.contextmanager
def real_time():
    """The engine and the threads it starts (one reader per worker) run real-time while
    repetitions execute: with thousands of busy transfer threads the normal scheduler
    gave it so little CPU that exits were handled 100 s late. It mostly sleeps. (Not for
    a simulation: its simulator would inherit the policy and, busy as it is, keep every
    other program of the machine off its core.)"""
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


class Hosted:
    """`itb.backends.testbed.Hosted`: what a testbed of hosts is opened with."""

    def preflight(self, sc: Scenario, tb: Hosts) -> list[str]:
        return checks.preflight(sc, tb)

    def start(self, tb: Hosts, run: RunContext) -> HostedRepetitions:
        return HostedRepetitions(tb, run)


HOSTED = Hosted()


class HostedRepetitions:
    """A built testbed of hosts deployed, configured and calibrated; its repetitions."""

    def __init__(self, tb: Hosts, run: RunContext):
        self.tb, self.run_ctx = tb, run
        sc, meta, stage = run.scenario, run.meta, run.stage
        with stage("deployment"):
            meta["sysctls"] = checks.deployment_check(sc, tb.host)
            facts = tb.facts()  # SSH hosts: CPU, kernel, NIC of each (the calibration table)
            if facts:
                meta["hosts"] = facts
        with stage("configuration"), real_time():  # (the readers' threads inherit it)
            self.workers = Workers(tb.hosts())
        if "calibration" not in meta:
            try:
                with stage("calibration"):
                    cal = checks.quick_calibration(sc, tb)
                    rundir.write_json(run.run_dir / "calibration.json", cal)
                    meta["calibration"] = "calibration.json"
            except BaseException:
                self.workers.close()
                raise

    def close(self) -> None:
        self.workers.close()

    def run(self, events: list, rep_dir: Path, repetition: int, stop: threading.Event) -> Outcome:
        run, r = self.run_ctx, repetition
        with run.stage(f"execution {r}/{run.repetitions}"), real_time():
            out = self._execute(events, rep_dir, r, stop)
        with run.stage(f"gathering {r}/{run.repetitions}"):
            for host in self.tb.gather(rep_dir, out.end_ns):
                out.fail(
                    f"host {host} stopped answering: its logs of this repetition "
                    "could not be gathered",
                    environment=True,
                )
            try:
                records.gather_emulator_logs(run.run_dir, r, self.tb.emulators, out)
            except OSError as e:
                raise OutputError(
                    rep_dir / "emulator", f"cannot be written: {os_reason(e)}"
                ) from None
        return out

    def _execute(self, events: list, rd: Path, r: int, stop: threading.Event) -> Outcome:
        tb, exp = self.tb, self.run_ctx.scenario.experiment
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
        # The commit marker (result.json) is written by the engine, after the gathering.
        before = steal.read_cpu_times() if tb.same_machine else None
        out = Repetition(
            plan, self.workers, tb.emulators, exp.duration_us, self.run_ctx.tick, stop, tag=r
        ).run()
        if before is not None:
            out.cpu_steal = steal.steal_share(before, steal.read_cpu_times())
            if w := steal.steal_warning(out.cpu_steal):
                out.warnings.append(w)
        return out
