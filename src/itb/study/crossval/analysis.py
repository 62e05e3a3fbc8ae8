"""The analysis of `itb study crossval`: each cell's measures per repetition, then per
scenario and congestion control the emulated against the simulated one.

Measures: steady: the flow's goodput over the window; single: its completion time; both:
the first loss (time after the start, from the first tcp_info row with a
retransmission, and the window in the row before it); multi: T_mean, the CoV of the
completion times, Jain's index of the transfers' mean goodputs (per repetition, from
the run's metrics). Bounds (docs/simulation.md), inclusive: steady goodput ±2 %, single
T ±5 %, multi T_mean ±10 % shown by an equivalence test (itb.study.crossval.verdicts),
Jain ±0.05, the CoV ratio in [0.5, 2] (nil on both sides agrees); the first loss is
shown, not judged. A repetition during which
the hypervisor took STEAL_WARN (5 %) of the CPU time or more is left out and counted
(`disturbed`). A cell of one of ns-3's own models is held to the same bounds against the
emulated algorithm it models; the rankings are Linux's algorithms'."""

from __future__ import annotations

import pandas as pd

from itb import rundir
from itb.analysis.cells import cell_table
from itb.analysis.run_results import RunMetrics
from itb.analysis.statistics import mean_ci
from itb.engine.steal import STEAL_WARN
from itb.study.crossval.args import MODEL_OF
from itb.study.crossval.cells import CrossvalCell
from itb.study.crossval.results import CellResult, Comparison, Measure, Ranking, Results
from itb.study.crossval.verdicts import (
    ALPHA,
    COV_FLOOR,
    STILL_REL,
    at_most,
    equivalence,
    nil,
    overlap_test,
    still,
)
from itb.study.longlived import repetitions_of, window_goodputs
from itb.sweep.sweep import Sweep

# measure → (how it is compared, the bound, the likely cause of a disagreement)
BOUNDS: dict[str, tuple[str, float, str]] = {
    "goodput_bps": (
        "relative",
        0.02,
        "the frame and ACK accounting: the testbed's GSO/GRO "
        "super-frames and stretch ACKs against ns-3's one ACK per two segments",
    ),
    "t_single_s": (
        "relative",
        0.05,
        "slow start's end (HyStart, the first losses) and the "
        "loss recovery: ns-3's TCP, not Linux's, decides when the hooks run",
    ),
    "t_mean_s": (
        "relative",
        0.10,
        "losses under contention: the testbed's senders burst up to 64 kB "
        "(GSO) on ACKs of ~10 segments (GRO), which overflow a small queue that "
        "itb-sim's one segment per ACK of two does not; no tail loss probe in itb-sim",
    ),
    "jain": (
        "absolute",
        0.05,
        "synchronised losses at the drop-tail queue: the simulator "
        "has no scheduling noise beyond the start jitter",
    ),
    "cov": (
        "ratio",
        2.0,
        "the spread's sources differ: the testbed's noise against the "
        "simulator's start jitter alone",
    ),
}
SHOWN = ("first_loss_s", "first_loss_cwnd")  # measured, not judged
# T_mean's likely cause where the sources never meet (C_g < 1): each is held by its own
# access link, which the two sides build differently
HELD_BY_ACCESS = (
    "the sources' own rate limit: on the testbed a token bucket at the host's egress "
    "(Linux's tbf, which TCP small queues keep short of packets: it can idle below its "
    "rate), in ns-3 the access link, busy at its rate while its queue holds packets"
)
STILL = (
    "the simulated completion times are all the same (to 0.01 %, within and across "
    "repetitions: no flow's course depends on its start jitter here, and a simulation "
    "has no other noise), so the simulated interval is empty and only the testbed's "
    "spread is left"
)


def _still(c: CellResult) -> bool:
    """A multi cell whose completion times do not vary: T_mean's repetitions within
    0.01 % of each other and every repetition's CoV below 10⁻⁴."""
    t, cov = c.measures.get("t_mean_s"), c.measures.get("cov")
    if t is None or cov is None:
        return False
    return still(t) and max(cov.values) < STILL_REL


