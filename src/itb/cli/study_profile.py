"""`itb study profile margin|pair|transition|stage0`: the profile-pursuit studies of INRIA
RR-6874 (docs/profile.md)."""

from __future__ import annotations

import math
from pathlib import Path

import typer
from rich.table import Table

from itb.cli.common import err, out, study_app, ticker
from itb.errors import ScenarioError
from itb.scenario.options import csv_option, parse_capacity

profile_study_app = typer.Typer(
    help="Profile pursuit studies (INRIA RR-6874): lateness against margin for one constant "
    "profile and for two complementary profiles sharing the bottleneck, the cost of a "
    "low → high step, and the preliminary experiments (CPU, disk, parallel streams). See "
    "docs/profile.md.", no_args_is_help=True, rich_markup_mode="markdown")
study_app.add_typer(profile_study_app, name="profile")

CAPACITY = typer.Option(None, "--capacity", help="Bottleneck C, e.g. 1Gbit. [default: from "
                        "the calibration]")
OUT_DIR = typer.Option(None, "--out", help="Study directory (default: runs/STUDY-HASH, HASH "
                       "from the arguments: the same command resumes).")
SEED = typer.Option(1, "--seed", min=0, help="Seed of the run order.")
BUFFER = typer.Option(None, "--buffer", help="The bottleneck's queue: bytes (2MB), packets "
                      "(100pkt) or a BDP multiple (0.5bdp). [default: one BDP, at least 64 "
                      "frames]")
OPEN_WINDOW = typer.Option(True, "--open-window/--no-open-window", help="Receivers advertise "
                           "their whole buffer from the first ACK (RR-6874's receiver), or grow "
                           "it as Linux does.")


def _margins(text: str) -> tuple[float, ...]:
    """"0:10:0.5" (percent, from:to:step) or a comma list of percents → shares of C."""
    try:
        if ":" in text:
            lo, hi, step = (float(x) for x in text.split(":"))
            if step <= 0 or hi < lo:
                raise ValueError("FROM:TO:STEP needs TO ≥ FROM and STEP > 0")
            n = math.floor((hi - lo) / step + 1e-9)  # never past TO
            values = [lo + k * step for k in range(n + 1)]
        else:
            values = [float(x) for x in csv_option(text, "--margins")]
    except ValueError as e:
        raise ScenarioError(None, "--margins", f"{text!r}: {e}") from None
    if not values or any(not 0 <= v < 100 for v in values):
        raise ScenarioError(None, "--margins", "give percents of C in [0, 100)")
    shares = tuple(round(v / 100, 6) for v in values)
    return _once(shares, "--margins", lambda v: f"{v * 100:g} %")


def _once(values: tuple, option: str, show) -> tuple:
    """The values, refused when one is given twice (two cells would be one)."""
    seen = set()
    for v in values:
        if v in seen:
            raise ScenarioError(None, option, f"{show(v)} is given twice")
        seen.add(v)
    return values


def _ms(text: str, option: str) -> tuple[float, ...]:
    from itb.scenario.units import parse_duration

    try:
        values = tuple(parse_duration(x) / 1000 for x in csv_option(text, option))
    except ValueError as e:
        raise ScenarioError(None, option, str(e)) from None
    return _once(values, option, lambda v: f"{v:g} ms")


def _rate(text: str, option: str, capacity_bps: int | None = None) -> int:
    """A finite rate of 1 kbit/s or more (at most C when given)."""
    from itb.scenario.units import parse_rate

    try:
        r = parse_rate(text, lo=1_000, hi=100_000_000_000)
    except ValueError as e:
        raise ScenarioError(None, option, str(e)) from None
    if r is None:
        raise ScenarioError(None, option, "give a finite rate")
    if capacity_bps is not None and r > capacity_bps:
        raise ScenarioError(None, option, f"{text} is more than C ({capacity_bps / 1e6:g} Mbit/s)")
    return r


def _buffer(text: str | None) -> str | None:
    """--buffer as a scenario's `buffer` (checked: its unit; against the path when the
    cells are made)."""
    from itb.scenario.units import UnitError, parse_buffer

    if text is None:
        return None
    try:
        parse_buffer(text)
    except (UnitError, ValueError) as e:
        raise ScenarioError(None, "--buffer", str(e)) from None
    return text


