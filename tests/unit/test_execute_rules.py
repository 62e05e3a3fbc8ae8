"""The repetition's rules (itb.engine.execute) under a simulated clock and scripted
workers: the ready barrier, late dispatch, the first failure wins, the timeline's end.
No root, no namespaces, no sleeps: time moves only when the engine waits for an event.

Every date is hand-computed from T0 (the clock when the repetition starts) and the
plan's prelude of 1 s, so the timeline's zero is T0 + 1 s."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from itb.engine.execute import READY_MARGIN_S, Repetition
from itb.engine.nodes import NodeEvent
from itb.engine.processes import ProcSpec, RepetitionPlan

S = 1_000_000_000
MS = 1_000_000
T0 = 1_000 * S
ZERO = T0 + 1 * S  # prelude_s = 1.0


class SimClock:
    def __init__(self, t_ns: int = T0):
        self.t = t_ns

    def now_ns(self) -> int:
        return self.t

    def sleep_until(self, t_ns: int) -> None:
        self.t = max(self.t, t_ns)


# What a scripted process does once its spawn command arrives: (delay after the date it
# was due, event) pairs; "due" is the spawn's date (at_ns) or, for a receiver, its sending.
Script = Callable[[int], list[tuple[int, dict]]]


def receiver(ready_after_ns: int | None, exit_at_ns: int | None = None) -> Script:
    def script(sent: int) -> list[tuple[int, dict]]:
        evs = [
            (
                sent + 1 * MS,
                {"ev": "dispatched", "at_ns": 0, "spawned_ns": sent + 1 * MS, "pid": 100},
            )
        ]
        if ready_after_ns is not None:
            evs.append((sent + ready_after_ns, {"ev": "ready"}))
        if exit_at_ns is not None:
            evs.append((exit_at_ns, {"ev": "exited", "rc": 0}))
        return evs

    return script


def sender(late_ns: int = 0, runs_ns: int = 2 * S, rc: int = 0, tail: str = "") -> Script:
    def script(at: int) -> list[tuple[int, dict]]:
        t = at + late_ns
        return [
            (t, {"ev": "dispatched", "at_ns": at, "spawned_ns": t, "pid": 200}),
            (t + runs_ns, {"ev": "exited", "rc": rc, "stderr_tail": tail}),
        ]

    return script


@dataclass
class ScriptedWorkers:
    """Stands in for nodes.Workers: each spawn schedules its process's scripted events;
    `next_event` returns the earliest one due within the timeout (moving the clock to
    its date) or moves the clock by the whole timeout."""

    clock: SimClock
    scripts: dict[str, Script]  # process id → what it does
    nodes: tuple[str, ...] = ("l1", "r1")
    extra: list[tuple[int, str, dict]] = field(default_factory=list)  # (date, node, event)
    sent: list[tuple[str, dict]] = field(default_factory=list)
    stopped: bool = False

    def __post_init__(self) -> None:
        self.by_node = {n: _Node(self, n) for n in self.nodes}
        self.pending = list(self.extra)
        self.running: dict[str, str] = {}  # wire id → node

    def __getitem__(self, node: str) -> _Node:
        return self.by_node[node]

    def sync_clocks(self) -> dict:
        return {}

    def stop_all(self) -> None:
        self.stopped = True
        for wire_id, node in self.running.items():
            self.pending.append(
                (self.clock.t + 1 * MS, node, {"ev": "exited", "id": wire_id, "rc": -15})
            )

    def next_event(self, timeout_s: float) -> NodeEvent | None:
        horizon = self.clock.t + int(timeout_s * S)
        due = sorted((p for p in self.pending if p[0] <= horizon), key=lambda p: p[0])
        if not due:
            self.clock.t = horizon
            return None
        date, node, ev = due[0]
        self.pending.remove(due[0])
        self.clock.t = max(self.clock.t, date)
        if ev.get("ev") == "exited":
            self.running.pop(ev.get("id"), None)
        return NodeEvent(node, {**ev, "t_ns": date})


@dataclass
class _Node:
    pool: ScriptedWorkers
    name: str
    where: str = ""

    def send(self, **cmd) -> None:
        self.pool.sent.append((self.name, cmd))
        if cmd.get("op") != "spawn":
            return
        wire_id = cmd["id"]
        ident = wire_id.split("/", 1)[1]
        due = cmd["at_ns"] or self.pool.clock.t
        self.pool.running[wire_id] = self.name
        for date, ev in self.pool.scripts[ident](due):
            self.pool.pending.append((date, self.name, {**ev, "id": wire_id}))


@dataclass
class DyingEmulator:
    """A link emulator that dies at a date (EmulatorHandle.death: how, or None)."""

    clock: SimClock
    dies_at_ns: int

    def death(self) -> str | None:
        return "killed by SIGKILL" if self.clock.t >= self.dies_at_ns else None


def proc(ident: str, node: str, at_us: int | None, role: str) -> ProcSpec:
    return ProcSpec(
        id=ident,
        event=ident.split(".")[0],
        role=role,
        node=node,
        at_us=at_us,
        argv=("flow", role),
        stdout="o",
        stderr="e",
        ready=at_us is None,
    )


def one_transfer(at_us: int = 0) -> list[ProcSpec]:
    return [proc("t1.recv", "r1", None, "recv"), proc("t1.send", "l1", at_us, "send")]


def run(
    procs: list[ProcSpec],
    scripts: dict[str, Script],
    duration_s: float = 10,
    extra=(),
    stop: threading.Event | None = None,
    tag: int = 1,
    emulator_dies_at_ns: int | None = None,
):
    clock = SimClock()
    workers = ScriptedWorkers(clock, scripts, extra=list(extra))
    plan = RepetitionPlan(procs=procs, sets=[], prelude_s=1.0)
    emulators = (
        {} if emulator_dies_at_ns is None else {"rl-rr": DyingEmulator(clock, emulator_dies_at_ns)}
    )
    out = Repetition(
        plan, workers, emulators, int(duration_s * 1e6), stop=stop, tag=tag, clock=clock
    ).run()
    return out, workers


def spawned_at(workers: ScriptedWorkers) -> dict[str, int]:
    return {c["id"]: c["at_ns"] for _, c in workers.sent if c.get("op") == "spawn"}


def test_a_receiver_ready_in_time_lets_the_sender_start_at_the_timelines_zero():
    out, workers = run(
        one_transfer(),
        {
            "t1.recv": receiver(ready_after_ns=300 * MS, exit_at_ns=ZERO + 2100 * MS),
            "t1.send": sender(runs_ns=2 * S),
        },
    )
    assert out.status == "ok" and out.reason is None and out.warnings == []
    assert (out.start_ns, out.zero_ns) == (T0, ZERO)
    assert spawned_at(workers) == {"r1/t1.recv": 0, "r1/t1.send": ZERO}
    assert out.procs["t1.recv"]["ready_ns"] == T0 + 300 * MS
    assert [d["error_ns"] for d in out.dispatch] == [0]
    assert out.end_ns == ZERO + 2100 * MS  # the last exit: the receiver's
    assert not workers.stopped  # nothing was left to stop


def test_a_receiver_not_ready_by_the_margin_fails_before_any_sender_is_sent():
    out, workers = run(
        one_transfer(), {"t1.recv": receiver(ready_after_ns=None), "t1.send": sender()}
    )
    assert out.status == "failed" and not out.environment
    # 1.0 s of prelude minus the 0.2 s margin
    assert out.reason == "receivers not ready 0.8 s after their start: t1.recv"
    assert out.failed_ns == ZERO - int(READY_MARGIN_S * S) == T0 + 800 * MS
    assert spawned_at(workers) == {"r1/t1.recv": 0}  # no sender went out
    assert workers.stopped  # the receiver that did start is stopped
    assert out.procs["t1.recv"]["stopped"] is True and out.procs["t1.recv"]["rc"] == -15


def test_a_receiver_ready_after_the_send_ahead_point_fails_as_the_engine_falling_behind():
    # ready at 0.75 s: inside the barrier (0.8 s) but later than zero - 0.3 s = 0.7 s, when
    # the timed spawns must already be on their way
    out, workers = run(
        one_transfer(), {"t1.recv": receiver(ready_after_ns=750 * MS), "t1.send": sender()}
    )
    assert out.status == "failed" and out.environment
    assert out.reason == "the engine fell behind its schedule before the timeline started"
    assert out.failed_ns == T0 + 750 * MS
    assert "r1/t1.send" not in spawned_at(workers)


def test_a_sender_dispatched_20_ms_late_is_a_warning_and_the_repetition_holds():
    out, _ = run(
        one_transfer(),
        {
            "t1.recv": receiver(ready_after_ns=100 * MS, exit_at_ns=ZERO + 3 * S),
            "t1.send": sender(late_ns=20 * MS),
        },
    )
    assert out.status == "ok"
    assert out.warnings == ["t1.send dispatched 20.0 ms late"]
    assert out.dispatch[0]["error_ns"] == 20 * MS and out.dispatch[0]["at_ns"] == ZERO


def test_a_sender_dispatched_1_5_s_late_fails_the_repetition_as_the_environments_fault():
    out, _ = run(
        one_transfer(),
        {
            "t1.recv": receiver(ready_after_ns=100 * MS, exit_at_ns=ZERO + 5 * S),
            "t1.send": sender(late_ns=1500 * MS),
        },
    )
    assert out.status == "failed" and out.environment
    assert out.reason == (
        "t1.send was dispatched 1.50 s late (more than 1 s): the engine could not keep the timeline"
    )
    assert out.failed_ns == ZERO + 1500 * MS


def test_the_first_failure_is_the_one_reported_later_ones_change_nothing():
    # a fails at 0.5 s; the emulator's death is noticed in the same step, just after
    procs = [proc("a.send", "l1", 0, "send"), proc("b.send", "l1", 0, "send")]
    out, _ = run(
        procs,
        {
            "a.send": sender(runs_ns=500 * MS, rc=1, tail="x\nboom"),
            "b.send": sender(runs_ns=700 * MS, rc=2),
        },
        emulator_dies_at_ns=ZERO + 500 * MS,
    )
    assert out.status == "failed" and not out.environment
    assert out.reason == "a.send (send on l1) exited with code 1: boom"
    assert out.failed_ns == ZERO + 500 * MS
    # b was still running at the failure: stopped by the shutdown, recorded as such
    assert out.procs["b.send"]["stopped"] is True


def test_the_timeline_ending_with_a_process_running_fails_and_names_it():
    out, _ = run(
        [proc("t1.send", "l1", 0, "send")], {"t1.send": sender(runs_ns=5 * S)}, duration_s=3
    )
    assert out.status == "failed"
    assert out.reason == "the timeline ended (3 s) with 1 process(es) still running: t1.send"
    assert out.failed_ns == ZERO + 3 * S


def test_a_stop_request_interrupts_at_the_next_event_and_is_not_a_failure_of_the_experiment():
    stop = threading.Event()
    stop.set()
    out, _ = run([proc("t1.send", "l1", 0, "send")], {"t1.send": sender()}, stop=stop)
    assert (out.status, out.reason, out.environment) == (
        "interrupted",
        "interrupted by the user",
        False,
    )


def test_an_emulator_that_dies_fails_the_repetition_at_once_as_the_environments_fault():
    out, _ = run(
        [proc("t1.send", "l1", 0, "send")],
        {"t1.send": sender(runs_ns=5 * S)},
        emulator_dies_at_ns=ZERO + 1 * S,
    )
    assert (out.status, out.environment) == ("failed", True)
    assert out.reason == "link emulator rl-rr died (killed by SIGKILL)"
    assert out.failed_ns == ZERO + 1 * S  # noticed within one 0.2 s wait: here, exactly


def test_an_exit_of_an_earlier_repetitions_process_is_ignored():
    stale = (ZERO + 100 * MS, "l1", {"ev": "exited", "id": "r0/t1.send", "rc": 1})
    out, _ = run(
        [proc("t1.send", "l1", 0, "send")], {"t1.send": sender(runs_ns=1 * S)}, extra=[stale], tag=1
    )
    assert out.status == "ok", out.reason
    assert out.end_ns == ZERO + 1 * S
