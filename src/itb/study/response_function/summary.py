"""What `itb study response-function` prints at the end: each algorithm's fit and
decreases, marked against the publications."""

from __future__ import annotations

from itb.study.registry import Shown, Table, num
from itb.study.response_function.args import ResponseArgs
from itb.study.response_function.results import Results
from itb.sweep.sweep import Outcome

MARK: dict[bool | None, str] = {True: " ✓", False: " ✗"}  # None: not judged


def tables(res: Outcome[Results], a: ResponseArgs) -> list[Shown]:
    t = Table(
        title=f"response functions w = c/p^d and decreases β ({res.status})",
        columns=[
            "algorithm",
            "points",
            "d",
            "d published",
            "c",
            "c published",
            "R²",
            "β",
            "β nominal",
            "events",
        ],
    )
    for f in res.results.fits:
        d = num(f.d) + (f" ± {f.d_ci95:.2g}" if f.d_ci95 is not None else "")
        t.rows.append(
            [
                f.cc,
                str(f.n),
                d + MARK.get(f.d_ok, ""),
                num(f.d_published),
                num(f.c),
                num(f.c_published),
                num(f.r2),
                num(f.beta) + MARK.get(f.beta_ok, ""),
                num(f.beta_nominal),
                str(f.events),
            ]
        )
    return [t]
