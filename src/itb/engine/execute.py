"""Execution of one repetition: the central relative timer.

One monotonic clock (CLOCK_MONOTONIC, shared by every local namespace). The engine
starts the receivers, waits until each says "ready", then hands every timed process to
its node's worker with an absolute date; the workers wake at the date and report when
they dispatched, so the dispatch error of every event is measured. Link changes
(`set`) are dispatched by the engine itself through the emulator's control channel, and
so are the rate steps of commands held to a profile (`itb.engine.pacing`).
The repetition ends when every awaited process has exited, fails at the first process
that exits non-zero (or at the end of the timeline), and is torn down either way.
A process whose output reached its limit (`output_limit_bytes`: the worker drops the
rest) is recorded in `truncated`, with a warning; the repetition goes on. What the
repetition records, and how each worker event is read into it, is itb.engine.outcome's.

Its rules (the ready barrier, late dispatch, the first failure wins) read time only
through a `Clock` and events only through a `WorkerPool`, so they are unit-tested with
a scripted clock and scripted workers (tests/unit/test_execute_rules.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Protocol

from itb.backends.clock import ClockEstimate
from itb.backends.hostside.worker import sleep_until
from itb.backends.testbed import Emulator
from itb.emulation import linkem
from itb.engine.nodes import NodeEvent
from itb.engine.outcome import Outcome, Recorder
from itb.engine.pacing import Pacing
from itb.engine.processes import ProcSpec, RepetitionPlan
from itb.engine.progress import TransferProgress
from itb.errors import BackendError
from itb.scenario.experiment.events import SetLink

READY_MARGIN_S = 0.2  # the last receiver must be ready this long before zero
SEND_AHEAD_S = 0.3  # timed spawns go to the workers at least this long before zero
DRAIN_S = 5.0  # after a stop, how long to wait for the exits to be reported
TICK_S = 1.0


class Clock(Protocol):
    """The engine's time: CLOCK_MONOTONIC in a run, a scripted clock in tests."""

    def now_ns(self) -> int: ...

    def sleep_until(self, t_ns: int) -> None: ...


class Monotonic:
    def now_ns(self) -> int:
        return time.monotonic_ns()

    def sleep_until(self, t_ns: int) -> None:
        sleep_until(t_ns)


MONOTONIC = Monotonic()


class NodeWorker(Protocol):
    where: str  # in messages: on which machine it ran ("" for a local namespace)

    def send(self, **cmd) -> None: ...


class WorkerPool(Protocol):
    """The node workers of a testbed as the repetition sees them (`nodes.Workers`)."""

    by_node: dict

    def __getitem__(self, node: str) -> NodeWorker: ...

    def sync_clocks(self) -> dict[str, ClockEstimate]: ...

    def next_event(self, timeout_s: float) -> NodeEvent | None: ...

    def stop_all(self) -> None: ...


def spawn_cmd(p: ProcSpec, at_ns: int, prefix: str) -> dict:
    return {
        "op": "spawn",
        "id": prefix + p.id,
        "at_ns": at_ns,
        "argv": list(p.argv),
        "stdout": p.stdout,
        "stderr": p.stderr,
        "stdin": p.stdin,
        "ready": p.ready,
        "output_limit_bytes": p.output_limit_bytes,
    }


