"""Protocol comparisons: Fieller's interval of the ratio, the four verdicts read from it at
the table's Bonferroni level, and the repetitions an inconclusive comparison needs by the
same rule, against values computed by hand.

Fieller's ends solve (x̄_t − ρ·x̄_r)² = q² (s_t²/n_t + ρ² s_r²/n_r) with q the t quantile at
1 − α/(2m) and Welch–Satterthwaite degrees of freedom at that ρ; the values below were
solved by root-finding with scipy.stats.t, independently of the module's bisection."""

from __future__ import annotations

import math

import pytest

from itb.analysis.compare import compare_all


def _one(a, b, margin=0.02):
    [c] = compare_all([("tested", a, "reference", b)], margin)
    return c


def test_faster_and_slower_read_fiellers_interval_of_the_ratio():
    # means 9 and 10, sample variances 0.01 each: Welch t = -1 / sqrt(0.02/3) = -12.247,
    # df = 4, p = 2·t.sf(12.247, 4) = 2.552e-4. Fieller's ends: ρ = 0.878523 (df 3.9347,
    # q = 2.7947) and 0.921859 (df 3.9738, q = 2.7837), i.e. [-12.15, -7.81] %: the
    # reference's spread widens the low side (dividing Welch's interval of the difference
    # by 10 gave the symmetric [-12.27, -7.73] %)
    c = _one([9.0, 9.1, 8.9], [10.0, 10.1, 9.9])
    assert c.verdict == "faster" and c.difference == pytest.approx(-0.10)
    assert c.p == pytest.approx(2.552167e-4, rel=1e-5) and c.p_adjusted == c.p
    assert c.difference_ci == pytest.approx((-0.121477, -0.078141), abs=1e-6)
    assert (c.family, c.confidence) == (1, 0.95)
    assert c.sentence().startswith(
        "tested (9 s) faster than reference (10 s): -10.0 % [-12.1, -7.8] (95 % interval); "
        "Welch p = 0.000255"
    )
    assert _one([10.0, 10.1, 9.9], [9.0, 9.1, 8.9]).verdict == "slower"


def test_a_significant_difference_under_the_margin_is_equivalent_not_faster():
    # -0.99 %: Welch's t as above, p = 2.55e-4, but the interval [-1.21, -0.77] % lies
    # inside ±2 %
    c = _one([10.0, 10.01, 9.99], [10.1, 10.11, 10.09])
    assert c.p < 0.001 and c.verdict == "equivalent"
    assert c.difference_ci == pytest.approx((-0.012132, -0.007665), abs=1e-6)


def test_equivalent_when_the_interval_is_inside_the_margin():
    # variances 0.0025 and 0.0004, means 10: ends at ρ = 0.989234 (df 2.611, q = 3.468) and
    # 1.010728 (df 2.637, q = 3.445): [-1.08, +1.07] %
    c = _one([10.0, 10.05, 9.95], [10.0, 10.02, 9.98])
    assert c.verdict == "equivalent" and c.repetitions_needed is None
    assert c.difference_ci == pytest.approx((-0.010766, 0.010728), abs=1e-6)
    # the same samples with a 1 % margin: neither inside nor different
    assert _one([10.0, 10.05, 9.95], [10.0, 10.02, 9.98], margin=0.01).verdict == "inconclusive"


def test_inconclusive_says_how_many_repetitions_the_same_rule_needs():
    # -4.76 %, both standard deviations 2: with m repetitions each, Welch's t at ρ = 1 is
    # 0.5 / sqrt(8/m) on 2m − 2 df; m = 124: 1.9685 < t(0.975, 246) = 1.9697; m = 125:
    # 1.9764 > t(0.975, 248) = 1.9696 (the interval is then below 1 and -4.76 % ≥ 2 %)
    c = _one([10.0, 12.0, 8.0], [10.5, 12.5, 8.5])
    assert c.verdict == "inconclusive" and c.repetitions_needed == 125
    assert "125 repetitions per protocol would settle it" in c.reason


def test_an_uncertain_reference_mean_leaves_the_ratio_unbounded():
    # reference 10, 12: x̄ = 11, s = 1.414, t = 11 / 1 = 11 < t(0.975, 1) = 12.71: the
    # ratio's interval is unbounded, no verdict. Tested 10, 11: with m each, Welch's t at
    # ρ = 1 is 0.5 / sqrt(2.5/m) on 6.25 (m − 1) / 4.25 df; m = 40: 2.0000 < 2.0022, m = 41:
    # 2.0248 > 2.0011 (and 11 / sqrt(2/41) = 49.8: bounded)
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


def test_every_interval_of_a_table_is_at_the_bonferroni_level():
    # means 9 and 10, variances 0.16: t = -1/sqrt(0.32/3) = -3.0619, df 4, p = 0.03759;
    # alone: faster, 95 % interval [-18.41, -0.98] %
    a, b = [9.0, 9.4, 8.6], [10.0, 10.4, 9.6]
    alone = _one(a, b)
    assert alone.p == pytest.approx(0.037590, rel=1e-4) and alone.verdict == "faster"
    assert alone.difference_ci == pytest.approx((-0.184085, -0.009760), abs=1e-6)
    # three such comparisons: each at 1 − 0.05/3 = 98.33 %, [-22.01, +3.15] % holds 0,
    # p × 3 = 0.11277: inconclusive. With m each: t = 1/sqrt(0.32/m) on 2m − 2 df against
    # t(1 − 0.05/6): m = 3: 3.062 < 3.961; m = 4: 3.536 > 3.287
    cs = compare_all([("x", a, "y", b)] * 3)
    assert all(c.p_adjusted == pytest.approx(0.112770, rel=1e-4) for c in cs)
    assert all(c.verdict == "inconclusive" and c.repetitions_needed == 4 for c in cs)
    assert cs[0].difference_ci == pytest.approx((-0.220137, 0.031485), abs=1e-6)
    assert cs[0].confidence == pytest.approx(1 - 0.05 / 3) and cs[0].level_text == "98.3 %"
    said = cs[0].sentence()
    assert said.startswith(
        "x (9 s) vs y (10 s) inconclusive: -10.0 % [-22.0, +3.1] (98.3 % interval); "
        "Welch p × 3 = 0.113; 4 repetitions per protocol would settle it"
    )
    assert math.isclose(cs[0].difference, -0.1)
    # a comparison listed without data still counts in the table's m
    assert (
        _one(a, b).family == 1 and compare_all([("x", a, "y", b), ("z", [], "y", b)])[0].family == 2
    )
