"""The `Recorder` that reads the node workers' events into a repetition's `Outcome`
(itb.backends.outcome: its status and first failure, what each process did, the
dispatch of every timed event, the outputs cut, the warnings), with the events the engine
dispatches itself (link changes, pacing rates). When to wait, send and stop is
itb.engine.execute's (the repetition's rules)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from itb.backends.outcome import Outcome
from itb.engine.processes import ProcSpec

LATE_WARN_NS = 10_000_000  # a dispatch this late is a warning of the run and the report
LATE_FAIL_NS = 1_000_000_000  # this late, the repetition is not the planned experiment


def _exit_text(rc: int) -> str:
    if rc < 0:
        import signal

        try:
            return f"was killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"was killed by signal {-rc}"
    return f"exited with code {rc}"


class Recorder:
    """The events of one repetition's processes, read into its Outcome. Ids on the wire
    carry the repetition (`prefix`): a late event of an earlier repetition (an exit after
    a stop) must not be taken for one of this repetition."""

    def __init__(
        self,
        out: Outcome,
        procs: Sequence[ProcSpec],
        prefix: str,
        stop: threading.Event,
        where: Callable[[str], str],
    ):
        self.out = out
        self.by_id = {p.id: p for p in procs}
        self.prefix = prefix
        self.stop = stop
        self.where = where  # node → on which machine its worker ran, for messages ("")

    def late(self, ident: str, error_ns: int) -> None:
        if error_ns > LATE_FAIL_NS:
            self.out.fail(
                f"{ident} was dispatched {error_ns / 1e9:.2f} s late (more than "
                f"{LATE_FAIL_NS / 1e9:g} s): the engine could not keep the timeline",
                environment=True,
            )
        elif error_ns > LATE_WARN_NS:
            self.out.warnings.append(f"{ident} dispatched {error_ns / 1e6:.1f} ms late")

    def own(self, ev: dict) -> str | None:
        """The event's process id in this repetition; None for another repetition's."""
        ident = ev.get("id")
        if ident is None or not ident.startswith(self.prefix):
            return None
        return ident[len(self.prefix) :]

    def handle(self, node: str, ev: dict, ready: set[str], awaited: set[str]) -> None:
        kind, ident = ev.get("ev"), self.own(ev)
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
                self.late(ident, ev["t_ns"] - ev["at_ns"])
        elif kind == "ready":
            rec["ready_ns"] = ev["t_ns"]
            ready.discard(ident)
        elif kind == "spawn_failed":
            rec["error"] = ev.get("reason")
            self.out.fail(f"{ident} on {node} could not start: {ev.get('reason')}")
        elif kind == "truncated":
            self.truncated(ident, node, ev)
        elif kind == "exited":
            rc = ev["rc"]
            rec.update(exited_ns=ev["t_ns"], rc=rc)
            self.truncated(ident, node, ev)
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
        where = self.where(node)
        doing = sorted(
            i
            for i, r in self.out.procs.items()
            if r.get("node") == node and "dispatched_ns" in r and "exited_ns" not in r
        )
        what = f"; it was running {', '.join(doing)}" if doing else "; nothing of it was running"
        self.out.fail(f"the worker of node {node} died{where}{what}", environment=True)

    def truncated(self, ident: str, node: str, ev: dict) -> None:
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

    def record(self, dispatch: dict) -> None:
        """An event the engine dispatched itself (a link change, a pacing rate)."""
        self.out.dispatch.append(dispatch)
        self.late(dispatch["id"], dispatch["error_ns"])
