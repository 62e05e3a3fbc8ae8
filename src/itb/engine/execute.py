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
rest) is recorded in `truncated`, with a warning; the repetition goes on.

Its rules (the ready barrier, late dispatch, the first failure wins) read time only
through a `Clock` and events only through a `WorkerPool`, so they are unit-tested with
a simulated clock and scripted workers (tests/unit/test_execute_rules.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from itb.backends.clock import ClockEstimate
from itb.backends.hostside.worker import sleep_until
from itb.backends.testbed import Emulator
from itb.engine.nodes import NodeEvent
from itb.engine.pacing import Pacing
from itb.engine.processes import ProcSpec, RepetitionPlan
from itb.engine.progress import TransferProgress
from itb.errors import BackendError
from itb.scenario.experiment.events import SetLink

READY_MARGIN_S = 0.2  # the last receiver must be ready this long before zero
SEND_AHEAD_S = 0.3  # timed spawns go to the workers at least this long before zero
DRAIN_S = 5.0  # after a stop, how long to wait for the exits to be reported
TICK_S = 1.0
LATE_WARN_NS = 10_000_000  # a dispatch this late is a warning of the run and the report
LATE_FAIL_NS = 1_000_000_000  # this late, the repetition is not the planned experiment


class Clock(Protocol):
    """The engine's time: CLOCK_MONOTONIC in a run, a simulated clock in tests."""

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


@dataclass
class Outcome:
    status: str = "ok"  # ok | failed | interrupted
    reason: str | None = None
    environment: bool = False  # failed because the testbed broke, not the experiment
    failed_ns: int | None = None  # when the failure was noticed
    warnings: list[str] = field(default_factory=list)
    start_ns: int = 0  # the prelude (receivers) started
    zero_ns: int = 0  # the timeline's zero (CLOCK_MONOTONIC)
    end_ns: int = 0
    dispatch: list[dict] = field(default_factory=list)  # one per dispatched event
    procs: dict[str, dict] = field(default_factory=dict)  # id → what happened to it
    clock: dict[str, dict] = field(default_factory=dict)  # node → its measured clock offset
    # {"process", "node", "stream", "limit_bytes", "dropped_bytes"} per stream whose output
    # was cut ("reason" instead of "limit_bytes" when its file could not be written)
    truncated: list[dict] = field(default_factory=list)
    now_ns: Callable[[], int] = field(default=time.monotonic_ns, repr=False, compare=False)

    def fail(self, reason: str, status: str = "failed", environment: bool = False) -> None:
        if self.status == "ok":  # the first cause is the one worth reporting
            self.status, self.reason, self.environment = status, reason, environment
            self.failed_ns = self.now_ns()

    def to_json(self) -> dict:
        return {
            "status": self.status,
            "reason": self.reason,
            "environment": self.environment,
            "failed_ns": self.failed_ns,
            "warnings": self.warnings,
            "start_ns": self.start_ns,
            "zero_ns": self.zero_ns,
            "end_ns": self.end_ns,
            "dispatch": self.dispatch,
            "procs": self.procs,
            "clock": self.clock,
            "truncated": self.truncated,
        }


class Interrupted(Exception):
    pass


def _spawn_cmd(p: ProcSpec, at_ns: int, prefix: str) -> dict:
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


def _exit_text(rc: int) -> str:
    if rc < 0:
        import signal

        try:
            return f"was killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"was killed by signal {-rc}"
    return f"exited with code {rc}"


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
        self.by_id = {p.id: p for p in plan.procs}
        # Ids on the wire carry the repetition: a late event of an earlier repetition
        # (an exit after a stop) must not be taken for one of this repetition.
        self.prefix = f"r{tag}/"
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
            self.workers[p.node].send(**_spawn_cmd(p, 0, self.prefix))
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
                self.workers[p.node].send(**_spawn_cmd(p, zero + p.at_us * 1000, self.prefix))
        setter = threading.Thread(target=self._dispatch_sets, args=(zero,), daemon=True)
        setter.start()
        self.pacing.start(zero, self._record, lambda why: out.fail(why, environment=True))
        end = zero + self.duration_us * 1000
        self._collect(until_ns=end, ready=set(), awaited=awaited)
        if awaited and out.status == "ok":
            out.fail(
                f"the timeline ended ({self.duration_us / 1e6:g} s) with "
                f"{len(awaited)} process(es) still running: {', '.join(sorted(awaited)[:5])}"
            )
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
                self._handle(ne.node, ne.event, ready, awaited)
            self._watch_emulators()
            if self.clock.now_ns() >= next_tick:
                next_tick += int(TICK_S * 1e9)
                self.tick(self.progress.line(self.out.zero_ns))

    def _watch_emulators(self) -> None:
        """An emulator that died fails the repetition at once, named (checked at least
        every 0.2 s): its transfers would only time out much later."""
        for link, em in self.emulators.items():
            how = em.death()
            if how is not None:
                self.out.fail(f"link emulator {link} died ({how})", environment=True)
                return

    def _late(self, ident: str, error_ns: int) -> None:
        if error_ns > LATE_FAIL_NS:
            self.out.fail(
                f"{ident} was dispatched {error_ns / 1e9:.2f} s late (more than "
                f"{LATE_FAIL_NS / 1e9:g} s): the engine could not keep the timeline",
                environment=True,
            )
        elif error_ns > LATE_WARN_NS:
            self.out.warnings.append(f"{ident} dispatched {error_ns / 1e6:.1f} ms late")

    def _own(self, ev: dict) -> str | None:
        """The event's process id in this repetition; None for another repetition's."""
        ident = ev.get("id")
        if ident is None or not ident.startswith(self.prefix):
            return None
        return ident[len(self.prefix) :]

    def _handle(self, node: str, ev: dict, ready: set[str], awaited: set[str]) -> None:
        kind, ident = ev.get("ev"), self._own(ev)
        if kind == "worker_gone":
            self.out.procs.setdefault(ident or f"worker:{node}", {"node": node})
            self._worker_gone(node)
            return
        if ident is None:  # another repetition's
            return
        rec = self.out.procs.setdefault(ident, {"node": node})
        if kind == "dispatched":
            rec.update(dispatched_ns=ev["t_ns"], spawned_ns=ev["spawned_ns"], pid=ev["pid"])
            p = self.by_id.get(ident)
            if p is not None and p.at_us is not None:
                clock = self.out.clock.get(node) or {}
                self.out.dispatch.append(
                    {
                        "id": ident,
                        "node": node,
                        "kind": p.role,
                        "at_ns": ev["at_ns"],
                        "t_ns": ev["t_ns"],
                        "error_ns": ev["t_ns"] - ev["at_ns"],
                        "spawn_ns": ev["spawned_ns"] - ev["t_ns"],
                        "clock_uncertainty_ns": clock.get("uncertainty_ns", 0),
                    }
                )
                self._late(ident, ev["t_ns"] - ev["at_ns"])
        elif kind == "ready":
            rec["ready_ns"] = ev["t_ns"]
            ready.discard(ident)
        elif kind == "spawn_failed":
            rec["error"] = ev.get("reason")
            self.out.fail(f"{ident} on {node} could not start: {ev.get('reason')}")
        elif kind == "truncated":
            self._truncated(ident, node, ev)
        elif kind == "exited":
            rc = ev["rc"]
            rec.update(exited_ns=ev["t_ns"], rc=rc)
            self._truncated(ident, node, ev)
            awaited.discard(ident)
            ready.discard(ident)
            p = self.by_id.get(ident)
            if rc != 0 and p is not None and p.check and not self.stop.is_set():
                tail = ev.get("stderr_tail") or ""
                self.out.fail(
                    f"{ident} ({p.role} on {node}) {_exit_text(rc)}"
                    + (f": {tail.splitlines()[-1]}" if tail else "")
                )
        elif kind == "cancelled":
            rec["cancelled_ns"] = ev["t_ns"]
            awaited.discard(ident)

    def _worker_gone(self, node: str) -> None:
        where = self.workers[node].where if node in self.workers.by_node else ""
        doing = sorted(
            i
            for i, r in self.out.procs.items()
            if r.get("node") == node and "dispatched_ns" in r and "exited_ns" not in r
        )
        what = f"; it was running {', '.join(doing)}" if doing else "; nothing of it was running"
        self.out.fail(f"the worker of node {node} died{where}{what}", environment=True)

    def _truncated(self, ident: str, node: str, ev: dict) -> None:
        """A stream of the process was cut ("truncated": recorded, said as a warning) and,
        at its exit, how many bytes each stream dropped in all."""
        cut = {t["stream"]: t for t in self.out.truncated if t["process"] == ident}
        dropped = {s: n for s, n in (ev.get("dropped_bytes") or {}).items() if n}
        for stream in [ev["stream"]] if ev.get("ev") == "truncated" else list(dropped):
            if stream in cut:
                continue
            p, reason = self.by_id.get(ident), ev.get("reason")
            limit = ev.get("limit_bytes") or (p.output_limit_bytes if p else None)
            cut[stream] = {
                "process": ident,
                "node": node,
                "stream": stream,
                **({"reason": reason} if reason else {"limit_bytes": limit}),
                "dropped_bytes": None,
            }
            self.out.truncated.append(cut[stream])
            self.out.warnings.append(
                f"{ident} on {node}: its {stream} "
                + (
                    f"could not be written ({reason}): the rest was dropped"
                    if reason
                    else f"reached its output limit ({limit} bytes, stdout and stderr together): "
                    "the rest was dropped"
                )
            )
        for stream, n in dropped.items():
            cut[stream]["dropped_bytes"] = n

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
            self._record(
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

    def _record(self, dispatch: dict) -> None:
        """An event the engine dispatched itself (a link change, a pacing rate)."""
        self.out.dispatch.append(dispatch)
        self._late(dispatch["id"], dispatch["error_ns"])

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
            ev, ident = ne.event, self._own(ne.event)
            if ev.get("ev") in ("exited", "truncated") and ident is not None:
                self._truncated(ident, ne.node, ev)
            if ev.get("ev") == "exited" and ident is not None:
                self.out.procs.setdefault(ident, {"node": ne.node}).update(
                    exited_ns=ev["t_ns"], rc=ev["rc"], stopped=True
                )
                running.discard(ident)


def set_command(s: SetLink, direction: str) -> dict:
    """The emulator's control line for one direction of a `set` event."""
    cmd: dict = {"dir": direction}
    if s.rate_given:
        cmd["rate_bps"] = s.rate_bps
    if s.delay_us is not None:
        cmd["delay_us"] = s.delay_us
    if s.loss is not None:
        cmd["loss"] = s.loss.model_dump(mode="json")
    return cmd
