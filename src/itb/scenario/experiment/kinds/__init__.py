"""One module per event kind of a scenario's timeline: each resolves its sections
(`[[transfer]]`, `[[pingpong]]`, …) against the testbed into events, checking what
would fail at run time for a reason visible in the file (`Context`: the checks every
kind shares). `KINDS`, in the order the timeline resolves them (the first error a file
has is the one reported), is the one list `timeline.resolve` walks: a new kind is a
module here and its entry."""

from __future__ import annotations

from collections.abc import Callable

from itb.scenario.experiment.kinds import (
    command,
    pingpong,
    set_link,
    tcp_background,
    transfer,
    udp,
)
from itb.scenario.experiment.kinds.context import Context

# (the ScenarioSections field holding its sections, its resolver)
KINDS: tuple[tuple[str, Callable[[list, Context], list]], ...] = (
    ("transfer", transfer.resolve),
    ("pingpong", pingpong.resolve),
    ("udp", udp.resolve),
    ("tcp_background", tcp_background.resolve),
    ("set", set_link.resolve),
    ("command", command.resolve),
)

__all__ = ["KINDS", "Context"]