def _capacity(text: str | None) -> int:
    from itb.bench.scaling import make_scale

    return make_scale(factor=None, capacity_bps=parse_capacity(text), transfer_time_s=1.0).capacity_bps


def _model(mech, given: Path | None, open_window: bool) -> Path:
    """The mechanism's model file; a warning when it was calibrated with the receivers'
    windows other than the study will run them (its predictions then carry the
    difference: half a second at 100 ms for nocc)."""
    from itb import files

    if given is not None:  # checked before the analysis is imported
        files.check(given, "model", "--model")
    from itb.analysis.profile_model import Model

    path = given or mech.model_path()
    if not path.exists():
        raise ScenarioError(None, "--model", f"{path} does not exist: run `itb profile calibrate "
                                             f"--cc {mech.cc}"
                                             + ("" if mech.cc == "udt" else f" --enforce {mech.enforce}")
                                             + "` first")
    calibrated = Model.load(path).open_receive_window
    if mech.protocol == "tcp" and calibrated != open_window:
        how = {True: "open", False: "grown by Linux", None: "not recorded (an older model: "
               "grown by Linux)"}
        err.print(f"warning: {path} was calibrated with receive windows {how[calibrated]}, the "
                  f"study runs them {how[open_window]}: its predictions are off by the "
                  "difference", highlight=False)
    return path


def _go(run, args, kind: str, key: dict, out_dir: Path | None):
    from itb.bench.sweep import default_dir

    target = out_dir or default_dir(kind, key)
    err.print(f"study directory: {target}")
    tick = ticker()
    res = run(args, target, say=lambda m: err.print(m, highlight=False), tick=tick)
    tick("")
    return res


def _done(res, *tables: Table) -> None:
    for t in tables:
        out.print(t)
    out.print(f"results: {res.out / 'results.json'}")
    out.print(f"report: {res.report}")
    if res.status != "complete":
        err.print("interrupted: run the same command again to resume")
        raise typer.Exit(res.exit_code() if res.signal is not None else 130)


def fixed(x, digits: int) -> str:
    """x with `digits` decimals; "–" for nothing (cli.common.num gives significant digits)."""
    return "–" if x is None else f"{x:.{digits}f}"


def _margin_cell(m) -> str:
    return "none" if m is None else f"{m * 100:g} %"


@profile_study_app.command("margin")
def margin(
        mechanism: str = typer.Option("nocc-pacing", "--mechanism", help="nocc-pacing (TCP "
                                      "without congestion control, paced), udt, or CC-ENFORCE such "
                                      "as reno-application."),
        rtt: str = typer.Option("20ms", "--rtt", help="RTTs, comma-separated."),
        margins: str = typer.Option("0:10:0.5", "--margins", help="Margins m in % of C: "
                                    "FROM:TO:STEP or a comma list."),
        seconds: float = typer.Option(60.0, "--seconds", min=1.0, max=3600.0, help="Each "
                                      "transfer's predicted completion time (sets its volume)."),
        repeat: int = typer.Option(10, "--repeat", min=1, max=100, help="Repetitions per point."),
        capacity: str | None = CAPACITY,
        model: Path | None = typer.Option(None, "--model", help="The mechanism's model. "
                                             "[default: runs/profile-model-MECHANISM.json]"),
        buffer: str | None = BUFFER,
        open_window: bool = OPEN_WINDOW,
        out_dir: Path | None = OUT_DIR,
        seed: int = SEED) -> None:
    """Lateness of one transfer along a constant profile against the margin m (RR-6874
    §5.3): it asks for (1 − m)·C at the bottleneck through the calibrated model, which
    also predicts its completion. Reports the margin from which the lateness stays below
    1 s and 0.5 s. The defaults (21 margins × 10 repetitions × 60 s) take about 4 hours.
    """
    from itb.study.profile_margin import MarginArgs, run_margin
    from itb.study.pursuit_setup import file_digest, parse_mechanism

    mech = parse_mechanism(mechanism, "--mechanism")
    a = MarginArgs(mech, _ms(rtt, "--rtt"), _margins(margins), seconds, repeat,
                   _capacity(capacity), open_window, seed, _model(mech, model, open_window),
                   _buffer(buffer))
    res = _go(run_margin, a, "profile-margin", a.key(file_digest(a.model_path)), out_dir)
    r = res.results
    t = Table(title=f"{r.mechanism}: lateness (s) against the margin ({res.status})")
    for col in ("RTT (ms)", "m", "runs", "failed", "lateness", "95 % ±", "max", "max 1 ms / mean"):
        t.add_column(col)
    for p in r.points:
        t.add_row(f"{p.rtt_ms:g}", f"{p.margin * 100:g} %", str(p.lateness.n),
                  str(p.lateness.n_failed), fixed(p.lateness.mean, 3), fixed(p.lateness.ci95, 3),
                  fixed(p.lateness.max, 3), fixed(p.burst.overshoot, 3))
    th = Table(title="margin needed")
    for col in ("RTT (ms)", "lateness below", "from margin"):
        th.add_column(col)
    for x in r.thresholds:
        th.add_row(f"{x.rtt_ms:g}", f"{x.limit_s:g} s", _margin_cell(x.margin))
    _done(res, t, th)


