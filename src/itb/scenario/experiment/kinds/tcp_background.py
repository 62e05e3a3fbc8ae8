"""`[[tcp_background]]`: many short TCP flows between host sets, sizes drawn from a
distribution, gaps from an exponential (its flows are drawn per repetition)."""

from __future__ import annotations

from itb.scenario.experiment.events import TcpBackground
from itb.scenario.experiment.kinds.context import Context
from itb.scenario.experiment.sections import TcpBackgroundSpec

MAX_BACKGROUND_FLOWS = 10_000


def resolve(sections: list[TcpBackgroundSpec], ctx: Context) -> list[TcpBackground]:
    events = []
    background_flows = 0.0
    for i, b in enumerate(sections):
        where = f"tcp_background[{i}]"
        for name in b.src:
            ctx.host(name, f"{where}.src")
        for name in b.dst:
            ctx.host(name, f"{where}.dst")
        at = ctx.date(b.at, f"{where}.at")
        if at + b.duration > ctx.exp.duration:
            ctx.fail(f"{where}.duration", "the flows would start past the end of the timeline")
        sz = b.sizes
        if sz.distribution == "pareto" and (sz.shape is None or sz.shape <= 1):
            ctx.fail(
                f"{where}.sizes.shape", "a Pareto size distribution needs shape > 1 (finite mean)"
            )
        if sz.distribution == "weibull" and (sz.shape is None or sz.shape <= 0):
            ctx.fail(f"{where}.sizes.shape", "a Weibull size distribution needs shape > 0")
        background_flows += b.duration / b.mean_gap
        if background_flows > MAX_BACKGROUND_FLOWS:  # over every section, not each
            expected = sum(s.duration / s.mean_gap for s in sections)
            ctx.fail(
                f"{where}.mean_gap",
                f"{expected:.0f} background flows expected in all, more than "
                f"{MAX_BACKGROUND_FLOWS}; use longer mean gaps",
            )
        events.append(
            TcpBackground(
                id=ctx.new_id(b.id, f"bg{i + 1}", f"{where}.id"),
                at_us=at,
                src=b.src,
                dst=b.dst,
                duration_us=b.duration,
                mean_gap_us=b.mean_gap,
                distribution=sz.distribution,
                mean_bytes=sz.mean,
                shape=sz.shape,
                cc=b.cc,
                wait=b.wait,
            )
        )
    return events
