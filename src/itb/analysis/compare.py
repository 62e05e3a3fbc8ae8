"""Comparing protocols' completion times against a reference fixed before the data: the
ratio of means with an interval, and a verdict whose error rate holds over a whole table
(docs/benchmark.md, "The table and the comparisons").

The samples are one value per repetition (a repetition's T_mean). For `tested` against
`reference`, ρ = μ_tested / μ_reference and the difference is ρ̂ − 1 (x̄_tested / x̄_reference
− 1: negative when `tested` is faster). A table's m comparisons (its *family*) share the
error rate α = 0.05: Holm's (1979) step-down for "faster"/"slower" (the comparisons by
increasing p, the i-th tested at α/(m − i + 1) while every one before it was rejected), the
Bonferroni level α/m for "equivalent" and for the intervals of undecided comparisons.

- **test**: Welch's statistic (x̄_t − ρ·x̄_r) / sqrt(s_t²/n_t + ρ²·s_r²/n_r) on Hsu's (1938)
  degrees of freedom, min(n_t, n_r) − 1: Welch–Satterthwaite's degrees of freedom make the
  test permissive with few repetitions when the spreads differ (a false "faster" in 6–7 %
  of tables at 3–5 repetitions where the level says 5 %), Hsu's never are (Scheffé 1970);
- **interval**: Fieller's (1954) for the ratio of two independent means: the ratios ρ that
  this test does not reject at the comparison's level. The reference's own spread is in it
  (unlike dividing the interval of the difference by x̄_r); it is unbounded when the
  reference's mean is not clear of 0 at the same level (t = x̄_r / (s_r/√n_r) with n_r − 1
  degrees of freedom): then no verdict;
- **faster** / **slower**: Holm rejects ρ = 1 (the interval, at the level of the
  comparison's step, excludes 1) and |ρ̂ − 1| is at least the practical margin (default 2 %);
- **equivalent**: the interval at α/m lies inside 1 ± the margin (both ρ = 1 ± margin
  rejected);
- **inconclusive**: neither, or fewer than 2 repetitions on a side, or no variance on
  either side. It then says how many repetitions per protocol, n each, would give a
  verdict at the Bonferroni level α/m (n − 1 degrees of freedom) if the means and standard
  deviations stayed as observed.

A sequential design (itb.analysis.sequential) looks at the data several times and gives
each look a part α_j of α: each look is such a table at α_j.
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
VERDICTS: tuple[Verdict, ...] = ("inconclusive", "faster", "slower", "equivalent")  # codes


class Comparison(BaseModel):
    """`tested` against `reference`; difference = mean tested / mean reference − 1,
    negative when `tested` is faster (shorter completion time)."""

    tested: str
    reference: str
    n_tested: int
    n_reference: int
    mean_tested: float | None
    mean_reference: float | None
    sd_tested: float | None = None  # sample standard deviations (n − 1)
    sd_reference: float | None = None
    family: int = 1  # comparisons of the table, m
    alpha: float = ALPHA  # the error rate the table's look spent (α, or α_j of a sequence)
    confidence: float = 1 - ALPHA  # the interval's level: 1 − α/m, or its Holm step's
    difference: float | None = None  # relative, e.g. -0.05 = 5 % shorter
    difference_ci: tuple[float, float] | None = None  # Fieller's, at `confidence`
    p: float | None = None  # Welch's statistic on Hsu's df, unadjusted
    p_adjusted: float | None = None  # Holm's adjusted p, to hold against `alpha`
    margin: float = MARGIN
    verdict: Verdict = "inconclusive"
    reason: str = ""
    repetitions_needed: int | None = None  # per protocol, to settle an inconclusive one
    look: int | None = None  # a sequence's look (1, 2, …) that decided it, or its last
    stopped_by: str | None = None  # what ended an undecided one's repetitions, if not the rule

    @property
    def cov_tested(self) -> float | None:
        """The tested protocol's observed coefficient of variation (sd / mean)."""
        return _cov(self.sd_tested, self.mean_tested)

    @property
    def cov_reference(self) -> float | None:
        return _cov(self.sd_reference, self.mean_reference)

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
            if self.difference_ci:
                lo, hi = self.difference_ci
                parts[-1] += f" [{100 * lo:+.1f}, {100 * hi:+.1f}] ({self.level_text} interval)"
        if self.p_adjusted is not None:
            held = f" against {self.alpha:.3g}" if self.alpha != ALPHA else ""
            holm = "Holm-adjusted " if self.family > 1 else ""
            parts.append(f"{holm}p = {self.p_adjusted:.3g}{held}")
        if self.reason:
            parts.append(self.reason)
        return f"{what}: {'; '.join(parts)}" if parts else what

    def why_undecided(self) -> str:
        """Why an inconclusive comparison is so and what it would take: the observed CoV
        of both protocols, the reason, and whether the budget stopped it."""
        covs = [
            f"{name} {100 * cov:.2g} %"
            for name, cov in ((self.tested, self.cov_tested), (self.reference, self.cov_reference))
            if cov is not None
        ]
        parts = [f"CoV {', '.join(covs)}" if covs else "", self.reason]
        if self.stopped_by:
            parts.append(f"the {self.stopped_by} stopped its repetitions")
        return "; ".join(x for x in parts if x)

    @property
    def level_text(self) -> str:
        """The interval's level, e.g. "98.3 %"."""
        return f"{100 * self.confidence:.3g} %"