@profile_study_app.command("pair")
def pair(
        pairs: str = typer.Option("nocc-pacing+nocc-pacing,udt+udt,nocc-pacing+udt", "--pairs",
                                  help="Mechanisms of flows A and B, A+B, comma-separated."),
        margins: str = typer.Option("1,2.5,5,7.5,10,15,20,25", "--margins", help="Margins m in "
                                    "% of C: a comma list or FROM:TO:STEP."),
        rtt: str = typer.Option("12ms", "--rtt", help="RTT of both paths (the document's 12 ms)."),
        seconds: float = typer.Option(60.0, "--seconds", min=3.0, max=3600.0, help="Each "
                                      "transfer's predicted time; a step is a third of it."),
        repeat: int = typer.Option(5, "--repeat", min=1, max=100, help="Repetitions per point."),
        capacity: str | None = CAPACITY,
        models: Path | None = typer.Option(None, "--models", help="Directory of the models "
                                              "(profile-model-MECHANISM.json). [default: runs]"),
        buffer: str | None = BUFFER,
        open_window: bool = OPEN_WINDOW,
        out_dir: Path | None = OUT_DIR,
        seed: int = SEED) -> None:
    """Two complementary step profiles sharing the bottleneck at (1 − m)·C (RR-6874
    §6.1, figures 14 and 15): each flow's lateness against the margin, for each pair of
    mechanisms. Uses each mechanism's model (runs/profile-model-*.json). The defaults
    (3 pairs × 8 margins × 5 repetitions × 60 s) take about 2 hours.
    """
    from itb.errors import ScenarioError
    from itb.study.profile_pair import PairArgs, run_pair
    from itb.study.pursuit_setup import file_digest, parse_mechanism

    combos = []
    for text in csv_option(pairs, "--pairs"):
        if text.count("+") != 1:
            raise ScenarioError(None, "--pairs", f"{text!r}: give two mechanisms, A+B")
        a_text, b_text = text.split("+")
        combos.append((parse_mechanism(a_text, "--pairs"), parse_mechanism(b_text, "--pairs")))
    paths = {m.name: _model(m, models / m.model_path().name if models else None, open_window)
             for c in combos for m in c}
    rtts = _ms(rtt, "--rtt")
    if len(rtts) != 1:
        raise ScenarioError(None, "--rtt", "give one RTT")
    a = PairArgs(tuple(combos), _margins(margins), rtts[0], seconds, repeat, _capacity(capacity),
                 open_window, seed, paths, _buffer(buffer))
    key = a.key({n: file_digest(p) for n, p in sorted(paths.items())})
    res = _go(run_pair, a, "profile-pair", key, out_dir)
    r = res.results
    t = Table(title=f"lateness (s) of each flow against the margin ({res.status})")
    for col in ("pair", "m", "flow", "runs", "failed", "lateness", "95 % ±", "max"):
        t.add_column(col)
    for p in r.points:
        for f in p.flows:
            t.add_row(p.combo, f"{p.margin * 100:g} %", f"{f.flow} ({f.mechanism})",
                      str(f.lateness.n), str(f.lateness.n_failed), fixed(f.lateness.mean, 3),
                      fixed(f.lateness.ci95, 3), fixed(f.lateness.max, 3))
    th = Table(title="margin needed")
    for col in ("pair", "flow", "lateness below", "from margin"):
        th.add_column(col)
    for x in r.thresholds:
        th.add_row(x.combo, f"{x.flow} ({x.mechanism})", f"{x.limit_s:g} s", _margin_cell(x.margin))
    _done(res, t, th)


