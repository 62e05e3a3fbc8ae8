"""Plans as ITB transfers (docs/service.md): what `itb study service` runs, on any testbed.

A planned request becomes a transfer started at `lead + t_s` whose `profile` is its
plan relative to t_s: each segment's rate (rounded up to a whole bit/s), and where the
plan pauses, a rate of 0 (flow then holds its writes as well as its pacing). By default it is sent by TCP without congestion control, paced
(`cc = "nocc"`, INRIA RR-6874's sender). A TS1 request becomes a plain transfer started
at its release, its congestion control sharing the link, paced at its max-rate when that
is below the link's.

The transfer's own clock (and its profile) starts when its connections are up, one RTT
after `at`: a planned transfer is launched one RTT before t_s. Its first RTT sends only
what the receiver's first, unscaled window allows, so a sender paced at its plan would
stay about an RTT behind it to the end: it is paced m / (1 − m) above its plan (the
plans together then stay within B_in) while its writes keep the plan, so it catches up
and is never ahead (`pace_headroom`). Its last byte still arrives half an RTT after the
plan's: a planner that must meet deadlines on the testbed plans each request against
`dt − guard` (`planning_request`), guard = 4 RTT by default.
"""

from __future__ import annotations

import math
from dataclasses import replace

from itb.scenario.experiment.profile import RATE_LO
from itb.service.model import Plan, Request

MIN_STEP_S = 0.001  # shorter segments are folded into their neighbour (µs dates, 1 ms logs)


def planning_request(r: Request, guard_s: float) -> Request:
    """The request a planner sees: its deadline `guard_s` earlier."""
    return replace(r, deadline_s=r.deadline_s - guard_s)


def profile_steps(plan: Plan) -> list[list]:
    """[[s after t_s, "…bit"], …] for a scenario's `profile`."""
    t0 = plan.start
    steps: list[list] = []
    end = t0
    for a, b, r in plan.segments:
        if b - a < MIN_STEP_S and steps:
            steps[-1][1] = max(steps[-1][1], math.ceil(r))  # folded into the step before
            end = b
            continue
        if a - end >= MIN_STEP_S:
            steps.append([round(end - t0, 6), 0])
        at, rate = round(a - t0, 6), max(RATE_LO, math.ceil(r))
        if steps and at <= steps[-1][0]:  # (after a first segment shorter than a µs)
            steps[-1][1] = max(steps[-1][1], rate)
        else:
            steps.append([at, rate])
        end = b
    steps[0][0] = 0.0
    return [[t, f"{r}bit"] for t, r in steps]


def planned_transfer(
    r: Request,
    plan: Plan,
    src: str,
    dst: str,
    lead_s: float,
    rtt_s: float,
    headroom: float,
    mechanism: str = "nocc-pacing",
    payload_share: float = 1.0,
) -> dict:
    """Launched one RTT before t_s: its connection is up, and its profile starts, at t_s.
    <cc>-pacing: paced `headroom` above its plan, its writes keeping the plan (the
    margin's use); <cc>-application: that congestion control under the writes' cap;
    <cc>-tbf: a plan of one rate, kept by a token bucket on the source host (which counts
    frames: the plan's payload rate / `payload_share`). PlanError if the plan has more
    than one rate."""
    cc, enforce = mechanism.split("-")
    t: dict[str, object] = {
        "id": r.id,
        "src": src,
        "dst": dst,
        "at": f"{lead_s + plan.start - rtt_s:.6f}s",
        "volume": f"{r.volume_bytes}B",
        "cc": cc,
    }
    if enforce == "tbf":
        if len(plan.segments) != 1:
            raise PlanError(
                f"{r.id}: a token bucket keeps one rate and its plan has "
                f"{len(plan.segments)} segments (tbf is for one-rate plans: TS2's)"
            )
        t["rate"] = f"{math.ceil(plan.segments[0][2] / payload_share)}bit"
        t["enforce"] = "tbf"
        return t
    t["profile"] = profile_steps(plan)
    if enforce == "application":
        t["enforce"] = "application"
    elif headroom:
        t["pace_headroom"] = round(headroom, 6)
    return t


class PlanError(ValueError):
    """A plan the mechanism asked for cannot keep."""


def shared_transfer(
    r: Request, src: str, dst: str, lead_s: float, cc: str, link_bps: float
) -> dict:
    t = {
        "id": r.id,
        "src": src,
        "dst": dst,
        "at": f"{lead_s + r.release_s:.6f}s",
        "volume": f"{r.volume_bytes}B",
        "cc": cc,
    }
    if r.max_rate_bps < link_bps:
        t["rate"] = f"{math.floor(r.max_rate_bps)}bit"
    return t