def _cov(sd: float | None, mean: float | None) -> float | None:
    return sd / mean if sd is not None and mean else None


# --- the rule, vectorised (the table's comparisons, or a simulation's tables, at once) ----


def hsu_df(nt, nr):
    """Hsu's degrees of freedom for Welch's statistic: min(n_t, n_r) − 1."""
    return np.minimum(nt, nr) - 1


def _welch_p(mt, vt, nt, mr, vr, nr, rho):
    """Two-sided p of the test of μ_t − ρ·μ_r = 0 (sample variances vt, vr): Welch's
    statistic on Hsu's degrees of freedom."""
    a, b = vt / nt, rho**2 * vr / nr
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(mt - rho * mr) / np.sqrt(a + b)
    return 2 * stdtr(hsu_df(nt, nr), -t)


def _bounded(mr, vr, nr, family):
    """Fieller's set is an interval (bounded): the reference's mean is clear of 0 at the
    table's level (as ρ grows the statistic tends to x̄_r / (s_r/√n_r), n_r − 1 df)."""
    with np.errstate(divide="ignore"):
        t = np.abs(mr) / np.sqrt(vr / nr)
    return family * 2 * stdtr(nr - 1, -t) < ALPHA


def verdict_codes(mt, vt, nt, mr, vr, nr, family, margin=MARGIN) -> np.ndarray:
    """The verdict of each comparison (an index into VERDICTS) from the means, sample
    variances and repetitions of both sides (n ≥ 2, variances not both 0), broadcast."""
    mt, vt, nt, mr, vr, nr = np.broadcast_arrays(
        *(np.asarray(x, float) for x in (mt, vt, nt, mr, vr, nr))
    )

    def rejects(rho):
        return family * _welch_p(mt, vt, nt, mr, vr, nr, rho) < ALPHA

    ok = _bounded(mr, vr, nr, family)
    d = mt / mr - 1
    differs = ok & rejects(1.0) & (np.abs(d) >= margin)
    inside = ok & (np.abs(d) < margin) & rejects(1 - margin) & rejects(1 + margin)
    codes = np.zeros(mt.shape, dtype=int)
    codes[differs & (d < 0)] = 1
    codes[differs & (d > 0)] = 2
    codes[inside] = 3
    return codes


def look_codes(
    mt, vt, nt, mr, vr, nr, family, alpha=ALPHA, margin=MARGIN, live=None, rejected_before=0
) -> tuple[np.ndarray, np.ndarray]:
    """One look at tables (the last axis: a table's comparisons, `family` = m of them in
    all) spending `alpha`: each comparison's verdict code (an index into VERDICTS) and the
    level its interval is read at, as the multiplier f of α/f (the test's level α·f⁻¹ =
    the look's Holm step for a faster/slower, α_look/m otherwise).

    Holm's step-down over the `live` comparisons (those still to decide, with data) by
    increasing p, after `rejected_before` decided faster/slower at earlier looks: the i-th
    (from 0) at alpha / (m − rejected_before − i), while every one before it was rejected.
    Equivalence at the Bonferroni level alpha / m."""
    mt, vt, nt, mr, vr, nr = np.broadcast_arrays(
        *(np.asarray(x, float) for x in (mt, vt, nt, mr, vr, nr))
    )
    live = np.ones(mt.shape, bool) if live is None else np.broadcast_to(live, mt.shape)
    bonf = family * ALPHA / alpha  # α_look / m = ALPHA / bonf
    ok = live & _bounded(mr, vr, nr, bonf)
    with np.errstate(invalid="ignore"):
        p = np.where(ok, _welch_p(mt, vt, nt, mr, vr, nr, 1.0), np.inf)
    order = np.argsort(p, axis=-1, kind="stable")
    left = family - np.asarray(rejected_before, float)[..., None]
    steps = np.maximum(left - np.arange(mt.shape[-1]), 1)  # m − R − i
    passed = np.cumprod(np.take_along_axis(p, order, -1) < alpha / steps, axis=-1)
    rejected, level = np.zeros(mt.shape, bool), np.full(mt.shape, bonf)
    np.put_along_axis(rejected, order, passed.astype(bool), -1)
    np.put_along_axis(level, order, np.where(passed, steps * ALPHA / alpha, bonf), -1)
    d = mt / mr - 1
    differs = rejected & (np.abs(d) >= margin)

    def rejects(rho):
        return bonf * _welch_p(mt, vt, nt, mr, vr, nr, rho) < ALPHA

    with np.errstate(invalid="ignore"):
        inside = ok & ~differs & (np.abs(d) < margin) & rejects(1 - margin) & rejects(1 + margin)
    codes = np.zeros(mt.shape, dtype=int)
    codes[differs & (d < 0)] = 1
    codes[differs & (d > 0)] = 2
    codes[inside] = 3
    return codes, np.where(differs, level, bonf)


