"""Comparing two protocols' completion times: the effect, its interval, a p-value adjusted
for the other comparisons of the same table, and a verdict a reviewer accepts.

The samples are one value per repetition (a repetition's T_mean). The effect is the
difference of means relative to the reference, in %, with a 95 % Welch interval (the
interval of the difference of means, Welch–Satterthwaite degrees of freedom, divided by
the reference's mean). Verdicts, for `tested` against `reference`:

- **faster** / **slower**: the Holm-adjusted p (Welch's t-test, over every comparison of
  the table) is below α = 0.05 *and* the difference is at least the practical margin
  (default 2 %);
- **equivalent**: the 95 % interval of the difference lies inside ± the margin;
- **inconclusive**: neither, or fewer than 2 repetitions on a side, or no variance on
  either side (a t-test is undefined then: no p-value is given). The comparison then
  estimates how many repetitions per protocol would settle it at the observed spread.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel
from scipy.special import stdtr, stdtrit  # Student's t (scipy.stats: a second to import)

ALPHA = 0.05
MARGIN = 0.02  # practical margin: differences under 2 % are not called faster
MAX_REPETITIONS = 1000  # "more than this" when the observed effect sits on the margin

Verdict = Literal["faster", "slower", "equivalent", "inconclusive"]


class Comparison(BaseModel):
    """`tested` against `reference`; difference = (mean tested − mean reference) / mean
    reference, negative when `tested` is faster (shorter completion time)."""

    tested: str
    reference: str
    n_tested: int
    n_reference: int
    mean_tested: float | None
    mean_reference: float | None
    difference: float | None = None  # relative, e.g. -0.05 = 5 % shorter
    difference_ci95: tuple[float, float] | None = None
    difference_se: float | None = None  # standard error of `difference`
    p: float | None = None  # Welch, unadjusted
    p_holm: float | None = None  # adjusted over the table's comparisons
    margin: float = MARGIN
    verdict: Verdict = "inconclusive"
    reason: str = ""
    repetitions_needed: int | None = None  # per protocol, to settle an inconclusive one

    def sentence(self) -> str:
        """One line for a table's footer."""

        def who(name: str, mean: float | None) -> str:
            return f"{name} ({mean:.3g} s)" if mean is not None else name

        t, r = who(self.tested, self.mean_tested), who(self.reference, self.mean_reference)
        what = {
            "faster": f"{t} faster than {r}",
            "slower": f"{t} slower than {r}",
            "equivalent": f"{t} and {r} equivalent within ±{100 * self.margin:.0f} %",
            "inconclusive": f"{t} vs {r} inconclusive",
        }[self.verdict]
        parts = []
        if self.difference is not None:
            parts.append(f"{100 * self.difference:+.1f} %")
            if self.difference_ci95:
                lo, hi = self.difference_ci95
                parts[-1] += f" [{100 * lo:+.1f}, {100 * hi:+.1f}]"
        if self.p_holm is not None:
            parts.append(f"Holm p = {self.p_holm:.3g}")
        if self.reason:
            parts.append(self.reason)
        return f"{what}: {'; '.join(parts)}" if parts else what


def _clean(values: Sequence[float | None]) -> np.ndarray:
    return np.array([v for v in values if v is not None and math.isfinite(v)], dtype=float)


def effect(
    tested: Sequence[float | None],
    reference: Sequence[float | None],
    tested_name: str,
    reference_name: str,
    margin: float = MARGIN,
) -> Comparison:
    """The effect and unadjusted p of one comparison; `decide` gives the verdict once the
    table's p-values are adjusted together."""
    a, b = _clean(tested), _clean(reference)
    mean_tested = float(a.mean()) if a.size else None
    mean_reference = float(b.mean()) if b.size else None
    c = Comparison(
        tested=tested_name,
        reference=reference_name,
        n_tested=a.size,
        n_reference=b.size,
        mean_tested=mean_tested,
        mean_reference=mean_reference,
        margin=margin,
    )
    if mean_tested is None or not mean_reference:  # (no repetition on a side, or a zero mean)
        c.reason = "no completed repetition on one side"
        return c
    c.difference = (mean_tested - mean_reference) / mean_reference
    if a.size < 2 or b.size < 2:
        c.reason = "fewer than 2 repetitions on a side: no spread, no test"
        return c
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    if va + vb == 0:
        c.reason = "no variance on either side: a t-test is undefined"
        return c
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    half = float(stdtrit(df, 0.975) * math.sqrt(va + vb))
    diff = mean_tested - mean_reference
    c.difference_ci95 = ((diff - half) / mean_reference, (diff + half) / mean_reference)
    c.difference_se = math.sqrt(va + vb) / mean_reference
    # Welch's t-test, two-sided: scipy.stats.ttest_ind(equal_var=False) computes the same
    c.p = float(2 * stdtr(df, -abs(diff) / math.sqrt(va + vb)))
    return c


def holm(ps: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment over the p-values given (None: not tested, left out)."""
    idx = [i for i, p in enumerate(ps) if p is not None]
    out: list[float | None] = [None] * len(ps)
    if idx:
        from statsmodels.stats.multitest import multipletests

        adj = multipletests([ps[i] for i in idx], alpha=ALPHA, method="holm")[1]
        for i, p in zip(idx, adj):
            out[i] = float(p)
    return out


def decide(c: Comparison) -> Comparison:
    """The verdict of a comparison whose p_holm is set (or None: not testable)."""
    if c.difference is None or c.difference_ci95 is None:
        c.verdict = "inconclusive"
        return c
    lo, hi = c.difference_ci95
    if -c.margin < lo and hi < c.margin:
        c.verdict, c.reason = "equivalent", ""
    elif c.p_holm is not None and c.p_holm < ALPHA and abs(c.difference) >= c.margin:
        c.verdict, c.reason = ("faster" if c.difference < 0 else "slower"), ""
    else:
        c.verdict = "inconclusive"
        c.repetitions_needed = _repetitions_needed(c)
        c.reason = (
            f"at least {c.repetitions_needed} repetitions per protocol needed to settle it"
            if c.repetitions_needed and c.repetitions_needed <= MAX_REPETITIONS
            else f"the difference sits on the ±{100 * c.margin:.0f} % margin: more than "
            f"{MAX_REPETITIONS} repetitions would be needed"
        )
    return c


def _repetitions_needed(c: Comparison) -> int | None:
    """Repetitions per protocol for the 95 % interval to clear the margin on the side the
    difference lies on (inside it: equivalence; beyond it: a difference), at the spread
    observed and with the degrees of freedom of that many repetitions."""
    if c.difference is None or not c.difference_se:
        return None
    target = abs(abs(c.difference) - c.margin)
    if target <= 0:
        return None
    n = (c.n_tested + c.n_reference) / 2
    # the standard error shrinks as sqrt(n / m) with m repetitions on each side
    for m in range(int(n) + 1, MAX_REPETITIONS + 1):
        if stdtrit(2 * m - 2, 0.975) * c.difference_se * math.sqrt(n / m) < target:
            return m
    return MAX_REPETITIONS + 1


def compare_all(
    pairs: Sequence[tuple[str, Sequence[float | None], str, Sequence[float | None]]],
    margin: float = MARGIN,
) -> list[Comparison]:
    """Every comparison of one table: effects, Holm over all of them, verdicts."""
    cs = [effect(a, b, an, bn, margin) for an, a, bn, b in pairs]
    for c, p in zip(cs, holm([c.p for c in cs])):
        c.p_holm = p
    return [decide(c) for c in cs]
