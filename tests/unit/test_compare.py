"""Protocol comparisons: the four verdicts, Holm's adjustment and the repetitions an
inconclusive comparison needs, against values computed by hand."""

from __future__ import annotations

import math

import pytest

from itb.analysis.compare import compare_all, holm


def _one(a, b, margin=0.02):
    [c] = compare_all([("tested", a, "reference", b)], margin)
    return c


def test_faster_and_slower_need_significance_and_the_margin():
    # means 9 and 10, sample variances 0.01 each: Welch t = -1 / sqrt(0.02/3) = -12.247,
    # df = 4, p = 2·t.sf(12.247, 4) = 2.552e-4; interval -1 ± 2.7764·0.08165 = [-1.2267, -0.7733]
    c = _one([9.0, 9.1, 8.9], [10.0, 10.1, 9.9])
    assert c.verdict == "faster" and c.difference == pytest.approx(-0.10)
    assert c.p == pytest.approx(2.552167e-4, rel=1e-5)
    assert c.difference_ci95 == pytest.approx((-0.122670, -0.077330), abs=1e-6)
    assert c.sentence().startswith(
        "tested (9 s) faster than reference (10 s): -10.0 % [-12.3, -7.7]"
    )
    assert _one([10.0, 10.1, 9.9], [9.0, 9.1, 8.9]).verdict == "slower"


def test_a_significant_difference_under_the_margin_is_not_faster():
    # -1 %: p = 2.55e-4 as above (same t), but the interval [-1.21, -0.77] % is inside ±2 %
    c = _one([10.0, 10.01, 9.99], [10.1, 10.11, 10.09])
    assert c.p < 0.001 and c.verdict == "equivalent"
    assert c.difference_ci95 == pytest.approx((-0.012146, -0.007656), abs=1e-6)


def test_equivalent_when_the_interval_is_inside_the_margin():
    # variances 0.0025 and 0.0004: se = sqrt(0.0029/3) = 0.031091, Welch df = 2.6897,
    # t(0.975, 2.6897) = 3.4566: half-width 0.10747 on a mean of 10 = ±1.07 %
    c = _one([10.0, 10.05, 9.95], [10.0, 10.02, 9.98])
    assert c.verdict == "equivalent"
    assert c.difference_ci95 == pytest.approx((-0.010747, 0.010747), abs=1e-6)
    # the same samples with a 1 % margin: neither inside nor significant
    assert _one([10.0, 10.05, 9.95], [10.0, 10.02, 9.98], margin=0.01).verdict == "inconclusive"


def test_inconclusive_says_how_many_repetitions_would_settle_it():
    # -4.76 % with se = sqrt(4/3 + 4/3)/10.5 = 0.15552: clearing the 2 % margin needs
    # t(0.975, 2m-2)·0.15552·sqrt(3/m) < 0.02762, i.e. m = 367
    c = _one([10.0, 12.0, 8.0], [10.5, 12.5, 8.5])
    assert c.verdict == "inconclusive" and c.repetitions_needed == 367
    assert "at least 367 repetitions" in c.reason


def test_no_p_value_without_spread_or_repetitions():
    one = _one([10.0], [12.0])
    assert one.verdict == "inconclusive" and one.p is None and one.difference_ci95 is None
    assert "fewer than 2 repetitions" in one.reason
    flat = _one([10.0, 10.0], [12.0, 12.0])
    assert flat.verdict == "inconclusive" and flat.p is None and "no variance" in flat.reason
    assert _one([], [1.0, 2.0]).difference is None


def test_holm_against_hand_values():
    # sorted 0.01, 0.03, 0.04 → 3·0.01 = 0.03; max(0.03, 2·0.03) = 0.06; max(0.06, 0.04) = 0.06
    assert holm([0.04, 0.01, None, 0.03]) == pytest.approx([0.06, 0.03, None, 0.06])
    assert holm([]) == [] and holm([None]) == [None]
    # adjusted over the table: means 9 and 10, variances 0.16: t = -1/sqrt(0.32/3) = -3.0619,
    # df 4, p = 0.03759: faster alone; three such comparisons: Holm 3·p = 0.11277, inconclusive
    a, b = [9.0, 9.4, 8.6], [10.0, 10.4, 9.6]
    alone = _one(a, b)
    assert alone.p == pytest.approx(0.037590, rel=1e-4) and alone.verdict == "faster"
    cs = compare_all([("x", a, "y", b)] * 3)
    assert all(c.p_holm == pytest.approx(0.112770, rel=1e-4) for c in cs)
    assert all(c.verdict == "inconclusive" for c in cs)
    assert math.isclose(cs[0].difference, -0.1)
