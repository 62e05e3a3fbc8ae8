"""The report of one `itb bench` sweep: the benchmark table, the protocol comparisons,
figures, how each class was scaled and realised (with its sources' windows), and the
testbed's calibration."""

from __future__ import annotations

from pathlib import Path

from itb import rundir
from itb.analysis.benchmark import BenchComparison, BenchRow
from itb.analysis.cells import forward_completions
from itb.draw.html import figure, render
from itb.report import figures


def _completion_times(out: Path, state: dict) -> dict[tuple[str, str], list[float]]:
    return {(figures.group_label(c["app"], c["variant"], c["class"]), c["cc"]):
            forward_completions(out, c) for c in state["cells"]}


def _cell_figures(out: Path, state: dict) -> list[dict]:
    """Each cell's goodput-over-time figure of its first repetition, from its own report."""
    figs = []
    for c in state["cells"]:
        png = out / c["run"] / "report" / "goodput-rep001.png"
        if png.exists():
            figs.append(figure(png, f"{c['name']}: goodput per transfer and G(t), repetition 1"))
    return figs


def _classes(state: dict) -> list[dict]:
    seen = {}
    for c in state["cells"]:
        key = (c["app"], c["variant"], c["class"])
        if key not in seen:
            seen[key] = c["realisation"]
    return [dict(r, key=f"{a}{'/' + v if v else ''} {k}") for (a, v, k), r in seen.items()]


def _windows(state: dict) -> list[dict]:
    """The per-flow windows the cells recorded (realisation.window), one row per class and
    distinct source (rate and RTT), naming the applications that share it."""
    rows: dict[tuple, dict] = {}
    for c in state["cells"]:
        w = c["realisation"].get("window")
        if not w:  # a benchmark written before windows were recorded
            continue
        key = (c["class"], w["documents_rate_bps"], w["testbed_rate_bps"], w["testbed_rtt_ms"])
        label = c["app"] + (f"/{c['variant']}" if c["variant"] else "")
        row = rows.setdefault(key, dict(w, apps=[]))
        if label not in row["apps"]:
            row["apps"].append(label)
    return sorted(rows.values(), key=lambda r: (r["cls"], r["apps"]))


def build_bench_report(out: Path, state: dict, rows: list[BenchRow],
                       comps: list[BenchComparison]) -> Path:
    rep = out / "report"
    figs = []
    f = figures.tmean_by_protocol(rows, rep / "tmean-by-protocol.png")
    if f:
        figs.append(figure(f, "T_mean per application × class and protocol, 95 % interval"))
    f = figures.completion_by_protocol(_completion_times(out, state), rep / "completion-times.png")
    if f:
        figs.append(figure(f, "completion-time distributions per protocol"))
    cal_path = out / "calibration.json"
    calibration = rundir.read_json(cal_path) if cal_path.exists() else None
    return render("bench.html.j2", rep / "report.html", state=state, rows=rows, comps=comps,
                  figs=figs, cell_figs=_cell_figures(out, state), classes=_classes(state),
                  windows=_windows(state), calibration=calibration)
