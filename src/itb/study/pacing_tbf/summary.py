"""What `itb study pacing-vs-tbf` prints at the end: one row per point, the token bucket
and pacing side by side, and the comparison."""

from __future__ import annotations

from itb.draw.html import pm
from itb.study.pacing_tbf.args import PacingTbfArgs
from itb.study.pacing_tbf.results import Results
from itb.study.registry import Shown, Table
from itb.sweep.sweep import Outcome


def tables(res: Outcome[Results], a: PacingTbfArgs) -> list[Shown]:
    r = res.results
    by = {(c.cc, c.rtt_ms, c.buffer_bytes, c.pattern, c.mechanism): c for c in r.cells}
    t = Table(
        title=f"token bucket vs pacing ({res.status}): C = {a.capacity_bps / 1e6:g} Mbit/s, "
        f"each source host limited to {a.limit_bps / 1e6:g} Mbit/s; T in s and T / ideal, "
        "mean over repetitions ± 95 % interval",
        columns=[
            "cc",
            "RTT (ms)",
            "buffer (MB)",
            "pattern",
            "T tbf",
            "T pacing",
            "T/ideal tbf",
            "T/ideal pacing",
            "Jain tbf",
            "Jain pacing",
            "token bucket vs pacing",
        ],
    )
    for p in r.penalties:
        tb = by[(p.cc, p.rtt_ms, p.buffer_bytes, p.pattern, "tbf")]
        pc = by[(p.cc, p.rtt_ms, p.buffer_bytes, p.pattern, "pacing")]
        c = p.comparison
        t.rows.append(
            [
                p.cc,
                f"{p.rtt_ms:g}",
                f"{p.buffer_bytes / 1e6:g}",
                p.pattern,
                pm(tb.t_mean, tb.t_mean_ci95, 2),
                pm(pc.t_mean, pc.t_mean_ci95, 2),
                pm(tb.slowdown, tb.slowdown_ci95, 3),
                pm(pc.slowdown, pc.slowdown_ci95, 3),
                pm(tb.jain, tb.jain_ci95, 3),
                pm(pc.jain, pc.jain_ci95, 3),
                c.verdict + (f" ({100 * c.difference:+.1f} %)" if c.difference is not None else ""),
            ]
        )
    return [t]
