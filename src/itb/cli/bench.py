"""`itb bench`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypedDict

import typer

from itb.cli.backend import BACKEND, ready, takes_backend
from itb.cli.bench_print import QUICK_SHORTENS, axes_lines, bench_document, print_bench
from itb.cli.common import app, err, out, say, ticker
from itb.cli.output import JSON, print_json
from itb.errors import ScenarioError
from itb.scenario.options import csv_option, parse_capacity, parse_ccs

if TYPE_CHECKING:
    from itb.backends.registry import Backend


class Defaults(TypedDict, total=False):
    """What --quick gives the options not given (absent: the option's own default)."""

    apps: str
    classes: str
    ccs: str
    max_repeat: int
    first_look: int
    budget_s: float
    transfer_time: float
    spacing_s: float
    pa_messages: int


QUICK: Defaults = {
    "apps": "BU,PA",
    "classes": "B,F",
    "ccs": "cubic,reno,bbr",
    # the sequence of every `itb bench` (looks at 3, 5, 7, 10), as far as 10 minutes of
    # runs on 2 cores take it: its last look spends what is left of α (docs/benchmark.md)
    "max_repeat": 10,
    "first_look": 3,
    "budget_s": 600.0,  # with set-up and calibration, under 15 min
    "transfer_time": 2.0,
    "spacing_s": 0.25,  # PA's load up within 1.5 s (not 4.3)
    "pa_messages": 8,  # 8 × (1 MB + 2 MB back)
}


# the options of `itb bench`
APPS_OPT = typer.Option(
    None, "--app", help="Applications, comma-separated: TU, WM, PP, BU, PA. [default: BU,PA]"
)
CLASSES_OPT = typer.Option(
    None, "--class", help="Classes: letters and ranges, e.g. A-L, B,F, A-D,K. [default: A-L]"
)
CCS_OPT = typer.Option(
    None,
    "--cc",
    help="Congestion controls, comma-separated; udt runs the cell's traffic over UDT "
    "(UDT4's own congestion control, each source capped at its C_a; BU, WM, PP; "
    "classes of up to 32 sources a direction). [default: cubic,reno,bbr]",
)
REFERENCE_OPT = typer.Option(
    None,
    "--reference",
    help="The protocol every other one is compared with, fixed before the data. "
    "[default: the first of --cc]",
)
REPEAT_OPT = typer.Option(
    None,
    "--repeat",
    min=1,
    max=100,
    help="Exactly this many repetitions of every cell (a fixed design) instead of "
    "repeating until each comparison is decided.",
)
MAX_REPEAT_OPT = typer.Option(
    None,
    "--max-repeat",
    min=3,
    max=100,
    help="Repetitions until every comparison of an application × class is faster, "
    "slower or equivalent, at most this many per cell, looking at the data after 3, "
    "5, 7, 10, 14, … (docs/benchmark.md). [default: 10]",
)
BUDGET_OPT = typer.Option(
    None,
    "--budget",
    metavar="DURATION",
    help="Stop repeating after this long (e.g. 20min, 2h, 900s) of this invocation; "
    "undecided comparisons then say the budget stopped them. [default: none]",
)
QUICK_OPT = typer.Option(
    False,
    "--quick",
    help="A short benchmark: BU and PA on classes B and F, cubic/reno/bbr, repeated "
    "until decided within 10 minutes of runs (--budget 10min), 2 s transfers started "
    "0.25 s apart, 8 PA round trips (about 13 minutes on a 2-core machine, set-up "
    "included). Options given explicitly win.",
)
OUT_DIR_OPT = typer.Option(
    None,
    "--out",
    help="Benchmark directory "
    "(default: runs/bench-<hash of the arguments>, "
    "so the same command resumes).",
)
SCALE_OPT = typer.Option(
    None,
    "--scale",
    help="One scale factor for "
    "every class: C = K × C_a ÷ factor (C_a: --access, 1 Gbit/s). "
    "[default: from the calibration]",
)
CAPACITY_OPT = typer.Option(
    None,
    "--capacity",
    help="Scale each class to this bottleneck C instead of the calibrated one, e.g. 500Mbit.",
)
SCALING_OPT = typer.Option(
    "rate",
    "--scaling",
    case_sensitive=False,
    help="What scaling preserves: rate "
    "keeps every RTT (per-flow windows shrink by the factor); "
    "window multiplies every RTT by the factor (per-flow "
    "windows are the documents', round trips last longer).",
)
TRANSFER_TIME_OPT = typer.Option(
    None,
    "--transfer-time",
    help="Seconds "
    "one BU transfer takes alone at C_a (the "
    "documents: 240 = 30 GB at 1 Gbit/s). "
    "[default: 240]",
)
SPACING_OPT = typer.Option(
    None,
    "--spacing",
    min=0,
    help="Start spacing of bulk transfers in seconds (0 = synchronised). [default: 1; "
    "--quick: 0.25]",
)
STREAMS_OPT = typer.Option(
    1,
    "--streams",
    min=1,
    max=10,
    help="N_s: parallel streams per BU forward source, sharing its C_a (RR-6244 Table 5: "
    "1, 5 or 10).",
)
BUFFER_OPT = typer.Option(
    "bdp",
    "--buffer",
    help="The bottleneck's queue: bdp (one bandwidth-delay product), sqrtk (BDP/√K, "
    "the small buffer of links of high aggregation K: RR-6244 §4.4, Appenzeller et "
    "al. 2004), or a size such as 2MB or 100pkt.",
)
K_OPT = typer.Option(
    10,
    "--k",
    help="K of the data-centre classes (B, D, F, H, J, L): 1 or 10 (RR-6244 Table 3's "
    '"1 or 10"). At K = 1 a class runs round(C_g·K) sources, each paced at C_g·K/M '
    "of C_a (class B: one source at 0.8 C_a). The Internet classes keep K = 1000.",
)
RTT_OPT = typer.Option(
    None,
    "--rtt",
    help="Every class's RTT instead of its own (RR-6244 Table 5: 1ms, 20ms, 200ms), or "
    "a mix of modes, one per group of host pairs (BU only): 20ms,200ms or mix (1, 20 "
    "and 200 ms). [default: each class's]",
)
ACCESS_OPT = typer.Option(
    None,
    "--access",
    help="The documents' access rate C_a the classes are scaled from (RR-6244 Table 5: "
    "100Mbit, 1Gbit, 10Gbit): C = K × C_a. On a testbed of fixed C it changes the scale "
    "factor (so a window: see --scaling window and --scale). [default: 1Gbit]",
)
BACKGROUND_OPT = typer.Option(
    None,
    "--background",
    help="Background traffic B on a host pair of its own, a share of C: cbr:20% "
    "(constant-rate UDP), poisson:20% (UDP, exponential gaps), exponential:20%, "
    "pareto:20%[:1.5] or weibull:20%[:0.5] (cubic TCP flows, Poisson arrivals, "
    "sizes of that law). [default: none]",
)
PA_MESSAGES_OPT = typer.Option(
    None,
    "--pa-messages",
    min=1,
    max=10000,
    help="PA: round trips of 1 MB messages (the documents' 200; fewer for a short "
    "check). [default: 200]",
)
SEED_OPT = typer.Option(1, "--seed", min=0, help="Seed of the run order and of every random draw.")


@app.command("bench")
@takes_backend
def bench_cmd(
    apps: str | None = APPS_OPT,
    classes: str | None = CLASSES_OPT,
    ccs: str | None = CCS_OPT,
    reference: str | None = REFERENCE_OPT,
    repeat: int | None = REPEAT_OPT,
    max_repeat: int | None = MAX_REPEAT_OPT,
    budget: str | None = BUDGET_OPT,
    quick: bool = QUICK_OPT,
    out_dir: Path | None = OUT_DIR_OPT,
    scale: float | None = SCALE_OPT,
    capacity: str | None = CAPACITY_OPT,
    scaling: Literal["rate", "window"] = SCALING_OPT,
    transfer_time: float | None = TRANSFER_TIME_OPT,
    spacing: float | None = SPACING_OPT,
    streams: int = STREAMS_OPT,
    buffer: str = BUFFER_OPT,
    k: int = K_OPT,
    rtt: str | None = RTT_OPT,
    access: str | None = ACCESS_OPT,
    background: str | None = BACKGROUND_OPT,
    pa_messages: int | None = PA_MESSAGES_OPT,
    seed: int = SEED_OPT,
    as_json: bool = JSON,
    backend: Backend = BACKEND,
) -> None:
    """Run the ITB benchmark: application × class × protocol, repeated, then print the
    table and write the report.

    Each cell (e.g. `BU-F-cubic`) is a generated scenario run by the engine
    (docs/benchmark.md). Classes are scaled to this testbed: K, C_g, R and the number of
    sources are kept, C, C_a and volumes divided by one factor per class, taken from the
    last `itb calibrate` (or --scale / --capacity); the RTT is kept (--scaling rate) or
    multiplied by the factor (--scaling window). Classes whose sources' windows fall under
    20 segments are warned about. Per application and class, every protocol is compared
    with the reference (--reference): faster, slower, equivalent within ±2 % or
    inconclusive, with a 5 % chance of any false verdict over the whole table. Cells are
    repeated until every comparison of their application and class is decided: rounds
    of one repetition per cell still open (repetition r of every open cell before r+1 of
    any, in a seeded random order), a look at the data after 3, 5, 7, 10, … repetitions,
    at most --max-repeat, or until --budget ends (--repeat N: exactly N, one look).
    The verdicts are printed first, then the table. Ctrl-C stops cleanly; the same
    command resumes without redoing finished runs and takes the same decisions; `itb
    report DIR` rebuilds the table and report from the raw logs. Exit code 0 when every
    run succeeded, 1 when some failed, 130 when interrupted, 2 for bad arguments.
    """
    from itb.report.bench import build_bench_report
    from itb.report.build import analyse_run
    from itb.suite.apps import check_app
    from itb.suite.axes import parse_access, parse_rtt
    from itb.suite.background import parse_background
    from itb.suite.benchmark import BenchArgs, run_bench
    from itb.suite.classes import parse_classes
    from itb.suite.scaling import make_scale
    from itb.sweep.sweep import default_dir

    q: Defaults = QUICK if quick else {}
    if repeat is not None and (max_repeat is not None or budget is not None):
        flag = "--max-repeat" if max_repeat is not None else "--budget"
        raise ScenarioError(
            None, flag, "--repeat fixes the repetitions; --max-repeat and --budget end a sequence"
        )
    budget_s = parse_budget(budget) if budget is not None else q.get("budget_s")
    app_list = [
        check_app(a) for a in csv_option(apps or q.get("apps") or "BU,PA", "--app", upper=True)
    ]
    cc_list = parse_ccs(ccs or q.get("ccs") or "cubic,reno,bbr", udt=True)
    cap = parse_capacity(capacity)
    sc = make_scale(
        factor=scale,
        capacity_bps=cap,
        transfer_time_s=(
            transfer_time if transfer_time is not None else q.get("transfer_time", 240.0)
        ),
        mode=scaling,
        buffer=buffer,
        access_bps=parse_access(access),
        # a simulator: the documents' C, not what this machine emulates
        simulated=backend.unbounded_rates,
    )
    args = BenchArgs(
        tuple(app_list),
        tuple(parse_classes(classes or q.get("classes") or "A-L")),
        tuple(cc_list),
        repeat or max_repeat or q.get("max_repeat") or 10,
        seed,
        spacing if spacing is not None else q.get("spacing_s", 1.0),
        sc,
        pa_messages or q.get("pa_messages") or 200,
        backend,
        _one_cc(reference),
        streams,
        k,
        parse_rtt(rtt),
        parse_background(background),
        sequential=repeat is None,
        first_look=q.get("first_look", 3) if max_repeat is None else 3,
        budget_s=budget_s,
    )
    ready(backend, args.ccs, say)  # what it needs, before its directory is made
    target = out_dir or default_dir("bench", args.key())
    say(f"benchmark directory: {target}")
    tick = ticker()
    result = run_bench(
        args,
        target,
        build_bench_report,
        analyse_run,
        say=say,
        tick=tick,
    )
    tick("")
    _print_result(result, args, quick, as_json)


def _print_result(result, args, quick: bool, as_json: bool) -> None:
    """The verdicts and the table (or the JSON document), the warnings, and the exit
    code: 128 + the signal when interrupted, 1 when some run failed."""
    if as_json:
        print_json(bench_document(result, axes_lines(args, result.rows), quick))
    else:
        print_bench(result)
        for line in axes_lines(args, result.rows):
            out.print(line, highlight=False)
        if quick:
            out.print(QUICK_SHORTENS, highlight=False)
    for w in result.warnings:
        err.print(f"[yellow]warning:[/yellow] {w}", highlight=False)
    if result.status != "complete":
        err.print("interrupted: run the same command again to resume")
        raise typer.Exit(128 + (result.signal or 2))
    if any(r.failed or r.failed_repetitions for r in result.rows):
        raise typer.Exit(1)


def parse_budget(text: str) -> float:
    """--budget: a duration with its unit, s, min or h (e.g. 20min) → seconds."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|min|h)\s*", text)
    if m is None or float(m.group(1)) <= 0:
        raise ScenarioError(
            None, "--budget", f"{text!r}: give a positive duration with s, min or h (e.g. 20min)"
        )
    return float(m.group(1)) * {"s": 1, "min": 60, "h": 3600}[m.group(2)]


def _one_cc(text: str | None) -> str | None:
    if text is None:
        return None
    ccs = parse_ccs(text, udt=True)
    if len(ccs) != 1:
        raise ScenarioError(None, "--reference", f"one protocol, not {text!r}")
    return ccs[0]
