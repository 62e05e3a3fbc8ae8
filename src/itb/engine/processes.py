"""One repetition's events as processes on nodes: which program, where, when, logging where.

Receivers (flow recv, flow udp-recv) start in a prelude before the timeline's zero and
must say "ready" before it; senders and commands start at their dates. Every process
logs into the repetition's directory, under nodes/<node>/<event id>.<role>.*, and
every one's stdout and stderr together are bounded: a command's by its `output_limit`
(default 64 MiB), ITB's own programs (which print a few lines) by the same 64 MiB.
Each event kind's processes are its module's (itb.engine.kinds); the types and what
they share are itb.engine.procspec's, named here too.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from itb.engine.kinds import PROCESSES, Builder
from itb.engine.procspec import (
    ACCEPT_SLACK_S,
    BASE_PORT,
    IDLE_TIMEOUT_S,
    PACED_SETUP_S,
    UDP_DRAIN_S,
    ProcSpec,
    RepetitionPlan,
    endpoint,
    prelude_seconds,
)
from itb.scenario.experiment.events import Command, SetLink
from itb.scenario.testbed.model import Topology

__all__ = [
    "ACCEPT_SLACK_S",
    "BASE_PORT",
    "IDLE_TIMEOUT_S",
    "PACED_SETUP_S",
    "UDP_DRAIN_S",
    "ProcSpec",
    "RepetitionPlan",
    "build",
    "endpoint",
    "prelude_seconds",
]


def build(
    events: list,
    topo: Topology,
    rep_dir: Path,
    interval_us: int,
    cc_names: Mapping[str, str] | None = None,
    first_port: int = BASE_PORT + 1,
) -> RepetitionPlan:
    """`cc_names` maps the scenario's canonical congestion controls to the names the
    kernel knows them by here (ITB's eBPF ones are itb_<name>); default: the same.
    The receivers listen on consecutive ports from `first_port` (a session's jobs, which
    run together, each get their own)."""
    kinds = [PROCESSES.get(type(e)) for e in events if not isinstance(e, SetLink)]
    if None in kinds:  # a kind the engine cannot run: a bug of ITB (the timeline made it)
        raise TypeError(f"no processes for {sorted({type(e).__name__ for e in events})}")
    n_listeners = sum(k.LISTENERS for k in kinds if k is not None)
    n_paced = sum(isinstance(e, Command) and e.paced for e in events)
    b = Builder(topo, rep_dir, interval_us, prelude_seconds(n_listeners, n_paced),
                first_port - 1, cc_names)  # fmt: skip
    procs: list[ProcSpec] = []
    sets: list[SetLink] = []
    for e in events:
        if isinstance(e, SetLink):
            sets.append(e)
        else:
            procs += PROCESSES[type(e)].procs(e, b)
    return RepetitionPlan(procs, sets, b.prelude_s)
