"""How `itb study crossval` judges a measure, emulated against simulated
(docs/simulation.md):

- a bound holds inclusively: a value on it agrees (100 → 102 at ±2 % agrees, although
  102 / 100 − 1 is 0.020000000000000018 in floating point): `at_most` compares with a
  relative tolerance of 1e-9;
- a ratio of two spreads that are both nil (CoV 0 on both sides) agrees, and so do two
  spreads both at most 1 % (`COV_FLOOR`), whose ratio is noise;
- T_mean's ±10 % is an equivalence test (two one-sided tests, TOST, at 5 %): the 90 %
  Welch interval of the difference of the means lies within ±10 % of the emulated
  mean. Its false "agrees" rate is at most 5 % at a true difference of 10 %, and its
  false "differs" rate at no difference falls with the repetitions and the spread
  (measured on synthetic data: `tests/unit/test_crossval_verdicts.py`,
  `bench/crossval_verdicts.py`). It replaces "the 95 % intervals overlap", which with a
  simulated side that does not vary tested only "the simulated mean is inside the
  emulated interval" and said "differs" 5 % of the time with no bias at all, more with
  any bias however small; that test is still shown, named for what it tests;
- with one repetition on a side, a test that needs the spread is untested, and the
  verdict says so (judged on the means alone)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.special import stdtrit

from itb.study.crossval.results import Measure

# two coefficients of variation both at most this agree whatever their ratio: a spread of
# 1 % is a tenth of T_mean's bound, and the ratio of two such is noise (a simulation's
# capped flows 0.01 % apart against the testbed's 0.3 %)
COV_FLOOR = 0.01
REL_TOL = 1e-9  # a bound holds inclusively, whatever floating point does to it
ALPHA = 0.05  # each one-sided test's level: a 90 % interval


def at_most(a: float, b: float) -> bool:
    """a ≤ b, a within floating-point noise of b counted as on it."""
    return a <= b or math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)


def nil(x: float) -> bool:
    """A spread that is zero but for floating-point noise."""
    return abs(x) <= 1e-12


STILL_REL = 1e-4  # values within 0.01 % of each other: a side that does not vary


def still(m: Measure) -> bool:
    """The values all the same to 0.01 % (a simulation with nothing to vary it)."""
    if m.n < 2 or m.mean is None:
        return False
    return max(m.values) - min(m.values) <= STILL_REL * abs(m.mean)


@dataclass(frozen=True)
class Equivalence:
    """The TOST of a relative bound: None when untested (`why`)."""

    shown: bool | None
    low: float | None = None  # the 90 % interval of (sim − emu) / emu
    high: float | None = None
    why: str | None = None


def _var_of_mean(m: Measure) -> float:
    mean = sum(m.values) / m.n
    return sum((v - mean) ** 2 for v in m.values) / (m.n - 1) / m.n


def equivalence(e: Measure, s: Measure, bound: float) -> Equivalence:
    """Whether the means are shown within ±bound of the emulated one: the 90 % Welch
    interval of s̄ − ē, over ē, inside [−bound, +bound] (TOST at 5 %)."""
    if e.mean is None or s.mean is None or not e.mean:
        return Equivalence(None, why="a side has no mean")
    short = [side for side, m in (("emulated", e), ("simulated", s)) if m.n < 2]
    if short:
        return Equivalence(
            None, why=f"one repetition {' and '.join(short)}: no spread to test against"
        )
    ve, vs = _var_of_mean(e), _var_of_mean(s)
    se = math.sqrt(ve + vs)
    if nil(se):
        half = 0.0
    else:  # Welch–Satterthwaite's degrees of freedom
        df = (ve + vs) ** 2 / (
            (ve**2 / (e.n - 1) if ve else 0.0) + (vs**2 / (s.n - 1) if vs else 0.0)
        )
        half = float(stdtrit(df, 1 - ALPHA)) * se
    d = s.mean - e.mean
    low, high = (d - half) / abs(e.mean), (d + half) / abs(e.mean)
    return Equivalence(at_most(-bound, low) and at_most(high, bound), low, high)


def overlap_test(e: Measure, s: Measure) -> str:
    """What "the intervals overlap" tests for these two sides."""
    if still(s) and not still(e):
        return "the simulated mean is inside the emulated 95 % interval (the simulated side does not vary)"
    if still(e) and not still(s):
        return "the emulated mean is inside the simulated 95 % interval (the emulated side does not vary)"
    return "the two 95 % intervals overlap"