@profile_study_app.command("transition")
def transition(
        mechanisms: str = typer.Option("nocc-pacing,reno-application,udt", "--mechanisms",
                                       help="Mechanisms, comma-separated."),
        rtt: str = typer.Option("10ms,100ms", "--rtt", help="RTTs, comma-separated."),
        low: str = typer.Option("10Mbit", "--low", help="The low rate every step starts from."),
        heights: str = typer.Option("100Mbit,200Mbit,400Mbit,600Mbit,800Mbit", "--heights",
                                    help="The high rates, comma-separated."),
        hold: float = typer.Option(4.0, "--hold", min=0.5, max=600.0, help="Seconds at each high rate."),
        low_hold: float = typer.Option(3.0, "--low-hold", min=0.5, max=600.0,
                                       help="Seconds at the low rate before each step."),
        repeat: int = typer.Option(3, "--repeat", min=1, max=100, help="Repetitions per cell."),
        capacity: str | None = CAPACITY,
        buffer: str | None = BUFFER,
        open_window: bool = OPEN_WINDOW,
        out_dir: Path | None = OUT_DIR,
        seed: int = SEED) -> None:
    """The cost of a low → high step in seconds of the high rate, against RTT and step
    height, for each mechanism (RR-6874 §6.2, figure 17): paced TCP without congestion
    control, UDT, and Reno held by an application cap. No model is needed: the inputs are
    asked as they are. The defaults (3 mechanisms × 2 RTTs × 3 repetitions of a 75 s
    timeline, one transfer per height) take about 25 minutes.
    """
    from itb.study.profile_transition import TransitionArgs, run_transition
    from itb.study.pursuit_setup import parse_mechanism

    cap = _capacity(capacity)
    a = TransitionArgs(tuple(parse_mechanism(m, "--mechanisms") for m in csv_option(mechanisms, "--mechanisms")),
                       _ms(rtt, "--rtt"), _rate(low, "--low", cap),
                       tuple(_rate(h, "--heights", cap) for h in csv_option(heights, "--heights")),
                       hold, low_hold, repeat, cap, open_window, seed, _buffer(buffer))
    res = _go(run_transition, a, "profile-transition", a.key(), out_dir)
    r = res.results
    t = Table(title=f"cost of a {a.low_bps / 1e6:g} Mbit/s → high step (ms) ({res.status})")
    for col in ("mechanism", "RTT (ms)", "high (Mbit/s)", "runs", "failed", "disturbed", "cost", "95 % ±",
                "max", "settled"):
        t.add_column(col)
    for p in r.points:
        c = p.cost

        def ms(x):
            return fixed(None if x is None else x * 1000, 1)

        t.add_row(p.mechanism, f"{p.rtt_ms:g}", f"{p.high_bps / 1e6:g}", str(c.n), str(p.failed),
                  str(p.disturbed), ms(c.mean),
                  ms(c.ci95), ms(c.max), ms(p.settled.mean))
    _done(res, t)


