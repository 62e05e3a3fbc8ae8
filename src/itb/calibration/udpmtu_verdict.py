"""The MTU-size UDP test's verdict (udpmtu.py measures): the check of what reached the
receiver's interface against the rate and, when it falls short, where the time went (the
link idle for lack of packets, frames released but not at the receiver) and whether the
host was short of CPU for it: the emulator's thread, the sender, the whole host."""

from __future__ import annotations

from itb.calibration.udpmtu import OFFER, Figures
from itb.calibration.verdict import Check

TOLERANCE_PCT = 1.0
EMULATOR_SATURATED_PCT = 90.0  # of one core, for the emulator's thread
# Runnable but waiting for a CPU, % of the window. The emulator's real-time thread waits
# 0.1–0.2 % on an idle 2-core host; the sender, preempted by it, 6–10 % while keeping
# 1.2 × 1 Gbit/s up (up to 36 % with other programs running, the link still busy),
# 26–40 % when it cannot keep 1.2 × 2.5 Gbit/s up. The sender's wait counts only when
# the link idled for lack of packets and the sender waited at least as long as the link
# idled (its waits can account for the pauses; seen in CI: idle 1.2 %, wait 8.8 %).
EMULATOR_WAIT_PCT = 5.0
SENDER_WAIT_PCT = 1.0
HOST_SATURATED_PCT = 95.0  # of all cores
STEAL_PCT = 5.0


def judge(
    f: Figures, quantity: str, tolerance_pct: float = TOLERANCE_PCT
) -> tuple[Check, str | None]:
    """The check, and a warning when the host is short of CPU for this traffic."""
    c = f.rate_bps
    err = 100.0 * (f.arrived_bps - c) / c
    parts = [
        f"offered {_mbps(f.offered_bps)} Mbit/s of frames ({_pps(f.offered_pps)} pps) at "
        f"the emulator's input"
        if f.offered_bps is not None
        else "",
        f"arrived {f.arrived_pps:,.0f} pps (needed {f.needed_pps:,.0f}), "
        f"{f.frame_bytes} B frames counted from the Ethernet header",
        f"{f.window_s:.1f} s window",
    ]
    if f.intervals == 0:
        parts.append("the emulator's log holds no rows for this window")
    if f.departed_bps is not None and f.max_lag_us is not None:  # (set together)
        parts.append(
            f"emulator departures {_mbps(f.departed_bps)} Mbit/s, queue empty in "
            f"{f.empty_ms} of {f.intervals} ms, {f.late} late "
            f"(max {f.max_lag_us / 1000:.1f} ms)"
        )
    for who, run, wait in (
        ("emulator thread", f.emulator_cpu_pct, f.emulator_wait_pct),
        ("sender", f.sender_cpu_pct, f.sender_wait_pct),
    ):
        if run is not None:
            parts.append(f"{who} ran {run:.0f} % of a core, waited for one {wait:.1f} %")
    if f.host_busy_pct is not None:
        parts.append(
            f"host busy {f.host_busy_pct:.0f} % of {f.cores} cores"
            + (f", steal {f.steal_pct:.1f} %" if f.steal_pct else "")
        )
    detail = "; ".join(p for p in parts if p)
    check = Check(
        quantity,
        c / 1e6,
        f.arrived_bps / 1e6,
        "Mbit/s",
        tolerance_pct,
        detail,
        ok=abs(err) <= tolerance_pct,
        error_pct=err,
    )
    if check.ok:
        return check, None
    idle = after = None
    if f.departed_bps is not None:
        idle = max(0.0, 100.0 * (c - f.departed_bps) / c)
        after = 100.0 * (f.departed_bps - f.arrived_bps) / c
    short = []
    if (
        f.emulator_cpu_pct is not None
        and f.emulator_wait_pct is not None  # (set together)
        and (
            f.emulator_cpu_pct >= EMULATOR_SATURATED_PCT or f.emulator_wait_pct >= EMULATOR_WAIT_PCT
        )
    ):
        short.append(
            f"the emulator's thread ran {f.emulator_cpu_pct:.0f} % of a core and waited "
            f"for one {f.emulator_wait_pct:.1f} % of the time; it forwarded "
            f"{f.arrived_pps:,.0f} of the {f.needed_pps:,.0f} packets/s needed "
            f"({100 * (f.arrived_pps / f.needed_pps - 1):+.1f} %)"
        )
    if (
        f.sender_wait_pct is not None
        and idle is not None
        and idle >= 0.1
        and f.sender_wait_pct >= max(SENDER_WAIT_PCT, idle)
    ):
        short.append(
            f"the sender waited for a CPU {f.sender_wait_pct:.1f} % of the time "
            f"(it ran {f.sender_cpu_pct:.0f} % of a core)"
        )
    if f.host_busy_pct is not None and (
        f.host_busy_pct >= HOST_SATURATED_PCT or (f.steal_pct or 0) >= STEAL_PCT
    ):
        short.append(
            f"the host's CPUs were busy {f.host_busy_pct:.0f} % of the time"
            + (f" ({f.steal_pct:.1f} % stolen by the hypervisor)" if f.steal_pct else "")
        )
    where = []
    if idle is not None and idle >= 0.1:
        if f.offered_bps is not None and f.offered_bps < c:
            why = (
                f"the sender offered only {_pps(f.offered_pps)} packets/s, fewer than the "
                f"{f.needed_pps:,.0f} the rate needs"
            )
        else:
            why = "the sender paused longer than the queue lasts" + (
                f"; it offered {_pps(f.offered_pps)} packets/s on average, {OFFER:g} × the "
                f"rate is {OFFER * f.needed_pps:,.0f}"
                if f.offered_pps
                else ""
            )
        where.append(
            f"the link was idle {idle:.1f} % of the window for lack of packets "
            f"(queue empty in {f.empty_ms} of {f.intervals} ms: {why})"
        )
    if after is not None and abs(after) >= 0.1:
        where.append(
            f"{after:+.1f} % between the emulator's departures and the receiver's "
            "interface (released late or refused"
            + (f": {f.refused} frames refused by the kernel" if f.refused else "")
            + ")"
        )
    if short and err < 0:  # too much arriving is never for want of CPU
        check.cause = "short of CPU"
        shortfall = (c - f.arrived_bps) / 1e6
        warning = (
            f"host short of CPU for MTU-size UDP without GSO (UDT's traffic) at "
            f"{OFFER:g} × {c / 1e6:g} Mbit/s: {f.arrived_bps / 1e6:.1f} Mbit/s arrived, "
            f"{shortfall:.1f} Mbit/s ({-err:.2f} %) short; " + "; ".join(short + where)
        )
        return check, warning
    if where:
        check.detail += "; " + "; ".join(where)
    return check, None


def _mbps(bps: float | None) -> str:
    return "?" if bps is None else f"{bps / 1e6:.1f}"


def _pps(pps: float | None) -> str:
    return "?" if pps is None else f"{pps:,.0f}"
