"""How often `itb study crossval` says T_mean "differs" (or "undecided") on synthetic
cells, by the old rule (within ±10 % and the 95 % intervals overlapping) and by the
equivalence test that replaced it (the 90 % Welch interval of the difference within
±10 %: itb.study.crossval.verdicts). The emulated side: n normal repetitions of mean 1
and a CoV; the simulated side deterministic (a simulation without start jitter to vary
it) at 1 + bias. Printed per cell: the old rule's "differs" share → the new rule's
"differs" (the means past ±10 %) + "undecided" (the means within, the interval not)
shares. Past the bound (bias 10.5 %, 15 %) "differs" is the right verdict.

    .venv/bin/python bench/crossval_verdicts.py [--trials 10000] [--n 10]
"""

from __future__ import annotations

import argparse

import numpy as np

from itb.analysis.statistics import mean_ci
from itb.study.crossval.analysis import _compare
from itb.study.crossval.results import Measure

BIASES = (0.0, 0.005, 0.02, 0.05, 0.09, 0.105, 0.15)
COVS = (0.003, 0.01, 0.03, 0.1)


def measure(vs: list[float]) -> Measure:
    mu, ci = mean_ci(vs)
    return Measure(mean=mu, ci95=ci, n=len(vs), values=vs)


def rates(bias: float, cov: float, n: int, trials: int, seed: int) -> tuple[float, ...]:
    """Shares of the old rule's "differs", the new rule's "differs" and "undecided"."""
    rng = np.random.default_rng(seed)
    old = differs = undecided = 0
    s = measure([1.0 + bias] * n)
    for _ in range(trials):
        e = measure([float(x) for x in rng.normal(1.0, cov, n)])
        assert e.mean is not None and e.ci95 is not None and s.ci95 is not None
        old += not (abs(s.mean / e.mean - 1) <= 0.10 and abs(s.mean - e.mean) <= e.ci95 + s.ci95)
        c = _compare("multi", "reno", "t_mean_s", e, s)
        differs += c.within is False and not c.undecided
        undecided += c.undecided
    return old / trials, differs / trials, undecided / trials


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=10000)
    ap.add_argument("--n", type=int, default=10)
    a = ap.parse_args()
    print(f"n = {a.n} emulated repetitions, simulated side deterministic, {a.trials} trials")
    print("each: the old rule's differs → the new rule's differs + undecided")
    print("| CoV | " + " | ".join(f"bias {100 * b:g} %" for b in BIASES) + " |")
    for cov in COVS:
        cells = [rates(b, cov, a.n, a.trials, seed=1) for b in BIASES]
        print(
            f"| {100 * cov:g} % | "
            + " | ".join(f"{o:.1%} → {d:.1%} + {u:.1%}" for o, d, u in cells)
            + " |"
        )


if __name__ == "__main__":
    main()
