"""`[[udp]]`: a UDP stream at a rate for a duration (constant or Poisson arrivals)."""

from __future__ import annotations

from itb.scenario.experiment.events import Udp
from itb.scenario.experiment.kinds.context import Context
from itb.scenario.experiment.sections import UdpSpec


def resolve(sections: list[UdpSpec], ctx: Context) -> list[Udp]:
    events = []
    for i, u in enumerate(sections):
        where = f"udp[{i}]"
        src, dst = ctx.pair(u.src, u.dst, where)
        at = ctx.date(u.at, f"{where}.at")
        if at + u.duration > ctx.exp.duration:
            ctx.fail(f"{where}.duration", "the stream would run past the end of the timeline")
        events.append(
            Udp(
                id=ctx.new_id(u.id, f"udp{i + 1}", f"{where}.id"),
                at_us=at,
                src=src,
                dst=dst,
                rate_bps=u.rate,
                duration_us=u.duration,
                size=u.size,
                arrivals=u.arrivals,
                seed=ctx.exp.seed + i,
                wait=u.wait,
            )
        )
    return events
