"""The checker: every plan re-verified against what was promised, independently of the
planner that made it.

A set of plans on one link is valid when, for each plan, its segments lie inside the
request's window [rt, dt], do not overlap, their rate (summed wherever segments meet) is
never above max-rate, and they deliver the request's volume; and, at every instant, the
plans crossing each link (its own access link, and the shared bottleneck if any:
itb.service.network) stay within its capacity. Tolerance: `model.TOLERANCE` of the
quantity checked. (The service's own plans, in integers, have an exact checker:
`intplan.violations`.)
"""

from __future__ import annotations

from itb.service.model import TOLERANCE, Plan, Request
from itb.service.network import Links, Load
from itb.service.usage import Usage


def plan_violations(r: Request, p: Plan) -> list[str]:
    """What is wrong with one plan against its request, one line each."""
    rid, out = r.id, []
    if not p.segments:
        return [f"{rid}: an empty plan"]
    slack = TOLERANCE * max(1.0, r.deadline_s - r.release_s)
    if p.start < r.release_s - slack:
        out.append(f"{rid}: starts at {p.start:.6f}, before its release {r.release_s:.6f}")
    if p.finish > r.deadline_s + slack:
        out.append(f"{rid}: ends at {p.finish:.6f}, after its deadline {r.deadline_s:.6f}")
    for a, b, rate in p.segments:
        if not (b >= a and rate >= 0):  # (NaN is neither)
            out.append(f"{rid}: a malformed segment ({a}, {b}, {rate})")
    if out:
        return out
    ordered = sorted(p.segments)
    if any(b0 > a1 for (_, b0, _), (a1, _, _) in zip(ordered, ordered[1:])):
        out.append(f"{rid}: segments overlap")
    own = Usage()
    own.add(p.segments)
    out += [
        f"{rid}: {x:.0f} bit/s from {a:.6f} above max-rate"
        for a, _, x in own.pieces(own.t[0], own.t[-1])
        if x > r.max_rate_bps * (1 + TOLERANCE)
    ] if own.t else []  # fmt: skip
    if abs(p.bits - r.bits) > TOLERANCE * r.bits:
        out.append(f"{rid}: delivers {p.bits / 8:.0f} of {r.volume_bytes} bytes")
    return out


def violations(
    requests: dict[str, Request], plans: dict[str, Plan], cap: float | Links
) -> list[str]:
    """What is wrong, one line each; [] when the plans keep every promise."""
    out = []
    for rid, p in plans.items():
        r = requests.get(rid)
        out += [f"{rid}: a plan without its request"] if r is None else plan_violations(r, p)
    links = Links.of(cap)
    load = Load(links)
    for rid, p in plans.items():
        if rid in requests:
            load.add(requests[rid], p.segments)
    for name, usage in sorted(load.usage.items()):
        c = links.cap(name)
        pieces = usage.pieces(usage.t[0], usage.t[-1]) if usage.t else ()
        out += [
            f"capacity: {r:.0f} bit/s on {name} at {a:.6f} > {c:.0f}"
            for a, _, r in pieces
            if r > c * (1 + TOLERANCE)
        ]
    return out
