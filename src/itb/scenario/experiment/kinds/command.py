"""`[[command]]`: any program on a host at a date, optionally held to a rate profile or
a congestion control (its connection named by a control port)."""

from __future__ import annotations

from itb.scenario.experiment.events import Command
from itb.scenario.experiment.kinds.context import Context
from itb.scenario.experiment.sections import CommandSpec
from itb.scenario.experiment.transfer_rules import event_profile
from itb.scenario.testbed.paths import path_rate_bps
from itb.scenario.units import format_rate


def resolve(sections: list[CommandSpec], ctx: Context) -> list[Command]:
    events = []
    for i, c in enumerate(sections):
        where = f"command[{i}]"
        name = ctx.host(c.host, f"{where}.host")
        steps = event_profile(c, where, ctx.source)
        if steps is not None and any(r == 0 for _, r in steps):
            ctx.fail(
                f"{where}.profile", "a command's pacer cannot pause (a rate of 0): a transfer can"
            )
        if steps is not None:
            _within_host(steps, name, where, ctx)
        if c.control_port is not None and not (steps is not None or c.cc is not None):
            ctx.fail(
                f"{where}.control_port",
                "control_port names the connection a profile or cc "
                "leaves alone; this command has neither",
            )
        events.append(
            Command(
                id=ctx.new_id(c.id, f"cmd{i + 1}", f"{where}.id"),
                at_us=ctx.date(c.at, f"{where}.at"),
                host=name,
                argv=c.argv,
                check=c.check,
                wait=c.wait,
                profile=steps,
                cc=c.cc,
                control_port=c.control_port,
                output_limit_bytes=c.output_limit,
            )
        )
    return events


def _within_host(steps: tuple[tuple[int, int], ...], name: str, where: str, ctx: Context) -> None:
    """Where the command sends is its own business: its profile must fit the fastest
    path out of its host."""
    out_bps = [path_rate_bps(ctx.topo, name, other) for other in ctx.hosts if other != name]
    out_limited_bps = [r for r in out_bps if r]
    if out_limited_bps and len(out_limited_bps) == len(out_bps):
        for k, (_at, rate) in enumerate(steps):
            if rate > max(out_limited_bps):
                ctx.fail(
                    f"{where}.profile[{k}]",
                    f"{format_rate(rate)} exceeds "
                    f"{format_rate(max(out_limited_bps))}, the "
                    f"fastest path out of {name}",
                )