@profile_study_app.command("stage0")
def stage0(
        parts: str = typer.Option("cpu,files,streams", "--parts", help="Which: cpu, files, streams."),
        mechanisms: str = typer.Option("nocc-pacing,udt", "--mechanisms", help="cpu: the "
                                       "mechanisms, comma-separated."),
        inputs: str = typer.Option("100Mbit,300Mbit,500Mbit,700Mbit,900Mbit", "--inputs",
                                   help="cpu: the input rates."),
        rtt: str = typer.Option("0ms,100ms", "--rtt", help="cpu: the RTTs."),
        seconds: float = typer.Option(5.0, "--seconds", min=1.0, max=600.0, help="cpu: each "
                                      "transfer's length at its input."),
        volume: str = typer.Option("1GB", "--volume", help="files and streams: bytes per transfer."),
        streams: str = typer.Option("1,2,5,10", "--streams", help="streams: GridFTP's -p values."),
        stream_ccs: str = typer.Option("reno,nocc", "--stream-cc", help="streams: the congestion "
                                       "controls (nocc is paced at 90 % of C)."),
        files_rtt: str = typer.Option("20ms", "--files-rtt", help="files and streams: the RTT."),
        repeat: int = typer.Option(3, "--repeat", min=1, max=100, help="Repetitions per cell."),
        capacity: str | None = CAPACITY,
        open_window: bool = OPEN_WINDOW,
        out_dir: Path | None = OUT_DIR,
        seed: int = SEED) -> None:
    """The preliminary experiments (RR-6874 §4): the endpoints' CPU per input rate for TCP
    and UDT, GridFTP memory to memory against disk to memory and disk to disk, and the
    goodput with 1 to 10 parallel streams. Needs GridFTP for the files and streams parts
    (`make setup` installs it). The defaults take about 25 minutes.
    """
    from itb.scenario.algorithms import KNOWN_CCS
    from itb.scenario.units import parse_size
    from itb.study.profile_stage0 import Stage0Args, run_stage0
    from itb.study.pursuit_setup import parse_mechanism

    cap = _capacity(capacity)
    xs = _once(tuple(_rate(x, "--inputs", cap) for x in csv_option(inputs, "--inputs")), "--inputs",
               lambda v: f"{v / 1e6:g} Mbit/s")
    try:
        vol = parse_size(volume)
    except ValueError as e:
        raise ScenarioError(None, "--volume", str(e)) from None
    if vol <= 0:
        raise ScenarioError(None, "--volume", "give a volume above 0")
    try:
        ns = _once(tuple(int(x) for x in csv_option(streams, "--streams")), "--streams", str)
    except ValueError as e:
        raise ScenarioError(None, "--streams", f"{streams!r}: {e}") from None
    if any(not 1 <= n <= 64 for n in ns):
        raise ScenarioError(None, "--streams", "GridFTP's -p: 1 to 64 streams")
    ccs = _once(tuple(csv_option(stream_ccs, "--stream-cc")), "--stream-cc", str)
    bad = [c for c in ccs if c not in KNOWN_CCS]
    if bad:
        raise ScenarioError(None, "--stream-cc", f"{bad[0]!r}: give TCP congestion controls "
                                                 f"({', '.join(KNOWN_CCS)}); UDT has its own row")
    files_rtts = _ms(files_rtt, "--files-rtt")
    if len(files_rtts) != 1:
        raise ScenarioError(None, "--files-rtt", "give one RTT")
    a = Stage0Args(tuple(csv_option(parts, "--parts")),
                   tuple(parse_mechanism(m, "--mechanisms") for m in csv_option(mechanisms, "--mechanisms")),
                   xs, _ms(rtt, "--rtt"), seconds, vol, ns, ccs, files_rtts[0], repeat, cap,
                   open_window, seed)
    res = _go(run_stage0, a, "profile-stage0", a.key(), out_dir)
    r = res.results
    t = Table(title=f"stage 0 ({res.status})")
    for col in ("part", "what", "congestion control / mechanism", "runs", "result"):
        t.add_column(col)
    for p in r.cpu:
        failed = p.goodput_bps.n_failed
        t.add_row("cpu", f"{p.input_bps / 1e6:g} Mbit/s, RTT {p.rtt_ms:g} ms", p.mechanism,
                  str(p.send_cpu_pct.n), f"sender {fixed(p.send_cpu_pct.mean, 1)} %, receiver "
                                         f"{fixed(p.recv_cpu_pct.mean, 1)} % of a core"
                  + (f" ({failed} failed)" if failed else ""))
    for p in r.files + r.streams:
        g = p.goodput_bps.mean
        t.add_row(p.part, p.label, p.mechanism, str(p.goodput_bps.n),
                  f"{fixed(None if g is None else g / 1e6, 1)} Mbit/s"
                  + (f" ({p.goodput_bps.n_failed} failed)" if p.goodput_bps.n_failed else ""))
    _done(res, t)
