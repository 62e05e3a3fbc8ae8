"""Fair-share ideal: completion times under a fluid max-min fair model of one bottleneck.

It answers "how long would these transfers take if the link were shared perfectly?",
the yardstick against which a protocol's measured completion times are compared. This is
ITB's only fair-share computation: every fair share a run, a report or a study shows comes
from `ideal_completion_times` on the payload rates the path can carry (docs/metrics.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# Two event times closer than this (relative) are the same event: float residue of
# remaining/rate must not create a spurious extra step.
_REL_TOL = 1e-12


def _check_rate(value: float | None, what: str) -> float:
    """None means unlimited (inf); otherwise the rate must be a finite positive number."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return math.inf
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{what} must be a positive finite rate or None, got {value!r}")
    return v


def max_min_rates(
    caps: Sequence[float], capacity: float, weights: Sequence[float] | None = None
) -> list[float]:
    """Water-filling: weighted max-min fair rates of flows with rate caps sharing
    `capacity` (a flow of weight w gets w shares: a transfer of w parallel TCP streams
    is w connections to the link).

    Flows whose cap is below their share get their cap; what they leave is shared by the
    others in proportion to their weights. inf means no cap / unlimited capacity.
    """
    w = [1.0] * len(caps) if weights is None else [float(x) for x in weights]
    if len(w) != len(caps) or any(not math.isfinite(x) or x <= 0 for x in w):
        raise ValueError(f"weights must be positive and one per flow, got {weights!r}")
    rates = [0.0] * len(caps)
    left, weight_left = capacity, sum(w)
    for i in sorted(range(len(caps)), key=lambda i: caps[i] / w[i]):
        rates[i] = min(caps[i], w[i] * left / weight_left)
        left -= rates[i]
        weight_left -= w[i]
    return rates


def ideal_completion_times(
    starts_s: Sequence[float],
    volumes_bytes: Sequence[float],
    caps_bps: Sequence[float | None],
    capacity_bps: float | None,
    payload_share: float = 1.0,
    streams: Sequence[int] | None = None,
) -> list[float]:
    """Completion duration (finish - start, s) of each transfer under max-min fair sharing.

    Transfer i starts at starts_s[i], moves volumes_bytes[i]*8 bits, never exceeds
    caps_bps[i] (None = no cap), and all share one link of capacity_bps (None = unlimited)
    per stream: a transfer of streams[i] parallel connections gets that many shares
    (None: one each).
    Rates are recomputed exactly at each start and finish (no time stepping).
    `payload_share` scales the link capacity and every cap, turning wire rates into
    payload rates (e.g. 1448/1514 for TCP with timestamps over MTU 1500).
    """
    n = len(starts_s)
    if len(volumes_bytes) != n or len(caps_bps) != n:
        raise ValueError("starts_s, volumes_bytes and caps_bps must have the same length")
    weights = [1.0] * n if streams is None else [float(k) for k in streams]
    if len(weights) != n or any(not math.isfinite(k) or k < 1 for k in weights):
        raise ValueError(f"streams must be one count >= 1 per transfer, got {streams!r}")
    if not 0 < payload_share <= 1:  # also rejects NaN
        raise ValueError(f"payload_share must be in (0, 1], got {payload_share!r}")
    starts = [float(s) for s in starts_s]
    if any(not math.isfinite(s) for s in starts):
        raise ValueError("starts_s must be finite")
    remaining = [float(v) * 8 for v in volumes_bytes]
    if any(not math.isfinite(r) or r < 0 for r in remaining):
        raise ValueError("volumes_bytes must be finite and >= 0")
    caps = [_check_rate(c, f"caps_bps[{i}]") * payload_share for i, c in enumerate(caps_bps)]
    capacity = _check_rate(capacity_bps, "capacity_bps") * payload_share
    if math.isinf(capacity) and any(math.isinf(c) and remaining[i] > 0 for i, c in enumerate(caps)):
        raise ValueError("a transfer with no cap on an unlimited link has no finite duration")

    finish: list[float | None] = [None] * n
    pending = sorted(range(n), key=lambda i: starts[i])  # not yet started
    active: list[int] = []
    t = starts[pending[0]] if pending else 0.0
    while pending or active:
        while pending and starts[pending[0]] <= t:
            i = pending.pop(0)
            if remaining[i] == 0:
                finish[i] = starts[i]  # nothing to send
            else:
                active.append(i)
        if not active:  # idle link: jump to the next start, if any
            if pending:
                t = starts[pending[0]]
            continue
        rates = max_min_rates([caps[i] for i in active], capacity, [weights[i] for i in active])
        to_finish = [remaining[i] / r for i, r in zip(active, rates)]
        dt = min(to_finish)
        if pending:
            dt = min(dt, starts[pending[0]] - t)
        t_next = t + dt
        still: list[int] = []
        for i, r, tf in zip(active, rates, to_finish):
            if tf <= dt * (1 + _REL_TOL):
                remaining[i] = 0.0
                finish[i] = t_next
            else:
                remaining[i] -= r * dt
                still.append(i)
        active, t = still, t_next
    return [f - s for f, s in zip(finish, starts)]  # type: ignore[operator]


