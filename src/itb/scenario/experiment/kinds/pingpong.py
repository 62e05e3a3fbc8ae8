"""`[[pingpong]]`: request/response exchanges between two hosts (RR-6244's PA)."""

from __future__ import annotations

from itb.scenario.experiment.events import Pingpong
from itb.scenario.experiment.kinds.context import Context
from itb.scenario.experiment.sections import PingpongSpec


def resolve(sections: list[PingpongSpec], ctx: Context) -> list[Pingpong]:
    events = []
    for i, p in enumerate(sections):
        where = f"pingpong[{i}]"
        src, dst = ctx.pair(p.src, p.dst, where)
        events.append(
            Pingpong(
                id=ctx.new_id(p.id, f"pp{i + 1}", f"{where}.id"),
                at_us=ctx.date(p.at, f"{where}.at"),
                src=src,
                dst=dst,
                count=p.count,
                size=p.size,
                reply_size=p.reply_size if p.reply_size != p.size else None,
                cc=p.cc,
                rate_bps=p.rate,
                direction=p.direction or ctx.direction(src, dst),
            )
        )
    return events
