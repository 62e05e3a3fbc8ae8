"""One module per event kind of a repetition: the processes it becomes (which program,
on which node, at which date, with which arguments and files). `PROCESSES` maps an
event's type to its module (`procs(event, builder)` and `LISTENERS`, the receivers it
starts before the timeline's zero); itb.engine.processes walks the events through it.
A link change (`SetLink`) is no process: the engine applies it at its date."""

from __future__ import annotations

from types import ModuleType

from itb.engine.kinds import command, pingpong, transfer, udp
from itb.engine.kinds.builder import Builder
from itb.scenario.experiment.events import Command, Pingpong, Transfer, Udp

PROCESSES: dict[type, ModuleType] = {
    Transfer: transfer,
    Pingpong: pingpong,
    Udp: udp,
    Command: command,
}

__all__ = ["PROCESSES", "Builder"]
