"""`itb study predictability|friendliness|response-function`."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from itb.cli.common import err, num, out, study_app, ticker
from itb.scenario.options import parse_capacity, parse_ccs

# Options every BU-based study (predictability, friendliness) takes alike.
RTT = typer.Option("20ms", "--rtt", help="RTT of every path.")
REPEAT = typer.Option(3, "--repeat", min=1, max=100, help="Repetitions per point.")
TRANSFER_TIME = typer.Option(15.0, "--transfer-time", help="Seconds one transfer takes alone "
                             "at C_a (sets the volume).")
MAX_SPAN = typer.Option(0.025, "--max-span", min=0.0, max=1.0, help="Every forward source "
                        "starts within this share of one transfer's time (keeps a fair "
                        "protocol's T_mean on the ideal line).")
SCALE = typer.Option(None, "--scale", help="Scale factor: C = 10 Gbit/s ÷ factor. "
                     "[default: from the calibration]")
CAPACITY = typer.Option(None, "--capacity", help="Bottleneck C, e.g. 500Mbit, instead of "
                        "the calibrated one.")
OUT_DIR = typer.Option(None, "--out", help="Study directory (default: "
                       "runs/STUDY-HASH, HASH from the arguments: the same command resumes).")
SEED = typer.Option(1, "--seed", min=0, help="Seed of the run order.")


@study_app.command("predictability")
def study_predictability(
        ccs: str = typer.Option("cubic,reno", "--cc", help="Congestion controls, comma-separated."),
        c_g: str = typer.Option("0.8,1,1.4,1.7,2", "--cg", help="Congestion levels C_g "
                                "(forward sources' capacity over C)."),
        reverse: str = typer.Option("0", "--reverse", help="Reverse-traffic levels R, e.g. "
                                    "0,0.7,0.9,1.1,sym (sym: as many reverse as forward sources)."),
        spacing: float = typer.Option(1.0, "--spacing", min=0, help="Start spacing of the "
                                      "spaced case (s), shrunk to fit --max-span; 0 s is "
                                      "always compared with it."),
        max_span: float = MAX_SPAN,
        r_levels: str = typer.Option("0,1.5", "--r-levels", help="Reverse levels run at "
                                     "--sync-cg for T_mean and CoV against R (none: '')."),
        sync_cg: float = typer.Option(2.0, "--sync-cg", help="C_g at which synchronised "
                                      "and spaced starts are compared."),
        fit: str = typer.Option("1,2", "--fit", help="C_g range of the linear fits: LO,HI."),
        rtt: str = RTT,
        repeat: int = typer.Option(2, "--repeat", min=1, max=100, help="Repetitions per point."),
        transfer_time: float = typer.Option(90.0, "--transfer-time", help="Seconds one transfer "
                                            "takes alone at C_a (sets the volume); long enough "
                                            "for many congestion cycles per transfer."),
        scale: float | None = SCALE,
        capacity: str | None = CAPACITY,
        out_dir: Path | None = OUT_DIR,
        seed: int = SEED) -> None:
    """How predictable are transfer times? Sweep C_g, R and start spacing per protocol.

    Every point is a BU cell (K = 10: the report's 1 Gbit/s nodes on a 10 Gbit/s
    bottleneck, scaled to this testbed). Fits T_mean = a·C_g + b per protocol and
    reverse level (correlation, R²), plots CoV against C_g and R, gives the margins over
    T_mean covering 68 % and 95 % of completions and σ_T for synchronised vs spaced
    starts. About 80 min with the defaults (28 runs of 90 s transfers); resumable
    like `itb bench` (docs/predictability.md).
    """
    from itb.bench.scaling import make_scale
    from itb.errors import ScenarioError
    from itb.study.predictability import StudyArgs, parse_levels, run_study

    cc_list = parse_ccs(ccs)
    lo_hi = parse_levels(fit, "--fit")
    if len(lo_hi) != 2 or lo_hi[0] >= lo_hi[1]:
        raise ScenarioError(None, "--fit", "give two increasing levels, e.g. 1,2")
    rtt_ms = _rtt_ms(rtt)
    a = StudyArgs(tuple(cc_list), parse_levels(c_g, "--cg"), parse_levels(reverse, "--reverse", True),
                  spacing, sync_cg, (lo_hi[0], lo_hi[1]), rtt_ms, repeat, seed,
                  make_scale(factor=scale, capacity_bps=parse_capacity(capacity),
                             transfer_time_s=transfer_time), max_span,
                  parse_levels(r_levels, "--r-levels", True) if r_levels.strip() else ())
    res = _run_study(run_study, "predictability", a, out_dir)
    t = Table(title=f"T_mean against realised C_g ({res.status})")
    for col in ("protocol", "reverse", "model", "C_g range", "coefficients (s)", "r", "R²",
                "ideal slope (s)", "slope / ideal", "points"):
        t.add_column(col)
    for f in res.results.fits:
        t.add_row(f.cc, str(f.reverse), f.model, "–".join(f"{x:g}" for x in f.c_g_range),
                  ", ".join(num(c) for c in f.coef), num(f.r), num(f.r2),
                  num(f.ideal_slope), num(f.slope_ratio), str(f.n))
    out.print(t)
    for s in res.results.spacing:
        out.print(f"{s.cc} at C_g {s.c_g:g}: σ_T {num(s.sigma_t_sync)} s synchronised vs "
                  f"{num(s.sigma_t_spaced)} s with {s.spacing_s:.3g} s spacing (the plan alone "
                  f"gives an ideal protocol {num(s.ideal_sigma_t_spaced)} s)")
    _study_done(res)


@study_app.command("friendliness")
def study_friendliness(
        ccs: str = typer.Option("cubic,bbr", "--cc", help="Tested congestion controls."),
        reference: str = typer.Option("reno", "--reference", help="The reference TCP the "
                                      "tested ones share the bottleneck with."),
        c_g: str = typer.Option("1.5,2", "--cg", help="Congestion levels C_g (forward "
                                "sources' capacity over C; half of them on each protocol)."),
        rtt: str = RTT,
        repeat: int = REPEAT,
        transfer_time: float = TRANSFER_TIME,
        max_span: float = MAX_SPAN,
        scale: float | None = SCALE,
        capacity: str | None = CAPACITY,
        out_dir: Path | None = OUT_DIR,
        seed: int = SEED) -> None:
    """Inter-protocol fairness: each group's completion time when the tested protocol and
    a reference TCP share the bottleneck.

    Per tested protocol and C_g, a BU cell on a K = 10 dumbbell whose sources alternate
    between the tested protocol and the reference, plus one cell per C_g with every
    source on the reference. Reports each group's T, the ratio T_reference / T_tested
    and whether the reference is slower next to the tested protocol than alone (Welch,
    Holm, ±2 % margin). Resumable like `itb bench` (docs/friendliness.md).
    """
    from itb.bench.scaling import make_scale
    from itb.errors import ScenarioError
    from itb.study.friendliness import FriendArgs, run_study
    from itb.study.predictability import parse_levels

    rtt_ms = _rtt_ms(rtt)
    refs = parse_ccs(reference)
    if len(refs) != 1:
        raise ScenarioError(None, "--reference", f"{reference!r}: give one congestion control")
    a = FriendArgs(tuple(parse_ccs(ccs)), refs[0], parse_levels(c_g, "--cg"), rtt_ms, repeat, seed,
                   make_scale(factor=scale, capacity_bps=parse_capacity(capacity),
                              transfer_time_s=transfer_time), max_span)
    res = _run_study(run_study, "friendliness", a, out_dir)
    t = Table(title=f"inter-protocol fairness against {a.reference} ({res.status})")
    for col in ("tested", "C_g", "T tested (s)", "T reference (s)", "T reference alone (s)",
                "T_ref / T_tested", "failed", "reference: next to tested vs alone"):
        t.add_column(col)
    for p in res.results.points:
        c = p.reference_cost
        t.add_row(p.tested, f"{p.c_g_realised:g}", num(p.tested_group.t_mean),
                  num(p.reference_group.t_mean),
                  num(p.reference_alone.t_mean) if p.reference_alone else "–",
                  num(p.ratio) + (f" ± {p.ratio_ci95:.2g}" if p.ratio_ci95 is not None else ""),
                  str(p.tested_group.failed + p.reference_group.failed),
                  (c.verdict + (f" ({100 * c.difference:+.1f} %)" if c.difference is not None
                                else "")) if c else "–")
    out.print(t)
    _study_done(res)


@study_app.command("response-function")
def study_response_function(
        ccs: str = typer.Option("reno,highspeed,scalable,bic,htcp,cubic", "--cc",
                                help="Algorithms, comma-separated (loss-based ones; vegas too)."),
        points: int = typer.Option(5, "--points", min=3, max=20, help="Loss rates per algorithm."),
        rtt: str | None = typer.Option(None, "--rtt", help="RTT of the path, for every "
                                          "algorithm. [default: each algorithm's own: 20 ms; "
                                          "HighSpeed 100 ms, BIC 200 ms]"),
        rate: str | None = typer.Option(None, "--rate", help="Bottleneck C: far above the "
                                           "flows, so the loss sets the rate. [default: 1.25x the "
                                           "algorithm's top planned rate, at least 1Gbit]"),
        max_rate: str | None = typer.Option(None, "--max-rate", help="Highest rate the "
                                               "plan aims at (caps the window range). "
                                               "[default: 250Mbit; HighSpeed 500Mbit, BIC 1Gbit]"),
        max_measure: str | None = typer.Option(None, "--max-measure", help="Longest "
                                                  "measured span of a point (it aims at 40 "
                                                  "mean loss intervals). [default: 60s; "
                                                  "HighSpeed 180s, BIC 300s]"),
        windows: str | None = typer.Option(None, "--windows", help="Window range LO,HI in "
                                              "segments the loss rates aim at, for every "
                                              "algorithm. [default: each algorithm's own]"),
        repeat: int = typer.Option(1, "--repeat", min=1, max=20, help="Repetitions per point."),
        out_dir: Path | None = typer.Option(None, "--out", help="Study directory (default: "
                                               "runs/response-function-<hash of the arguments>)."),
        seed: int = typer.Option(1, "--seed", min=0, help="Seed of the run order and of the "
                                 "loss draws (the i-th point of each algorithm: seed + i).")) -> None:
    """Check each congestion control against its published response function.

    One flow per point with random loss p (data direction only) at a fixed RTT on a
    link that is not the limit. The loss range of each algorithm is planned from its
    published w = c/p^d, over the windows where Linux's implementation follows that
    slope (BIC: 5000-12000 segments at 200 ms; HighSpeed: 800-3300 at 100 ms; Scalable:
    120-431 at 20 ms; see docs/cc.md). Fits log w = log c − d·log p and compares d with
    the publications (Reno 0.5, BIC 0.5, HighSpeed 0.835, Scalable 1.0; within ±0.08),
    and measures each congestion event's decrease β from the tcp_info samples against
    Linux's (within ±0.03). About 75 min with the defaults (30 points); resumable.
    """
    from itb.errors import ScenarioError
    from itb.scenario.units import parse_duration, parse_rate
    from itb.study.response import ResponseArgs, run_study

    def rate_of(text: str, option: str) -> int:
        try:
            v = parse_rate(text)
        except ValueError as e:
            raise ScenarioError(None, option, str(e)) from None
        if not v:
            raise ScenarioError(None, option, "give a finite rate, e.g. 1Gbit")
        return v

    def seconds_of(text: str, option: str) -> float:
        try:
            v = parse_duration(text) / 1e6
        except ValueError as e:
            raise ScenarioError(None, option, str(e)) from None
        if v <= 0:
            raise ScenarioError(None, option, "must be above 0")
        return v

    rtt_ms = seconds_of(rtt, "--rtt") * 1000 if rtt is not None else None
    measure_s = seconds_of(max_measure, "--max-measure") if max_measure is not None else None
    if measure_s is not None and measure_s < 20:
        raise ScenarioError(None, "--max-measure", "at least 20s (a point measures 20 s at least)")
    span = None
    if windows is not None:
        try:
            span = tuple(float(x) for x in windows.split(","))
        except ValueError:
            span = ()
        if len(span) != 2 or not 4 <= span[0] < span[1]:
            raise ScenarioError(None, "--windows", f"{windows!r}: give two increasing window "
                                                   "sizes in segments, e.g. 120,1000")
    a = ResponseArgs(tuple(parse_ccs(ccs)), points, rtt_ms,
                     rate_of(rate, "--rate") if rate is not None else None,
                     rate_of(max_rate, "--max-rate") if max_rate is not None else None,
                     repeat=repeat, seed=seed, windows=span, max_measure_s=measure_s)
    res = _run_study(run_study, "response-function", a, out_dir)
    t = Table(title=f"response functions w = c/p^d and decreases β ({res.status})")
    for col in ("algorithm", "points", "d", "d published", "c", "c published", "R²",
                "β", "β nominal", "events"):
        t.add_column(col)
    mark = {True: " ✓", False: " ✗"}
    for f in res.results.fits:
        d = num(f.d) + (f" ± {f.d_ci95:.2g}" if f.d_ci95 is not None else "")
        t.add_row(f.cc, str(f.n), d + mark.get(f.d_ok, ""), num(f.d_published),
                  num(f.c), num(f.c_published), num(f.r2),
                  num(f.beta) + mark.get(f.beta_ok, ""), num(f.beta_nominal), str(f.events))
    out.print(t)
    _study_done(res)


def _rtt_ms(text: str) -> float:
    """--rtt of the BU studies, in ms."""
    from itb.errors import ScenarioError
    from itb.scenario.units import parse_duration

    try:
        return parse_duration(text) / 1000
    except ValueError as e:
        raise ScenarioError(None, "--rtt", str(e)) from None


def _run_study(run_study, kind: str, args, out_dir: Path | None):
    """A study's sweep with its progress on stderr (default directory:
    runs/<kind>-<hash of the arguments>); returns its outcome."""
    from itb.bench.sweep import default_dir

    target = out_dir or default_dir(kind, args.key())
    err.print(f"study directory: {target}")
    tick = ticker()
    res = run_study(args, target, say=lambda m: err.print(m, highlight=False), tick=tick)
    tick("")
    return res


def _study_done(res) -> None:
    out.print(f"results: {res.out / 'results.json'}")
    out.print(f"report: {res.report}")
    if res.status != "complete":
        err.print("interrupted: run the same command again to resume")
        raise typer.Exit(res.exit_code() if res.signal is not None else 130)
