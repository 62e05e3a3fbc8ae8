"""What `itb study crossval` prints at the end: every measure emulated against simulated,
with its bound and verdict, and the protocols' rankings."""

from __future__ import annotations

from itb.engine.steal import STEAL_WARN
from itb.study.crossval.args import MODEL_OF, CrossvalArgs
from itb.study.crossval.results import Comparison, Measure, Results
from itb.study.registry import Line, Shown, Table
from itb.sweep.sweep import Outcome

UNITS = {"goodput_bps": (1e-6, "Mbit/s"), "first_loss_cwnd": (1, "segments")}


def value(m: Measure, name: str) -> str:
    if m.mean is None:
        return "–"
    scale, _ = UNITS.get(name, (1, ""))
    ci = "" if m.ci95 is None else f" ± {m.ci95 * scale:.3g}"
    return f"{m.mean * scale:.4g}{ci} (n={m.n})"


def cc_shown(cc: str) -> str:
    """cubic; a model with the algorithm it is compared with: ns3:TcpCubic (vs cubic)."""
    return f"{cc} (vs {MODEL_OF[cc]})" if cc in MODEL_OF else cc


def verdict(c: Comparison) -> str:
    """agrees, DIFFERS, undecided (the means within the bound, the interval test not);
    with what could not be tested when a side has one repetition."""
    if c.within is None:
        return "shown" if c.bound == "shown" else "–"
    said = "agrees" if c.within else "undecided" if c.undecided else "DIFFERS"
    if c.untested:
        said += " (means only: one repetition on a side)"
    return said


def difference(c: Comparison) -> str:
    if c.difference is None:
        return "–"
    if c.how == "relative":
        return f"{100 * c.difference:+.1f} %"
    if c.how == "ratio":
        return f"× {c.difference:.2f}"
    return f"{c.difference:+.3f}"


def tables(res: Outcome[Results], a: CrossvalArgs) -> list[Shown]:
    where = (
        f"the {a.grid} grid's cells (docs/simulation.md)"
        if a.grid
        else f"C {a.capacity_bps / 1e6:g} Mbit/s, RTT {a.rtt_ms:g} ms, one-BDP queue"
    )
    t = Table(
        title=f"emulation against simulation ({res.status}): {where}, {a.repeat} repetitions "
        f"with {a.jitter_ms:g} ms of start jitter; mean ± 95 % interval",
        columns=["scenario", "cc", "measure", "emulated", "simulated", "difference", "bound",
                 "verdict"],
    )  # fmt: skip
    for c in res.results.comparisons:
        t.rows.append(
            [c.scenario, cc_shown(c.cc), c.measure, value(c.emulated, c.measure),
             value(c.simulated, c.measure), difference(c), c.bound, verdict(c)]
        )  # fmt: skip
    shown: list[Shown] = [t]
    for r in res.results.rankings:
        shown.append(
            Line(
                text=f"{r.scenario}: emulated {' < '.join(r.emulated)}, simulated "
                f"{' < '.join(r.simulated)} (fastest first): "
                + ("same" if r.same else "different")
                + ("" if r.decided else " — emulation's order is within its noise")
            )
        )
    for cell in res.results.cells:
        if cell.disturbed:
            shown.append(Line(text=f"{cell.name}: {cell.disturbed} repetition(s) left out, the "
                          f"hypervisor took {STEAL_WARN:.0%} of the CPU time or more during "
                          "them"))  # fmt: skip
    for c in res.results.comparisons:
        if c.cause:
            how = "undecided:" if c.undecided else "likely"
            shown.append(Line(text=f"{c.scenario} {c.cc} {c.measure}: {how} {c.cause}"))
        if c.untested:
            shown.append(Line(text=f"{c.scenario} {c.cc} {c.measure}: untested: {c.untested}"))
    return shown
