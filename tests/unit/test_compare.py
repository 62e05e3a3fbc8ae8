"""Protocol comparisons: Fieller's interval of the ratio, the four verdicts read from it
(Holm's step-down for faster/slower, the Bonferroni level for equivalence), and the
repetitions an inconclusive comparison needs by the same rule, against values computed by
hand.

The test is Welch's statistic on Hsu's degrees of freedom, min(n_t, n_r) − 1; with the
degrees of freedom fixed, Fieller's ends are the roots of the quadratic
(x̄_t − ρ·x̄_r)² = q² (s_t²/n_t + ρ² s_r²/n_r), q the t quantile at 1 − level/2: the values
below were solved with the quadratic formula and scipy.stats.t, independently of the
module's bisection."""

from __future__ import annotations

import pytest

from itb.analysis.compare import compare_all


def _one(a, b, margin=0.02):
    [c] = compare_all([("tested", a, "reference", b)], margin)
    return c


def test_faster_and_slower_read_fiellers_interval_of_the_ratio():
    # means 9 and 10, sample variances 0.01 each: t = -1 / sqrt(0.02/3) = -12.247 on
    # Hsu's 2 df, p = 2·t.sf(12.247, 2) = 0.0066007. Fieller's ends at q = t(0.975, 2) =
    # 4.30265: ρ = 0.867120 and 0.933991, i.e. [-13.29, -6.60] %: the reference's spread
    # widens the low side (Welch's interval of the difference divided by 10 is symmetric)
    c = _one([9.0, 9.1, 8.9], [10.0, 10.1, 9.9])
    assert c.verdict == "faster" and c.difference == pytest.approx(-0.10)
    assert c.p == pytest.approx(6.600732e-3, rel=1e-6) and c.p_adjusted == c.p
    assert c.difference_ci == pytest.approx((-0.132880, -0.066009), abs=1e-6)
    assert (c.family, c.confidence, c.alpha) == (1, 0.95, 0.05)
    assert c.sentence() == (
        "tested (9 s) faster than reference (10 s): -10.0 % [-13.3, -6.6] (95 % interval); "
        "p = 0.0066"
    )
    assert _one([10.0, 10.1, 9.9], [9.0, 9.1, 8.9]).verdict == "slower"


def test_a_significant_difference_under_the_margin_is_equivalent_not_faster():
    # -0.99 %: the same t and p = 0.0066, but the interval [-1.34, -0.64] % lies inside ±2 %
    c = _one([10.0, 10.01, 9.99], [10.1, 10.11, 10.09])
    assert c.p < 0.01 and c.verdict == "equivalent"
    assert c.difference_ci == pytest.approx((-0.013356, -0.006434), abs=1e-6)


def test_equivalent_when_the_interval_is_inside_the_margin():
    # variances 0.0025 and 0.0004, means 10, 2 df: q = 4.30265, ends ρ = 0.986647 and
    # 1.013402: [-1.34, +1.34] %
    c = _one([10.0, 10.05, 9.95], [10.0, 10.02, 9.98])
    assert c.verdict == "equivalent" and c.repetitions_needed is None
    assert c.difference_ci == pytest.approx((-0.013353, 0.013402), abs=1e-6)
    # the same samples with a 1 % margin: neither inside nor different
    assert _one([10.0, 10.05, 9.95], [10.0, 10.02, 9.98], margin=0.01).verdict == "inconclusive"


def test_inconclusive_says_how_many_repetitions_the_same_rule_needs():
    # -4.76 %, both standard deviations 2: with m repetitions each, t at ρ = 1 is
    # 0.5 / sqrt(8/m) on m − 1 df; m = 125: 1.9764 < t(0.975, 124) = 1.9793; m = 126:
    # 1.9843 > t(0.975, 125) = 1.9791 (the interval is then below 1 and -4.76 % ≥ 2 %)
    c = _one([10.0, 12.0, 8.0], [10.5, 12.5, 8.5])
    assert c.verdict == "inconclusive" and c.repetitions_needed == 126
    assert "126 repetitions per protocol would settle it" in c.reason


