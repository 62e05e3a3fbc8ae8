"""`[[command]]`s held to a rate profile (and/or a congestion control) by ITB's cgroup
sock_ops program (`itb.cc.pace`), so that an unmodified program (GridFTP, iperf3)
follows a profile as ITB's own senders do.

Each such command gets a cgroup of its own inside the testbed's (`pace-<event id>`),
created before the repetition's timeline starts, with the pacer attached and set to the
profile's first step: the command is started inside it (`itb-incgroup`), so its first
connection is already paced. The engine then changes the rate at each of the profile's
dates, counted from the command's own date, and records every change's dispatch error
like any event's. At the end of the repetition the cgroup is killed and removed, which
frees the program; the testbed's teardown removes any left by a killed engine.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from itb.backends import cgroup
from itb.backends.host import NetnsHost
from itb.backends.hostside.worker import COARSE_NS, sleep_until
from itb.cc import pace
from itb.errors import BackendError, PreflightError

CGROUP_PREFIX = cgroup.PACE_PREFIX


@dataclass(frozen=True)
class PaceSpec:
    """What holds one command: its cgroup, the profile's (µs, payload bit/s) steps
    (None: unpaced), the kernel name of the congestion control its new connections get
    (None: the host's default) and the port of a connection left alone."""

    cgroup: str
    steps: tuple[tuple[int, int], ...] | None
    cc: str | None
    control_port: int | None


def cgroup_for(event_id: str) -> Path:
    """The cgroup a paced command runs in (inside the testbed's, which must exist)."""
    root = cgroup.for_testbed()
    if root is None:
        raise PreflightError(
            "a [[command]] with a profile or cc needs a cgroup v2 hierarchy "
            "(none is mounted): ITB's pacer is a cgroup sock_ops program"
        )
    return root / f"{CGROUP_PREFIX}{event_id}"


@dataclass
class _Held:
    proc_id: str
    node: str
    at_us: int
    spec: PaceSpec
    pacer: pace.Pacer | None = None
    created: bool = False  # its cgroup was made by this repetition (teardown removes it)


class Pacing:
    """The paced commands of one repetition: `setup` before the timeline's zero,
    `start` at it, `teardown` once the repetition ended (also after a failure)."""

    def __init__(self, procs: list):
        self.held = [_Held(p.id, p.node, p.at_us, p.pace) for p in procs if p.pace is not None]
        self.host = NetnsHost("engine", None)  # bpftool reaches programs and maps by id
        self.thread: threading.Thread | None = None
        self.stopped = threading.Event()
        self.lock = threading.Lock()  # a rate change and the teardown do not overlap

    def setup(self) -> None:
        """Every command's cgroup with the pacer at the first step; BackendError if one
        cannot be made (what was made is torn down)."""
        try:
            for h in self.held:
                path = Path(h.spec.cgroup)
                cgroup.create(path)
                h.created = True
                h.pacer = pacer = pace.attach(self.host, path)
                self._set(pacer, h, h.spec.steps[0][1] if h.spec.steps else None)
        except (BackendError, PreflightError, OSError) as e:
            self.teardown()
            raise BackendError(f"pacing a command: {e}") from None

    def _set(self, pacer: pace.Pacer, h: _Held, rate_bps: int | None) -> None:
        pacer.set(rate_bps, cc=h.spec.cc, skip_port=h.spec.control_port or 0)

    def start(
        self, zero_ns: int, record: Callable[[dict], None], fail: Callable[[str], None]
    ) -> None:
        """Changes the rates at the profiles' later dates from a thread."""
        changes = sorted(
            (
                (zero_ns + (h.at_us + at) * 1000, k, h, rate)
                for h in self.held
                if h.spec.steps
                for k, (at, rate) in enumerate(h.spec.steps)
                if k > 0
            ),
            key=lambda c: (c[0], c[1], c[2].proc_id),
        )
        if not changes:
            return

        def run() -> None:
            for at_ns, k, h, rate in changes:
                # the teardown wakes it at once; the last COARSE_NS slept short and spun
                left = at_ns - time.monotonic_ns() - COARSE_NS
                if self.stopped.wait(max(0.0, left / 1e9)):
                    return
                sleep_until(at_ns)
                with self.lock:
                    pacer = h.pacer
                    if self.stopped.is_set() or pacer is None:
                        return
                    t = time.monotonic_ns()
                    try:
                        self._set(pacer, h, rate)
                    except BackendError as e:
                        fail(f"{h.proc_id}: the rate of step {k} could not be set: {e}")
                        return
                record(
                    {
                        "id": f"{h.proc_id}.step{k}",
                        "node": h.node,
                        "kind": "pace",
                        "at_ns": at_ns,
                        "t_ns": t,
                        "error_ns": t - at_ns,
                        "spawn_ns": time.monotonic_ns() - t,
                    }
                )

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def teardown(self) -> None:
        """Stops the rate changes, kills what is left in each command's cgroup and
        removes it (the program attached to it goes with it)."""
        self.stopped.set()
        if self.thread is not None:
            self.thread.join(timeout=5)
        with self.lock:
            self._remove()

    def _remove(self) -> None:
        errors = []
        for h in self.held:
            try:
                if h.pacer is not None:
                    h.pacer.detach()
                if h.created:
                    cgroup.kill(h.spec.cgroup)
            except BackendError as e:
                errors.append(str(e))
            h.pacer, h.created = None, False
        if errors:
            raise BackendError("; ".join(errors))