def fair_share_summary(
    starts_s: Sequence[float],
    volumes_bytes: Sequence[float],
    caps_bps: Sequence[float | None],
    capacity_bps: float | None,
    measured_s: Sequence[float | None] | None = None,
    payload_share: float = 1.0,
    streams: Sequence[int] | None = None,
) -> dict:
    """Ideal durations and their mean/max; with `measured_s`, how far the measured mean is.

    difference_pct = (mean measured / mean ideal - 1) * 100 over the transfers that
    completed (NaN/None in measured_s = failed, left out of both means so they stay paired).
    """
    ideal = ideal_completion_times(
        starts_s, volumes_bytes, caps_bps, capacity_bps, payload_share, streams
    )
    out: dict = {
        "ideal_s": ideal,
        "ideal_mean_s": sum(ideal) / len(ideal) if ideal else None,
        "ideal_max_s": max(ideal) if ideal else None,
        "payload_share": float(payload_share),
    }
    if measured_s is not None:
        if len(measured_s) != len(ideal):
            raise ValueError("measured_s must have one value per transfer")
        out |= compare_to_ideal(measured_s, ideal)
    return out


def compare_to_ideal(measured_s: Sequence[float | None], ideal_s: Sequence[float]) -> dict:
    """Paired comparison: means of measured and ideal durations over completed transfers."""
    pairs = [
        (float(m), float(i))
        for m, i in zip(measured_s, ideal_s)
        if m is not None and math.isfinite(float(m))
    ]
    if not pairs:
        return {
            "n_compared": 0,
            "measured_mean_s": None,
            "compared_ideal_mean_s": None,
            "difference_pct": None,
        }
    measured = sum(m for m, _ in pairs) / len(pairs)
    ideal = sum(i for _, i in pairs) / len(pairs)
    return {
        "n_compared": len(pairs),
        "measured_mean_s": measured,
        "compared_ideal_mean_s": ideal,
        "difference_pct": (measured / ideal - 1) * 100 if ideal > 0 else None,
    }


def source_cap_bps(
    link_bps: float | None, pacing_bps: float | None, payload_share: float = 1.0
) -> float | None:
    """A source's cap for the model, as a wire rate: its access link's rate, or its pacing
    cap divided by the payload share, whichever is lower; None = no cap.

    The model scales caps by `payload_share` to get payload rates, which is right for a
    link (it carries frames) but not for a pacing cap: Linux paces a TCP socket's payload
    (tcp_update_skb_after_send charges the data skb's length against sk_pacing_rate), so
    a source paced at R moves R of payload. Dividing by the share here gives it back R.
    None, NaN or 0 mean no limit of that kind.
    """
    if not 0 < payload_share <= 1:  # also rejects NaN
        raise ValueError(f"payload_share must be in (0, 1], got {payload_share!r}")
    caps = []
    if link_bps is not None and not math.isnan(float(link_bps)) and float(link_bps) != 0:
        caps.append(_check_rate(link_bps, "link_bps"))
    if pacing_bps is not None and not math.isnan(float(pacing_bps)) and float(pacing_bps) != 0:
        caps.append(_check_rate(pacing_bps, "pacing_bps") / payload_share)
    return min(caps) if caps else None


def tcp_payload_share(mtu: int = 1500, ipv6: bool = False, timestamps: bool = True) -> float:
    """Share of an Ethernet frame's bytes that is TCP payload for full-size segments.

    payload = MTU - IP header - TCP header (- 12 B timestamp option); frame = MTU + 14 B
    Ethernet header (what the link emulator counts). 1500, IPv4, timestamps: 1448/1514.
    """
    if mtu <= 0:
        raise ValueError(f"mtu must be positive, got {mtu!r}")
    headers = (40 if ipv6 else 20) + 20 + (12 if timestamps else 0)
    if mtu <= headers:
        raise ValueError(f"mtu {mtu} leaves no room for TCP payload")
    return (mtu - headers) / (mtu + 14)
