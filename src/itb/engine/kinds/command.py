"""A `[[command]]`'s process: its argv on its host at its date; held to a profile or a
congestion control, it runs inside its own cgroup from its first instruction."""

from __future__ import annotations

from itb import native
from itb.backends import cgroup
from itb.engine import pacing
from itb.engine.kinds.builder import Builder
from itb.engine.pacing import PaceSpec
from itb.engine.procspec import ProcSpec
from itb.scenario.experiment.events import Command
from itb.scenario.experiment.sections import DEFAULT_OUTPUT_LIMIT

LISTENERS = 0  # processes it starts before the timeline's zero


def procs(e: Command, b: Builder) -> list[ProcSpec]:
    f = b.files(e.host, f"{e.id}.command")
    argv, held = e.argv, None
    if e.paced:
        group = pacing.cgroup_for(e.id)
        held = PaceSpec(str(group), e.profile, b.kernel_cc(e.cc) if e.cc else None, e.control_port)
        # in it from its first instruction, so from its first connection
        argv = (native.binary("itb-incgroup"), str(cgroup.seen_from_nodes(group)), *argv)
    return [
        b.spec(
            f"{e.id}.command", e, "command", e.host, e.at_us, argv, f,
            wait=e.wait, check=e.check, pace=held,
            output_limit_bytes=e.output_limit_bytes or DEFAULT_OUTPUT_LIMIT,
        )
    ]  # fmt: skip
