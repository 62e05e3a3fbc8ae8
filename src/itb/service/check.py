"""The checker: every plan re-verified against what was promised, independently of the
planner that made it.

A set of plans on one link is valid when, for each plan, its segments lie inside the
request's window [rt, dt], no rate exceeds max-rate, the rates sum to the request's
volume; and, at every instant, the plans crossing each link (its own access link, and the
shared bottleneck if any: itb.service.network) stay within its capacity. Tolerance:
`model.TOLERANCE` of the quantity checked.
"""

from __future__ import annotations

from itb.service.model import TOLERANCE, Plan, Request
from itb.service.network import Links, Load


def violations(
    requests: dict[str, Request], plans: dict[str, Plan], cap: float | Links
) -> list[str]:
    """What is wrong, one line each; [] when the plans keep every promise."""
    out = []
    for rid, p in plans.items():
        r = requests.get(rid)
        if r is None:
            out.append(f"{rid}: a plan without its request")
            continue
        if not p.segments:
            out.append(f"{rid}: an empty plan")
            continue
        slack = TOLERANCE * max(1.0, r.deadline_s - r.release_s)
        if p.start < r.release_s - slack:
            out.append(f"{rid}: starts at {p.start:.6f}, before its release {r.release_s:.6f}")
        if p.finish > r.deadline_s + slack:
            out.append(f"{rid}: ends at {p.finish:.6f}, after its deadline {r.deadline_s:.6f}")
        for a, b, rate in p.segments:
            if b < a or rate < 0:
                out.append(f"{rid}: a malformed segment ({a}, {b}, {rate})")
            if rate > r.max_rate_bps * (1 + TOLERANCE):
                out.append(f"{rid}: {rate:.0f} bit/s from {a:.6f} above max-rate")
        if abs(p.bits - r.bits) > TOLERANCE * r.bits:
            out.append(f"{rid}: delivers {p.bits / 8:.0f} of {r.volume_bytes} bytes")
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