def fieller(mt, vt, nt, mr, vr, nr, family) -> tuple[np.ndarray, np.ndarray]:
    """Fieller's interval of ρ = μ_t / μ_r at level 1 − α/m (`family` = m, or α/`family`
    any level; Hsu's degrees of freedom), NaN where unbounded: from ρ̂ outwards, the first ratio each way
    that the test rejects, by doubling steps then bisection."""
    mt, vt, nt, mr, vr, nr = np.broadcast_arrays(
        *(np.asarray(x, float) for x in (mt, vt, nt, mr, vr, nr))
    )
    a, c = vt / nt, vr / nr
    rho = mt / mr
    step = np.sqrt(a + rho**2 * c) / np.abs(mr)  # the delta method's se of ρ̂
    q = stdtrit(hsu_df(nt, nr), 1 - ALPHA / (2 * family))

    def out(r):  # the test of ρ = r rejects: r is outside the interval
        return np.abs(mt - r * mr) > q * np.sqrt(a + r * r * c)

    ok = _bounded(mr, vr, nr, family) & (step > 0)
    ends = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for sign in (-1.0, 1.0):
            inner, outer = rho.copy(), rho + sign * step
            for _ in range(64):  # the interval is bounded: some step clears it
                more = ok & ~out(outer)
                if not more.any():
                    break
                inner = np.where(more, outer, inner)
                outer = np.where(more, rho + 2 * (outer - rho), outer)
            for _ in range(45):  # to ~1e-13 of the step
                mid = (inner + outer) / 2
                o = out(mid)
                inner, outer = np.where(o, inner, mid), np.where(o, mid, outer)
            ends.append(np.where(ok, (inner + outer) / 2, np.nan))
    return ends[0], ends[1]


def repetitions_needed(mt, vt, mr, vr, family, margin=MARGIN) -> np.ndarray:
    """Per comparison, the smallest m (2 … MAX_REPETITIONS; MAX_REPETITIONS + 1 beyond)
    for which m repetitions of each protocol, at the observed means and sample variances
    (not both 0), would give a verdict by `verdict_codes`."""
    cols = [np.asarray(x, float).reshape(-1, 1) for x in (mt, vt, mr, vr)]
    out = np.full(cols[0].shape[0], MAX_REPETITIONS + 1)
    todo = np.ones(out.size, dtype=bool)
    for first, last in ((2, 100), (101, MAX_REPETITIONS)):  # most settle under 100
        m = np.arange(first, last + 1, dtype=float)
        t, r = cols[0][todo], cols[2][todo]
        settled = verdict_codes(t, cols[1][todo], m, r, cols[3][todo], m, family, margin) > 0
        found = settled.any(axis=1)
        out[np.flatnonzero(todo)[found]] = settled[found].argmax(axis=1) + first
        todo[np.flatnonzero(todo)[found]] = False
        if not todo.any():
            break
    return out


# --- one table ---------------------------------------------------------------------------


def _clean(values: Sequence[float | None]) -> np.ndarray:
    return np.array([v for v in values if v is not None and math.isfinite(v)], dtype=float)


