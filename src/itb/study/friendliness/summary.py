"""What `itb study friendliness` prints at the end: each point's groups, their ratio and
what the tested protocol costs the reference."""

from __future__ import annotations

from itb.study.friendliness.args import FriendlinessArgs
from itb.study.friendliness.results import Results
from itb.study.registry import Shown, Table, num
from itb.sweep.sweep import Outcome


def tables(res: Outcome[Results], a: FriendlinessArgs) -> list[Shown]:
    t = Table(
        title=f"inter-protocol fairness against {a.reference} ({res.status})",
        columns=[
            "tested",
            "C_g",
            "T tested (s)",
            "T reference (s)",
            "T reference alone (s)",
            "T_ref / T_tested",
            "failed",
            "reference: next to tested vs alone",
        ],
    )
    for p in res.results.points:
        c = p.reference_cost
        t.rows.append(
            [
                p.tested,
                f"{p.c_g_realised:g}",
                num(p.tested_group.t_mean),
                num(p.reference_group.t_mean),
                num(p.reference_alone.t_mean) if p.reference_alone else "–",
                num(p.ratio) + (f" ± {p.ratio_ci95:.2g}" if p.ratio_ci95 is not None else ""),
                str(p.tested_group.failed + p.reference_group.failed),
                (
                    c.verdict
                    + (f" ({100 * c.difference:+.1f} %)" if c.difference is not None else "")
                )
                if c
                else "–",
            ]
        )
    return [t]