def test_an_uncertain_reference_mean_leaves_the_ratio_unbounded():
    # reference 10, 12: x̄ = 11, s = 1.414, t = 11 / 1 = 11 < t(0.975, 1) = 12.71: the
    # ratio's interval is unbounded, no verdict. Tested 10, 11: with m each, t at ρ = 1 is
    # 0.5 / sqrt(2.5/m) on m − 1 df; m = 40: 2.0000 < 2.0227, m = 41: 2.0248 > 2.0211 (and
    # 11 / sqrt(2/41) = 49.8: bounded)
    c = _one([10.0, 11.0], [10.0, 12.0])
    assert c.verdict == "inconclusive" and c.difference_ci is None and c.p is not None
    assert "not clear of 0" in c.reason and c.repetitions_needed == 41


def test_no_p_value_without_spread_or_repetitions():
    one = _one([10.0], [12.0])
    assert one.verdict == "inconclusive" and one.p is None and one.difference_ci is None
    assert "fewer than 2 repetitions" in one.reason
    flat = _one([10.0, 10.0], [12.0, 12.0])
    assert flat.verdict == "inconclusive" and flat.p is None and "no variance" in flat.reason
    none = _one([], [1.0, 2.0])
    assert none.difference is None and none.reason == "no completed repetition of tested"


REF = [10.0, 10.2, 9.8, 10.0]  # mean 10, variance 0.08/3
TABLE = [
    ("x", [9.0, 9.2, 8.8, 9.0], "r", REF),  # t = -8.660 on 3 df, p = 0.0032390
    ("y", [9.5, 9.7, 9.3, 9.5], "r", REF),  # t = -4.330, p = 0.022714
    ("z", [9.9, 10.3, 9.7, 10.1], "r", REF),  # t = 0, p = 1
]


def test_holms_step_down_decides_what_bonferroni_would_not():
    x, y, z = compare_all(TABLE)
    # x first, at 0.05/3: rejected, its interval at 98.33 % (q = 4.85666) [-15.20, -4.52] %
    assert x.verdict == "faster" and x.confidence == pytest.approx(1 - 0.05 / 3)
    assert x.difference_ci == pytest.approx((-0.151993, -0.045172), abs=1e-6)
    assert x.p_adjusted == pytest.approx(3 * 0.0032390, rel=1e-4)
    # then y at 0.05/2: 0.0227 < 0.025, faster (Bonferroni's 0.0167 would not); its
    # interval at 97.5 % (q = 4.17653) [-9.60, -0.18] % excludes 0 as the verdict says
    assert y.verdict == "faster" and y.confidence == pytest.approx(0.975)
    assert y.difference_ci == pytest.approx((-0.095971, -0.001817), abs=1e-6)
    assert y.p_adjusted == pytest.approx(2 * 0.022714, rel=1e-4)
    assert y.sentence().endswith("(97.5 % interval); Holm-adjusted p = 0.0454")
    # z: inconclusive, at the Bonferroni level 98.33 % (q = 4.85666) [-7.27, +7.58] %.
    # Equivalence with m each: |10 − 0.98·10| / sqrt((0.2/3 + 0.98²·0.08/3)/m) against
    # t(1 − 0.05/6, m − 1): m = 16: 2.6148 < 2.6937 … m = 17: 2.7146 > 2.6730 (and at
    # 1.02: 2.6838): 17 repetitions
    assert z.verdict == "inconclusive" and z.repetitions_needed == 17
    assert z.difference_ci == pytest.approx((-0.072687, 0.075837), abs=1e-6)
    assert z.level_text == "98.3 %" and z.family == 3


def test_a_look_of_a_sequence_spends_its_part_and_counts_earlier_decisions():
    # the same table at a look spending 0.02 of α, after one comparison of 4 decided
    # faster at an earlier look: Holm's steps are 0.02/3, 0.02/2, 0.02/1
    x, y, z = compare_all(TABLE, alpha=0.02, family=4, rejected_before=1)
    assert x.verdict == "faster" and x.confidence == pytest.approx(1 - 0.02 / 3)
    assert y.verdict == "inconclusive"  # 0.0227 > 0.01
    assert y.confidence == pytest.approx(1 - 0.02 / 4)  # undecided: at α_look / m
    assert x.alpha == 0.02 and x.sentence().endswith("Holm-adjusted p = 0.00972 against 0.02")
    # a comparison listed without data still counts in the table's m
    assert (
        compare_all([("x", [9.0, 9.1], "y", [10.0, 10.1]), ("z", [], "y", [1.0, 2.0])])[0].family
        == 2
    )