class Repetition:
    def __init__(
        self,
        plan: RepetitionPlan,
        workers: WorkerPool,
        emulators: Mapping[str, Emulator],
        duration_us: int,
        tick: Callable[[str], None] = lambda s: None,
        stop: threading.Event | None = None,
        tag: int = 0,
        clock: Clock = MONOTONIC,
    ):
        self.plan = plan
        self.workers = workers
        self.emulators = emulators  # link name → its emulator
        self.duration_us = duration_us
        self.tick = tick
        self.stop = stop or threading.Event()
        self.clock = clock
        self.out = Outcome(now_ns=clock.now_ns)
        self.prefix = f"r{tag}/"  # on the wire, the ids carry the repetition (Recorder)
        self.recorder = Recorder(self.out, plan.procs, self.prefix, self.stop, self._where)
        self.progress = TransferProgress(plan.procs)
        self.pacing = Pacing(plan.procs)

    def run(self) -> Outcome:
        try:
            self._run()
        finally:
            try:
                self.pacing.teardown()
            except BackendError as e:
                self.out.fail(str(e), environment=True)
            self.out.end_ns = self.clock.now_ns()
        return self.out

    def _run(self) -> None:
        out = self.out
        try:  # remote nodes: their clocks against the engine's, before anything is dated
            out.clock = {n: c.to_json() for n, c in self.workers.sync_clocks().items()}
        except BackendError as e:
            out.fail(str(e), environment=True)
            return
        out.start_ns = self.clock.now_ns()
        zero = out.start_ns + int(self.plan.prelude_s * 1e9)
        out.zero_ns = zero
        listeners = self.plan.listeners()
        for p in listeners:
            self.workers[p.node].send(**spawn_cmd(p, 0, self.prefix))
        waiting = {p.id for p in listeners}
        awaited = {p.id for p in self.plan.procs if p.wait}
        if waiting:  # (without receivers nothing is awaited before zero)
            self._collect(until_ns=zero - int(READY_MARGIN_S * 1e9), ready=waiting, awaited=awaited)
        if waiting and out.status == "ok":
            out.fail(
                f"receivers not ready {self.plan.prelude_s - READY_MARGIN_S:.1f} s after "
                f"their start: {', '.join(sorted(waiting)[:5])}"
            )
        if out.status != "ok":
            self._shutdown(awaited)
            return
        try:
            self.pacing.setup()  # the paced commands' cgroups, at their first steps
        except BackendError as e:
            out.fail(str(e), environment=True)
        if out.status == "ok" and self.clock.now_ns() > zero - int(SEND_AHEAD_S * 1e9):
            out.fail(
                "the engine fell behind its schedule before the timeline started", environment=True
            )
        if out.status != "ok":
            self._shutdown(awaited)
            return
        for p in self.plan.procs:
            if p.at_us is not None:
                self.workers[p.node].send(**spawn_cmd(p, zero + p.at_us * 1000, self.prefix))
        setter = threading.Thread(target=self._dispatch_sets, args=(zero,), daemon=True)
        setter.start()
        self.pacing.start(zero, self.recorder.record, lambda why: out.fail(why, environment=True))
        end = zero + self.duration_us * 1000
        self._collect(until_ns=end, ready=set(), awaited=awaited)
        if awaited:
            out.cut_short(self.duration_us, awaited)
        self._shutdown(awaited)

    def _collect(self, until_ns: int, ready: set[str], awaited: set[str]) -> None:
        """Handle worker events until the date, until `ready` (if given) and `awaited`
        are empty, or until a failure."""
        next_tick = self.clock.now_ns() + int(TICK_S * 1e9)
        want_ready = bool(ready)
        while self.out.status == "ok":
            if want_ready and not ready:
                return
            if not want_ready and not awaited:
                return
            if self.stop.is_set():
                self.out.fail("interrupted by the user", status="interrupted")
                return
            left = (until_ns - self.clock.now_ns()) / 1e9
            if left <= 0:
                return
            ne = self.workers.next_event(min(left, 0.2))
            if ne is not None:
                self.recorder.handle(ne.node, ne.event, ready, awaited)
            self._watch_emulators()
            if self.clock.now_ns() >= next_tick:
                next_tick += int(TICK_S * 1e9)
                self.tick(self.progress.line(self.out.zero_ns))

    def _where(self, node: str) -> str:
        """On which machine the node's worker runs, for messages ("" for a namespace)."""
        return self.workers[node].where if node in self.workers.by_node else ""

    def _watch_emulators(self) -> None:
        """An emulator that died fails the repetition at once, named (checked at least
        every 0.2 s): its transfers would only time out much later."""
        for link, em in self.emulators.items():
            how = em.death()
            if how is not None:
                self.out.fail(f"link emulator {link} died ({how})", environment=True)
                return

    def _dispatch_sets(self, zero: int) -> None:
        for s in sorted(self.plan.sets, key=lambda s: s.at_us):
            at = zero + s.at_us * 1000
            self.clock.sleep_until(at)
            if self.out.status != "ok":
                return
            t = self.clock.now_ns()
            em = self.emulators.get(s.link)
            if em is None:
                self.out.fail(f"set {s.id}: no emulator for link {s.link}")
                return
            for d in (
                ("ab", "ba")
                if s.direction == "both"
                else ("ab",)
                if s.direction == "forward"
                else ("ba",)
            ):
                em.send(set_command(s, d))
            self.recorder.record(
                {
                    "id": s.id,
                    "node": f"emulator:{s.link}",
                    "kind": "set",
                    "at_ns": at,
                    "t_ns": t,
                    "error_ns": t - at,
                    "spawn_ns": self.clock.now_ns() - t,
                }
            )

    def _shutdown(self, awaited: set[str]) -> None:
        """Stop what still runs and wait (bounded) for the exits to be recorded."""
        running = {
            i for i, r in self.out.procs.items() if "dispatched_ns" in r and "exited_ns" not in r
        }
        if not running:
            return
        self.workers.stop_all()
        deadline = self.clock.now_ns() + int(DRAIN_S * 1e9)
        while running and self.clock.now_ns() < deadline:
            ne = self.workers.next_event(0.1)
            if ne is None:
                continue
            ev, ident = ne.event, self.recorder.own(ne.event)
            if ev.get("ev") in ("exited", "truncated") and ident is not None:
                self.recorder.truncated(ident, ne.node, ev)
            if ev.get("ev") == "exited" and ident is not None:
                self.out.procs.setdefault(ident, {"node": ne.node}).update(
                    exited_ns=ev["t_ns"], rc=ev["rc"], stopped=True
                )
                running.discard(ident)


def set_command(s: SetLink, direction: str) -> dict:
    """The emulator's control line for one direction of a `set` event."""
    rate = s.rate_bps if s.rate_given else linkem.UNCHANGED
    return linkem.update_json(direction, rate, s.delay_us, s.loss)
