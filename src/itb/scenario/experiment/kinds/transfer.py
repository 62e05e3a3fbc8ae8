"""`[[transfer]]`: bulk transfers (TCP or UDT), a group of sources × destinations
expanded into one event each, spaced; a rate, a profile (kept by pacing, the
application or a token bucket), files, a deadline."""

from __future__ import annotations

from itb.scenario.experiment import files
from itb.scenario.experiment import profile as profiles
from itb.scenario.experiment.events import Transfer
from itb.scenario.experiment.kinds.context import Context
from itb.scenario.experiment.sections import UDT_NATIVE, TransferSpec
from itb.scenario.experiment.transfer_rules import (
    event_profile,
    udt_profile,
    within_deadline,
    within_path,
)
from itb.scenario.testbed.paths import path_rate_bps

Steps = tuple[tuple[int, int], ...] | None


def resolve(sections: list[TransferSpec], ctx: Context) -> list[Transfer]:
    events: list[Transfer] = []
    for i, t in enumerate(sections):
        events += _resolve_one(i, t, ctx)
    return events


def _resolve_one(i: int, t: TransferSpec, ctx: Context) -> list[Transfer]:
    where = f"transfer[{i}]"
    srcs, dsts = t.src, t.dst
    n = max(len(srcs), len(dsts))
    for name, group in (("src", srcs), ("dst", dsts)):
        if len(group) not in (1, n):
            ctx.fail(
                f"{where}.{name}",
                f"a group needs as many sources as destinations "
                f"(or one of either): {len(srcs)} vs {len(dsts)}",
            )
    spacing = ctx.exp.spacing if t.spacing is None else t.spacing
    base = t.id or f"t{i + 1}"
    if (t.source_file or t.sink_file) and (t.streams != 1 or n != 1):
        ctx.fail(f"{where}.streams", "a transfer from or to a file is one transfer of one stream")
    src_file = files.confine(
        t.source_file, ctx.exp.files_dir, ctx.source, f"{where}.source_file",
        sink=False, overwrite=False,
    )  # fmt: skip
    sink_file = files.confine(
        t.sink_file, ctx.exp.files_dir, ctx.source, f"{where}.sink_file",
        sink=True, overwrite=t.overwrite,
    )  # fmt: skip
    steps = _steps(t, where, ctx)
    events = []
    for k in range(n):
        src, dst = ctx.pair(srcs[k % len(srcs)], dsts[k % len(dsts)], where)
        if steps is not None:
            within_path(
                steps, path_rate_bps(ctx.topo, src, dst), src, dst, f"{where}.profile", ctx.fail
            )
        at = ctx.date(t.at + k * spacing, f"{where}.at" if k == 0 else f"{where}.spacing")
        events.append(
            Transfer(
                id=ctx.new_id(None, base if n == 1 else f"{base}.{k + 1}", f"{where}.id"),
                at_us=at,
                src=src,
                dst=dst,
                volume=t.volume,
                cc="udt" if t.protocol == "udt" else t.cc,
                streams=t.streams,
                rate_bps=t.rate if t.protocol == "tcp" or steps is None else None,
                udt_control="native" if t.protocol == "udt" and steps is None else "fixed",
                direction=t.direction or ctx.direction(src, dst),
                source_file=src_file,
                sink_file=sink_file,
                wait=t.wait,
                profile=steps,
                enforce=t.enforce,
                protocol=t.protocol,
                deadline_us=t.deadline,
                socket_buffer_bytes=t.socket_buffer,
                pace_headroom=t.pace_headroom,
            )
        )
        if t.deadline is not None:
            within_deadline(
                t, steps, path_rate_bps(ctx.topo, src, dst), f"{where}.deadline", ctx.fail
            )
    _ends_in_time(t, steps, t.at + (n - 1) * spacing, where, ctx)
    return events


def _steps(t: TransferSpec, where: str, ctx: Context) -> Steps:
    """The transfer's profile (or None), checked against how it is kept."""
    steps = event_profile(t, where, ctx.source)
    if t.enforce == "application" and t.rate is None and steps is None:
        ctx.fail(
            f"{where}.enforce",
            'enforce = "application" caps a rate or a profile; this transfer has neither',
        )
    if t.enforce == "tbf" and (t.rate is None or steps is not None):
        ctx.fail(
            f"{where}.enforce",
            'enforce = "tbf" keeps one rate with a token bucket on the source host: '
            "give rate, and no profile",
        )
    if t.pace_headroom and (steps is None or t.enforce != "pacing" or t.protocol != "tcp"):
        ctx.fail(
            f"{where}.pace_headroom",
            "pace_headroom is for a TCP transfer whose profile the pacing keeps",
        )
    if t.protocol == "udt":
        steps = udt_profile(t, steps, ctx.topo, where, ctx.fail)
    elif t.cc == UDT_NATIVE:
        ctx.fail(f"{where}.cc", 'cc = "udt" is UDT\'s own congestion control: add protocol = "udt"')
    return steps


def _ends_in_time(t: TransferSpec, steps: Steps, last: int, where: str, ctx: Context) -> None:
    """A transfer the timeline waits for must be able to end before it does."""
    duration = ctx.exp.duration
    if steps is not None:
        needs_us = profiles.time_to_send_us(steps, t.volume)
        if t.wait and last + needs_us > duration:
            ctx.fail(
                f"{where}.volume",
                f"{t.volume} bytes need {needs_us / 1e6:.3g} s at the "
                f"profile's rates: past the end of the timeline "
                f"({duration / 1e6:g} s)",
            )
        return
    fastest = min(r for r in (t.rate, ctx.top_rate_bps) if r)
    if t.wait and last + t.volume * 8e6 / fastest > duration:  # (adverse: stopped)
        ctx.fail(
            f"{where}.volume",
            f"{t.volume} bytes cannot arrive before the end of the "
            f"timeline ({duration / 1e6:g} s) even at "
            f"{fastest / 1e6:g} Mbit/s, the fastest this path allows",
        )