def _first_loss(samples: pd.DataFrame, transfers: pd.DataFrame, rep: int) -> tuple | None:
    ti = samples[(samples["series"] == "tcp_info") & (samples["repetition"] == rep)]
    ti = ti[ti["transfer"] == "f1"].sort_values("t_ns")
    tr = transfers[(transfers["repetition"] == rep) & (transfers["transfer"] == "f1")]
    if ti.empty or tr.empty or pd.isna(tr["start_ns"].iloc[0]):
        return None
    lost = ti.index[ti["total_retrans"].fillna(0) > 0]
    if len(lost) == 0:
        return None
    k = ti.index.get_loc(lost[0])
    before = ti.iloc[max(0, k - 1)]
    return (float(ti.iloc[k]["t_ns"] - tr["start_ns"].iloc[0]) / 1e9, float(before["cwnd"]))


def _disturbed(run, reps: list[int]) -> list[int]:
    """The repetitions during which the hypervisor took STEAL_WARN of the CPU time or more
    (itb.engine.steal): the testbed's timings there are not the path's."""
    found = []
    for r in reps:
        rec = rundir.rep_record(run, r)
        if rec is not None and rec.cpu_steal is not None and rec.cpu_steal >= STEAL_WARN:
            found.append(r)
    return found


def _cell(out, c: CrossvalCell) -> CellResult:
    ok, failed = repetitions_of(out / c.run)
    disturbed = _disturbed(out / c.run, ok)
    ok = [r for r in ok if r not in disturbed]
    tr, samples = cell_table(out, c, "transfers"), cell_table(out, c, "samples")
    vals: dict[str, list[float]] = {}
    metrics = RunMetrics.load(out / c.run / "metrics.json") if ok and tr is not None else None

    def add(name: str, v) -> None:
        if v is not None:
            vals.setdefault(name, []).append(float(v))

    if tr is not None and samples is not None:
        if c.window_s is not None:
            gp = window_goodputs(samples, tr, *c.window_s)
            for rep in ok:
                add("goodput_bps", gp.get(rep, {}).get("f1"))
        for rep in ok:
            if c.sources == 1:
                row = tr[(tr["repetition"] == rep) & (tr["transfer"] == "f1")]
                if c.window_s is None and not row.empty and bool(row["ok"].iloc[0]):
                    add("t_single_s", row["completion_s"].iloc[0])
                first = _first_loss(samples, tr, rep)
                if first:
                    add("first_loss_s", first[0])
                    add("first_loss_cwnd", first[1])
            elif metrics is not None:
                r = metrics.repetition(rep)
                if r is not None:
                    add("t_mean_s", r.completion.t_mean)
                    add("cov", r.completion.cov)
                    add("jain", r.jain)
    measures = {}
    for name, v in vals.items():
        m, ci = mean_ci(v)
        measures[name] = Measure(mean=m, ci95=ci, n=len(v), values=v)
    return CellResult(
        name=c.name, scenario=c.scenario, cc=c.cc, backend=c.backend,
        repetitions=len(ok), failed=failed, disturbed=len(disturbed), measures=measures,
        load=c.sources * c.access_bps / c.capacity_bps if c.access_bps else None,
    )  # fmt: skip


