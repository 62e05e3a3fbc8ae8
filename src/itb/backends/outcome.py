"""What one repetition ended as, whatever testbed ran it (`Outcome`): its status and
first failure, what each process did, the dispatch of every timed event, the outputs
cut, the warnings. A testbed of hosts fills it from its processes' events
(itb.engine.outcome.Recorder), a simulator from what the simulation said; the engine
commits it as the repetition's result.json."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field


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
    # the share of the CPU time the hypervisor stole during the repetition (itb.engine.steal;
    # None: not measured, e.g. on SSH hosts)
    cpu_steal: float | None = None
    now_ns: Callable[[], int] = field(default=time.monotonic_ns, repr=False, compare=False)

    def fail(self, reason: str, status: str = "failed", environment: bool = False) -> None:
        if self.status == "ok":  # the first cause is the one worth reporting
            self.status, self.reason, self.environment = status, reason, environment
            self.failed_ns = self.now_ns()

    def cut_short(self, duration_us: int, running: Iterable[str]) -> None:
        """The timeline ended before these awaited processes did (emulated or simulated:
        the same message; a simulated transfer is named as its processes, id.recv and
        id.send)."""
        names = sorted(running)
        self.fail(
            f"the timeline ended ({duration_us / 1e6:g} s) with {len(names)} process(es) "
            f"still running: {', '.join(names[:5])}"
        )

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
            "cpu_steal": self.cpu_steal,
        }
