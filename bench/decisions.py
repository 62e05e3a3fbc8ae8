"""How many of a benchmark's comparisons its sequence can decide within a budget
(docs/benchmark.md, "What a budget can decide"): the effects and spreads a benchmark
directory measured, and the running time of its cells' runs, replayed through the rule
`itb bench` runs (itb.analysis.sequential.decide, the same looks, levels and budget's
end) on synthetic sequences.

For each application × class × protocol of DIR: its T_mean per repetition (mean m,
standard deviation s over the repetitions it ran) and the seconds one of its runs took
(its stages, calibration left out, plus SWEEP_OVERHEAD_S between runs). A synthetic
sequence draws every repetition normal(m, s), runs the rounds and looks of the design
on the open applications × classes in a random order each round, stops when the budget
has run out before a run, and decides as `itb bench` would. Printed per budget: the
mean number of decided comparisons, the share of sequences deciding at least k, and
the running time used. The "truth" is the measured means: a comparison whose measured
difference sits near the ±2 % margin stays undecided in most sequences whatever the
budget, as it would on the testbed.

    .venv/bin/python bench/decisions.py DIR [--budget 600,900,1800] [--max-repeat 10]
        [--first-look 3] [--sequences 300] [--at-least 6]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from itb.analysis.benchmark import group_label
from itb.analysis.run_results import RunMetrics
from itb.analysis.sequential import Design, decide

SWEEP_OVERHEAD_S = 1.0  # between two runs: the sweep's own bookkeeping (measured ~0.5-1 s)


def measured(d: Path) -> tuple[str, dict]:
    """The reference and, per (app, class) group, {cc: (mean, sd, seconds a run)}."""
    index = json.loads((d / "bench.json").read_text())
    args = index["args"]
    reference = args.get("reference") or args["ccs"][0]
    groups: dict[str, dict] = {}
    for c in index["cells"]:
        run = d / c["run"]
        m = RunMetrics.load(run / "metrics.json")
        t = [r.completion.t_mean for r in m.repetitions if r.completion.t_mean is not None]
        meta = json.loads((run / "meta.json").read_text())
        stages = [s for s in meta.get("stages", []) if not s["stage"].startswith("calibration")]
        runs = 1 + len(meta.get("resumed", []))
        cost = sum(s["seconds"] for s in stages) / runs + SWEEP_OVERHEAD_S
        group = group_label(c["app"], c.get("variant"), c["class"])
        groups.setdefault(group, {})[c["cc"]] = (
            float(np.mean(t)),
            float(np.std(t, ddof=1)) if len(t) > 1 else 0.0,
            cost,
        )
    return reference, groups


def sequence(rng, groups: dict, reference: str, design: Design, budget_s: float):
    """One synthetic sequence: (decided comparisons, running time used)."""
    data: dict[tuple[str, str], list[float]] = {(g, p): [] for g in groups for p in groups[g]}
    pair_keys = [(g, p) for g in groups for p in groups[g] if p != reference]

    def pairs():
        return [(p, data[(g, p)], reference, data[(g, reference)]) for g, p in pair_keys]

    open_, used, ended, n_done = set(groups), 0.0, False, 0
    for look in design.looks:
        for _ in range(n_done, look):
            units = [(g, p) for g in sorted(open_) for p in groups[g]]
            for i in rng.permutation(len(units)):
                g, p = units[i]
                if used >= budget_s:
                    ended = True
                    break
                mean, sd, cost = groups[g][p]
                data[(g, p)].append(mean + sd * rng.standard_normal())
                used += cost
            if ended:
                break
        n_done = look
        if ended:
            break
        verdicts = decide(pairs(), design)
        open_ = {g for (g, _), c in zip(pair_keys, verdicts) if c.verdict == "inconclusive"}
        if not open_:
            break
    final = decide(pairs(), design, ended=ended)
    return sum(c.verdict != "inconclusive" for c in final), used


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--budget", default="600,900,1800", help="seconds of runs, comma-separated")
    ap.add_argument("--max-repeat", type=int, default=10)
    ap.add_argument("--first-look", type=int, default=3)
    ap.add_argument("--sequences", type=int, default=300)
    ap.add_argument("--at-least", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    reference, groups = measured(a.dir)
    design = Design.adaptive(a.max_repeat, a.first_look)
    m = sum(len(v) - 1 for v in groups.values())
    print(f"{a.dir}: {m} comparisons against {reference}; looks at {design.looks}")
    for g, by_cc in groups.items():
        ref = by_cc[reference][0]
        line = ", ".join(
            f"{p} {100 * (mean / ref - 1):+.1f} % (CoV {100 * sd / mean:.1f} %, {cost:.1f} s a run)"
            for p, (mean, sd, cost) in by_cc.items()
        )
        print(f"  {g}: {line}")
    rng = np.random.default_rng(a.seed)
    for budget in (float(b) for b in a.budget.split(",")):
        runs = [sequence(rng, groups, reference, design, budget) for _ in range(a.sequences)]
        k = np.array([r[0] for r in runs])
        used = np.mean([r[1] for r in runs])
        print(
            f"budget {budget:6.0f} s: decided {k.mean():.2f} of {m} on average, "
            f"at least {a.at_least} in {np.mean(k >= a.at_least):.2f} of {a.sequences} "
            f"sequences, {used:.0f} s of runs"
        )


if __name__ == "__main__":
    main()