def _compare(
    scen: str,
    cc: str,
    name: str,
    e: Measure,
    s: Measure,
    still: bool = False,
    apart: bool = False,
) -> Comparison:
    """`still`: the simulated completion times do not vary; `apart`: the sources never
    meet at the bottleneck (C_g < 1). Bounds hold inclusively; T_mean's is an
    equivalence test (itb.study.crossval.verdicts)."""
    judged = name in BOUNDS
    how, bound, cause = BOUNDS.get(name, ("relative", 0.0, ""))
    if apart and name == "t_mean_s":
        cause = HELD_BY_ACCESS
    diff = within = overlap = test = None
    if e.mean is not None and s.mean is not None:
        if how == "absolute":
            diff = s.mean - e.mean
            within = at_most(abs(diff), bound)
        elif how == "ratio":
            if nil(e.mean) and nil(s.mean):  # no spread on either side: the same
                diff, within = 1.0, True
            else:
                diff = s.mean / e.mean if not nil(e.mean) else None
                within = diff is not None and at_most(1 / bound, diff) and at_most(diff, bound)
                if at_most(e.mean, COV_FLOOR) and at_most(s.mean, COV_FLOOR):
                    within = True  # both spreads negligible: their ratio is noise
                    test = f"both under {COV_FLOOR:g}: agree whatever their ratio"
        else:
            diff = s.mean / e.mean - 1 if e.mean else None
            within = diff is not None and at_most(abs(diff), bound)
        if e.ci95 is not None and s.ci95 is not None:
            overlap = at_most(abs(s.mean - e.mean), e.ci95 + s.ci95)
    untested = interval = None
    undecided = False
    if not judged:
        text, within = "shown", None
    elif how == "ratio":
        text = f"ratio in [{1 / bound:g}, {bound:g}]"
    elif how == "absolute":
        text = f"±{bound:g}"
    else:
        text = f"±{100 * bound:g} %" + (" (equivalence)" if name == "t_mean_s" else "")
    if name == "t_mean_s" and within is not None:
        eq = equivalence(e, s, bound)
        if eq.shown is None:
            untested = f"the equivalence test: {eq.why}; judged on the means alone"
        else:
            test = (
                f"the 90 % interval of the difference within ±{100 * bound:g} % of the "
                f"emulated mean (two one-sided tests at {100 * ALPHA:g} %)"
            )
            assert eq.low is not None and eq.high is not None  # (tested: both set)
            interval = (eq.low, eq.high)
            if within and not eq.shown:  # the means inside, the interval past the bound
                within, undecided = False, True
                cause = (
                    f"the means are {100 * (diff or 0):+.1f} % apart, within ±{100 * bound:g} %, "
                    f"but the difference's 90 % interval [{100 * eq.low:+.1f}, "
                    f"{100 * eq.high:+.1f}] % reaches past it: more repetitions would decide"
                )
    if still and name in ("t_mean_s", "cov") and not undecided:
        cause = f"{STILL}; {cause}"
    return Comparison(
        scenario=scen, cc=cc, measure=name, emulated=e, simulated=s, difference=diff, how=how,
        bound=text, within=within, overlap=overlap, cause=cause if within is False else None,
        overlap_test=overlap_test(e, s) if overlap is not None else None, test=test,
        interval=interval, untested=untested, undecided=undecided,
    )  # fmt: skip


def _rankings(cells: list[CellResult]) -> list[Ranking]:
    out = []
    for scen in dict.fromkeys(c.scenario for c in cells):
        key = (
            "goodput_bps" if scen == "steady" else "t_single_s" if scen == "single" else "t_mean_s"
        )
        order = {}
        decided = True
        for backend in ("emulated", "simulated"):
            got = [(c.measures[key], c.cc) for c in cells
                   if c.scenario == scen and c.backend == backend and key in c.measures
                   and c.cc not in MODEL_OF]  # fmt: skip
            got.sort(
                key=lambda mc: (-(mc[0].mean or 0)) if key == "goodput_bps" else (mc[0].mean or 0)
            )
            order[backend] = [cc for _, cc in got]
            if backend == "emulated":
                for (a, _), (b, _) in zip(got, got[1:]):
                    if (
                        a.mean is None or b.mean is None or a.ci95 is None or b.ci95 is None
                        or abs(a.mean - b.mean) <= a.ci95 + b.ci95
                    ):  # fmt: skip
                        decided = False
        if len(order["emulated"]) >= 2:
            out.append(
                Ranking(scenario=scen, emulated=order["emulated"], simulated=order["simulated"],
                        decided=decided, same=order["emulated"] == order["simulated"])
            )  # fmt: skip
    return out


def comparisons(cells: list[CellResult]) -> list[Comparison]:
    """Each simulated cell's measures against the emulated cell of its algorithm (a
    model's: the algorithm it models)."""
    by = {(c.scenario, c.cc, c.backend): c for c in cells}
    comps = []
    for (scen, cc, backend), s in by.items():
        linux = MODEL_OF.get(cc, cc)
        if backend != "simulated" or (scen, linux, "emulated") not in by:
            continue
        e = by[scen, linux, "emulated"]
        for name in [*BOUNDS, *SHOWN]:
            if name in e.measures or name in s.measures:
                empty = Measure(mean=None, ci95=None, n=0, values=[])
                comps.append(
                    _compare(
                        scen, cc, name, e.measures.get(name, empty), s.measures.get(name, empty),
                        _still(s) and not _still(e), e.load is not None and e.load < 1,
                    )
                )  # fmt: skip
    return comps


def analyse(sweep: Sweep[CrossvalCell], capacity_bps: int, rtt_ms: float) -> Results:
    cells = [_cell(sweep.out, c) for c in sweep.index.cells]
    res = Results(capacity_bps=capacity_bps, rtt_ms=rtt_ms, cells=cells,
                  comparisons=comparisons(cells), rankings=_rankings(cells))  # fmt: skip
    res.save(sweep.out / "results.json")
    return res
