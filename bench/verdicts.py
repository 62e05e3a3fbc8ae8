"""The benchmark's stopping rule on synthetic tables (docs/benchmark.md, "Repetitions
until the answer"): how often it says something false, how often it decides, and how
many repetitions it takes — the rule `itb bench` runs (itb.analysis.sequential.replay:
the same looks, Holm steps and intervals as `decide`, on many tables at once).

A table: k protocols, the first the reference, one T_mean per repetition, up to the
design's last look (default --max-repeat 10: looks at 3, 5, 7, 10). Settings:
- equal protocols (the same mean): normal times at CoV 2 % and 10 %; unequal spreads
  (reference 2 %, the others 10 %, and the reverse); lognormal times (CoV 10 %, and the
  reference at 2 %); bimodal times (every protocol 70 % at T, 30 % at 1.21·T, each mode
  at CoV 2 %: CoV 9 %) — the share of tables with a false "faster"/"slower" (family-wise);
- a true +3 % for every protocol but the reference: the share of tables calling one of
  them "equivalent within ±2 %";
- a true +5 % at CoV 2 %: the share of tables whose every comparison is decided
  ("slower") within the last look, and the comparisons' share;
- outside the guarantee, printed for what it is: a bimodal protocol (50 % at 0.906·T,
  50 % at 1.094·T, CoV 3.3 % each) against a reference of CoV 2 % with the same mean.
  Its n repetitions all land in one mode with probability 2·0.5ⁿ; no rule deciding on
  them can tell that sample from a protocol 9 % faster or slower.
The tolerance of a rate over N tables is its binomial error, 3·sqrt(0.05·0.95/N).

    .venv/bin/python bench/verdicts.py [--tables 10000] [--max-repeat 10] [--seed 1]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from itb.analysis.compare import ALPHA
from itb.analysis.sequential import Design, replay

KS = (2, 4, 6)
# (name, kind, the reference's CoV, the others' CoV)
EQUAL = (
    ("normal, CoV 2 %", "normal", 0.02, 0.02),
    ("normal, CoV 10 %", "normal", 0.10, 0.10),
    ("normal, reference 2 % / others 10 %", "normal", 0.02, 0.10),
    ("normal, reference 10 % / others 2 %", "normal", 0.10, 0.02),
    ("lognormal, CoV 10 %", "lognormal", 0.10, 0.10),
    ("lognormal, reference 2 % / others 10 %", "lognormal", 0.02, 0.10),
    ("bimodal, 70/30 % modes 21 % apart", "bimodal", 0.0, 0.0),
)
OUTSIDE = ("bimodal 50/50 protocols against a reference of CoV 2 %", "halves", 0.02, 0.0)


def times(rng, tables: int, k: int, n: int, kind: str, cov_ref: float, cov: float,
          effect: float = 0.0) -> np.ndarray:  # fmt: skip
    """tables × k × n completion times of mean 10 s (the others' × (1 + effect))."""
    mean = 10.0 * np.array([1.0] + [1.0 + effect] * (k - 1))[None, :, None]
    covs = np.array([cov_ref] + [cov] * (k - 1))[None, :, None]
    z = rng.standard_normal((tables, k, n))
    if kind == "normal":
        return mean * (1 + covs * z)
    if kind == "lognormal":
        s = np.sqrt(np.log(1 + covs**2))
        return mean * np.exp(s * z - s * s / 2)
    if kind == "bimodal":  # 70 % at 1, 30 % at 1.21, each at CoV 2 %; scaled to mean 1
        v = (1 + 0.21 * (rng.random((tables, k, n)) < 0.3)) * (1 + 0.02 * z)
        return mean * v / 1.063
    if kind == "halves":  # the reference normal at cov_ref; the others 50/50 ± 9.4 %
        mode = np.where(rng.random((tables, k, n)) < 0.5, 0.906, 1.094)
        v = mode * (1 + 0.033 * z)
        v[:, 0, :] = 1 + cov_ref * z[:, 0, :]
        return mean * v
    raise ValueError(kind)


def false_rate(codes: np.ndarray) -> float:
    return float(((codes == 1) | (codes == 2)).any(axis=1).mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", type=int, default=10_000)
    ap.add_argument("--max-repeat", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    design = Design.adaptive(a.max_repeat)
    rng = np.random.default_rng(a.seed)
    tol = 3 * math.sqrt(ALPHA * (1 - ALPHA) / a.tables)
    n = design.max_repeat
    t0 = time.monotonic()
    print(f"{a.tables} tables per cell; looks {design.looks}, α spent "
          f"{', '.join(f'{x:.4f}' for x in design.alphas)}; bound {ALPHA} + {tol:.4f}")  # fmt: skip
    print("\nequal means: share of tables with a false faster/slower (mean repetitions run)")
    print("| setting | " + " | ".join(f"k = {k}" for k in KS) + " |")
    print("|---|" + "---|" * len(KS))
    worst = 0.0
    for name, kind, c_ref, c in EQUAL:
        cells = []
        for k in KS:
            codes, ran = replay(times(rng, a.tables, k, n, kind, c_ref, c), design)
            rate = false_rate(codes)
            worst = max(worst, rate)
            cells.append(f"{rate:.4f} ({ran.mean():.1f})")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\na true +3 %: share of tables calling one comparison equivalent within ±2 %")
    print("| setting | " + " | ".join(f"k = {k}" for k in KS) + " |")
    print("|---|" + "---|" * len(KS))
    worst_eq = 0.0
    for name, kind, c_ref, c in EQUAL[:3]:
        cells = []
        for k in KS:
            codes, _ = replay(times(rng, a.tables, k, n, kind, c_ref, c, 0.03), design)
            rate = float((codes == 3).any(axis=1).mean())
            worst_eq = max(worst_eq, rate)
            cells.append(f"{rate:.4f}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"\na true +5 % at CoV 2 %: tables with every comparison decided (slower) within "
          f"{n} repetitions; comparisons decided; mean repetitions run")  # fmt: skip
    power = []
    for k in KS:
        codes, ran = replay(times(rng, a.tables, k, n, "normal", 0.02, 0.02, 0.05), design)
        whole = float((codes == 2).all(axis=1).mean())
        power.append(whole)
        print(f"k = {k}: {whole:.4f} of tables, {(codes == 2).mean():.4f} of comparisons, "
              f"{ran.mean():.1f} repetitions; any wrong verdict "
              f"{float(((codes == 1) | (codes == 3)).any(axis=1).mean()):.4f}")  # fmt: skip
    name, kind, c_ref, c = OUTSIDE
    cells = []
    for k in KS:
        codes, _ = replay(times(rng, a.tables, k, n, kind, c_ref, c), design)
        cells.append(f"k = {k}: {false_rate(codes):.4f}")
    print(f"\noutside the guarantee, {name}: false faster/slower {', '.join(cells)}")
    print(f"\nworst false faster/slower {worst:.4f}, worst false equivalent {worst_eq:.4f} "
          f"(bound {ALPHA}); +5 % decided in ≥ {min(power):.4f} of tables "
          f"({time.monotonic() - t0:.0f} s)")  # fmt: skip


if __name__ == "__main__":
    main()
