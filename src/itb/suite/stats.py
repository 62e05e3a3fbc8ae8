"""The benchmark table: application × class × protocol → completion-time statistics and
the other metrics, as means over repetitions with 95 % confidence intervals, and the
protocol comparisons against a reference protocol (itb.analysis.compare)."""

from __future__ import annotations

from dataclasses import dataclass

from itb.analysis.benchmark import BenchComparison
from itb.analysis.compare import MARGIN
from itb.analysis.run_results import RunMetrics
from itb.analysis.sequential import Design, Pair, decide
from itb.analysis.statistics import mean_ci

METRICS = (
    "t_mean",
    "t_min",
    "t_max",
    "sigma_t",
    "cov",
    "jain",
    "jain_intra",
    "efficiency",
    "utilisation",
)


def per_repetition(metrics: RunMetrics, cc: str | None = None) -> list[dict]:
    """One row per repetition that ran forward transfers, from a run's metrics; one whose
    transfers all failed (or were corrupt) keeps its counts, with no statistics. Jain's
    index pooled over the forward transfers (`jain`) and among those of `cc`, the cell's
    protocol (`jain_intra`)."""
    rows = []
    for r in metrics.repetitions:
        c = r.completion
        if not c.n and not c.n_failed:
            continue
        rows.append(
            {
                "repetition": r.repetition,
                "n": c.n,
                "n_failed": c.n_failed,
                "n_corrupt": r.n_corrupt,
                "t_mean": c.t_mean,
                "t_min": c.t_min,
                "t_max": c.t_max,
                "sigma_t": c.sigma_t,
                "cov": c.cov,
                "jain": r.jain,
                "jain_intra": r.jain_by_cc.get(cc) if cc else None,
                "efficiency": r.efficiency,
                "utilisation": r.utilisation,
            }
        )
    return rows


@dataclass(frozen=True)
class CellKey:
    app: str
    variant: str | None
    cls: str
    cc: str

    @property
    def group(self) -> tuple:
        return (self.app, self.variant, self.cls)


def table_rows(cells: list[tuple[CellKey, list[dict]]]) -> list[dict]:
    out = []
    for key, reps in cells:
        row = {
            "app": key.app,
            "variant": key.variant,
            "class": key.cls,
            "cc": key.cc,
            "repetitions": len(reps),
            "transfers": sum(r["n"] for r in reps),
            "failed": sum(r["n_failed"] for r in reps),
            "corrupt": sum(r.get("n_corrupt", 0) for r in reps),
        }
        for m in METRICS:
            row[m], row[f"{m}_ci95"] = mean_ci(r[m] for r in reps)
        out.append(row)
    return out


def compare(
    cells: list[tuple[CellKey, list[dict]]],
    reference: str,
    design: Design | None = None,
    ran: list[int] | None = None,
    margin: float = MARGIN,
    ended: bool = False,
) -> list[BenchComparison]:
    """Per application × class, every other protocol against `reference`, fixed by the
    arguments before any data (choosing the fastest after the fact would make a false
    "slower" likelier than the level says), on the per-repetition T_mean; one table, every
    comparison of the m sharing α = 0.05 by Holm's steps (itb.analysis.compare:
    the relative difference with Fieller's interval, faster / slower / equivalent /
    inconclusive), by the design: one look at every repetition (None, or fixed), or a
    sequence replayed from the repetitions in order (itb.analysis.sequential; `ran`: up to
    which repetition each cell ran, a repetition without a T_mean a gap; `ended`: a budget
    ended it, its last look spends what is left of α). A cell's T
    leaves its failed transfers out: the comparison says so."""
    groups: dict[tuple, dict[str, tuple[list[float | None], int]]] = {}
    for i, (key, reps) in enumerate(cells):
        by_rep = {r["repetition"]: r["t_mean"] for r in reps}
        last = ran[i] if ran is not None else max(by_rep, default=0)
        t = [by_rep.get(r) for r in range(1, last + 1)]
        groups.setdefault(key.group, {})[key.cc] = (t, sum(r["n_failed"] for r in reps))
    keys: list[tuple] = []
    pairs: list[Pair] = []
    failed: list[tuple[int, int]] = []
    for group, by_cc in groups.items():
        t_ref, nf_ref = by_cc.get(reference, ([], 0))
        for cc, (t, nf) in by_cc.items():
            if cc != reference:
                keys.append(group)
                pairs.append((cc, t, reference, t_ref))
                failed.append((nf, nf_ref))
    out = []
    compared = decide(pairs, design or Design.fixed(1), margin, ended)
    for (app, variant, cls), c, (nf, nf_ref) in zip(keys, compared, failed):
        notes = [
            f"{n} failed transfer(s) of {who} not in its T"
            for n, who in ((nf, c.tested), (nf_ref, c.reference))
            if n
        ]
        if notes:
            c.reason = "; ".join([c.reason, *notes] if c.reason else notes)
        out.append(
            BenchComparison(
                app=app,
                variant=variant,
                cls=cls,
                **c.model_dump(),
                failed_tested=nf,
                failed_reference=nf_ref,
            )
        )
    return out