def _describe(
    tested: Sequence[float | None],
    reference: Sequence[float | None],
    tested_name: str,
    reference_name: str,
    margin: float,
    family: int,
) -> tuple[Comparison, tuple[float, float, int, float, float, int] | None]:
    """A comparison's samples described, and what the rule needs (means, sample variances,
    repetitions) when it can be tested; otherwise the reason why not."""
    a, b = _clean(tested), _clean(reference)
    c = Comparison(
        tested=tested_name,
        reference=reference_name,
        n_tested=a.size,
        n_reference=b.size,
        mean_tested=float(a.mean()) if a.size else None,
        mean_reference=float(b.mean()) if b.size else None,
        sd_tested=float(a.std(ddof=1)) if a.size > 1 else None,
        sd_reference=float(b.std(ddof=1)) if b.size > 1 else None,
        family=family,
        confidence=1 - ALPHA / family,
        margin=margin,
    )
    missing = [n for n, x in ((tested_name, a), (reference_name, b)) if not x.size]
    if missing:
        c.reason = f"no completed repetition of {' nor '.join(missing)}"
        return c, None
    if not c.mean_reference or c.mean_tested is None:
        c.reason = "a mean of 0 s: no ratio"
        return c, None
    c.difference = c.mean_tested / c.mean_reference - 1
    if a.size < 2 or b.size < 2:
        c.reason = "fewer than 2 repetitions on a side: no spread, no test"
        return c, None
    vt, vr = float(a.var(ddof=1)), float(b.var(ddof=1))
    if vt + vr == 0:
        c.reason = "no variance on either side: a t-test is undefined"
        return c, None
    return c, (c.mean_tested, vt, a.size, c.mean_reference, vr, b.size)


def _why(c: Comparison) -> str:
    unbounded = (
        f"the reference's mean is not clear of 0 at {c.level_text}: the ratio's interval is "
        "unbounded; "
        if c.difference_ci is None
        else ""
    )
    n = c.repetitions_needed
    if n is not None and n <= MAX_REPETITIONS:
        return (
            f"{unbounded}{n} repetitions per protocol would settle it at the observed "
            "means and spreads"
        )
    return (
        f"{unbounded}the difference sits on the ±{100 * c.margin:.0f} % margin: more than "
        f"{MAX_REPETITIONS} repetitions would be needed"
    )


def compare_all(
    pairs: Sequence[tuple[str, Sequence[float | None], str, Sequence[float | None]]],
    margin: float = MARGIN,
    alpha: float = ALPHA,
    family: int | None = None,
    rejected_before: int = 0,
) -> list[Comparison]:
    """Every comparison of one table, (tested name, its values, reference name, its
    values): listed before the data, also those that end up with too few repetitions to
    test. One look spending `alpha` over `family` comparisons (default: these pairs), after
    `rejected_before` decided faster/slower at earlier looks of a sequence."""
    m = family or max(len(pairs), 1)
    described = [_describe(a, b, an, bn, margin, m) for an, a, bn, b in pairs]
    tested = [(c, x) for c, x in described if x is not None]
    for c, _ in described:
        c.alpha, c.confidence = alpha, 1 - alpha / m
    if not tested:
        return [c for c, _ in described]
    mt, vt, nt, mr, vr, nr = (np.array(col, dtype=float) for col in zip(*(x for _, x in tested)))
    ps = _welch_p(mt, vt, nt, mr, vr, nr, 1.0)
    codes, level = look_codes(mt, vt, nt, mr, vr, nr, m, alpha, margin, None, rejected_before)
    lo, hi = fieller(mt, vt, nt, mr, vr, nr, level)
    bonf = m * ALPHA / alpha
    open_ = codes == 0
    needed = np.zeros(len(tested), dtype=int)
    if open_.any():
        needed[open_] = repetitions_needed(mt[open_], vt[open_], mr[open_], vr[open_], bonf, margin)
    # Holm's adjusted p: the running maximum of (m − R − i)·p over the p's in order
    order = np.argsort(ps, kind="stable")
    steps = np.maximum(m - rejected_before - np.arange(len(ps)), 1)
    adjusted = np.empty(len(ps))
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(steps * ps[order]))
    for i, (c, _) in enumerate(tested):
        c.p, c.p_adjusted = float(ps[i]), float(adjusted[i])
        c.confidence = 1 - ALPHA / float(level[i])
        if math.isfinite(lo[i]) and math.isfinite(hi[i]):
            c.difference_ci = (float(lo[i]) - 1, float(hi[i]) - 1)
        c.verdict = VERDICTS[int(codes[i])]
        if c.verdict == "inconclusive":
            c.repetitions_needed = int(needed[i])
            c.reason = _why(c)
    return [c for c, _ in described]
