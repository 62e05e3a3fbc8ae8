"""`itb profile calibrate|predict`."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from itb.cli.common import err, num, out, profile_app, ticker
from itb.scenario.options import csv_option, parse_capacity


def _rates(text: str, option: str) -> tuple[int, ...]:
    from itb.errors import ScenarioError
    from itb.scenario.units import parse_rate

    try:
        rates = tuple(parse_rate(x, lo=1_000, hi=100_000_000_000) for x in csv_option(text, option))
    except ValueError as e:
        raise ScenarioError(None, option, str(e)) from None
    if any(r is None for r in rates):
        raise ScenarioError(None, option, "give finite rates, e.g. 100Mbit,200Mbit")
    return rates


def _durations_ms(text: str, option: str) -> tuple[float, ...]:
    from itb.errors import ScenarioError
    from itb.scenario.units import parse_duration

    try:
        return tuple(parse_duration(x) / 1000 for x in csv_option(text, option))
    except ValueError as e:
        raise ScenarioError(None, option, str(e)) from None


@profile_app.command("calibrate")
def profile_calibrate(
        cc: str = typer.Option("nocc", "--cc", help="Congestion control of the transfers "
                               "(nocc: TCP without congestion control), or udt: the UDT "
                               "endpoint with its rate controller."),
        enforce: str = typer.Option("pacing", "--enforce", help="How the rate is kept: pacing "
                                    "(SO_MAX_PACING_RATE) or application (the sender's writes)."),
        rtt: str = typer.Option("0ms,10ms,100ms", "--rtt", help="RTTs swept, comma-separated."),
        inputs: str | None = typer.Option(None, "--inputs", help="Input rates X, e.g. "
                                             "100Mbit,200Mbit. [default: 5 %, 15 %, … 95 % of C]"),
        seconds: float = typer.Option(8.0, "--seconds", min=1.0, max=600.0, help="Each "
                                      "transfer's length at its input (sets its volume)."),
        linear_max: float = typer.Option(0.9, "--linear-max", min=0.05, max=1.0, help="Fit "
                                         "over the inputs up to this share of C (the linear part)."),
        capacity: str | None = typer.Option(None, "--capacity", help="Bottleneck C, e.g. "
                                               "1Gbit. [default: from the calibration]"),
        repeat: int = typer.Option(1, "--repeat", min=1, max=100, help="Repetitions per RTT."),
        out_dir: Path | None = typer.Option(None, "--out", help="Study directory (default: "
                                               "runs/profile-calibration-HASH; the same command resumes)."),
        seed: int = typer.Option(1, "--seed", min=0, help="Seed of the run order."),
        open_window: bool = typer.Option(True, "--open-window/--no-open-window", help="Receivers "
                                         "advertise their whole buffer from the first ACK (the "
                                         "document's patched receiver; testbed option "
                                         "open_receive_window), or grow it as Linux does.")) -> None:
    """Measure what a pursuit mechanism delivers for each input rate and RTT, and fit the
    model that predicts it.

    Per RTT, one transfer per input rate, one after another, each a constant profile;
    goodput (volume / time) and the bottleneck's mean and largest 1 ms throughput; then
    goodput = a_g·X + b_g and throughput = a_t·X + b_t per RTT, each coefficient linear in
    RTT (INRIA RR-6874 §5). The defaults (3 RTTs × 10 inputs × 8 s) take about 20 min.
    The model goes to runs/profile-model-<cc>-<enforce>.json (runs/profile-model-udt.json
    for UDT) for `itb profile predict`.
    """
    from itb.bench.scaling import make_scale
    from itb.bench.sweep import default_dir
    from itb.errors import ScenarioError
    from itb.study.profile_calibration import CalArgs, run_calibration
    from itb.study.pursuit_setup import Mechanism

    if cc == "udt" and enforce != "pacing":
        raise ScenarioError(None, "--enforce", "UDT keeps its rate by its own controller")
    if enforce not in ("pacing", "application"):
        raise ScenarioError(None, "--enforce", f"{enforce!r}: give pacing or application")
    cap = make_scale(factor=None, capacity_bps=parse_capacity(capacity), transfer_time_s=1.0).capacity_bps
    xs = _rates(inputs, "--inputs") if inputs else tuple(round(cap * (0.05 + 0.1 * k)) for k in range(10))
    a = CalArgs(cc, enforce, _durations_ms(rtt, "--rtt"), xs, seconds, cap, linear_max, repeat, seed,
                open_window)
    target = out_dir or default_dir("profile-calibration", a.key())
    err.print(f"study directory: {target}")
    tick = ticker()
    res = run_calibration(a, target, say=lambda m: err.print(m, highlight=False), tick=tick)
    tick("")
    r = res.results
    t = Table(title=f"{r.mechanism}: goodput = a_g·X + b_g, throughput = a_t·X + b_t ({res.status})")
    for col in ("RTT (ms)", "a_g", "b_g (Mbit/s)", "r", "a_t", "b_t (Mbit/s)", "r", "samples"):
        t.add_column(col)
    for p in (r.model.per_rtt if r.model else []):
        t.add_row(f"{p.rtt_ms:g}", num(p.goodput.a), num(p.goodput.b / 1e6), num(p.goodput.r),
                  num(p.throughput.a), num(p.throughput.b / 1e6), num(p.throughput.r),
                  str(p.goodput.n))
    out.print(t)
    if r.failed or r.overlapped:
        err.print(f"{r.failed} transfer(s) failed, {r.overlapped} overlapped the next (left out)")
    if r.model is not None and res.status == "complete":
        path = Mechanism(cc, enforce).model_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        r.model.save(path)
        out.print(f"model: {path}")
    out.print(f"results: {res.out / 'results.json'}")
    out.print(f"report: {res.report}")
    if res.status != "complete":
        err.print("interrupted: run the same command again to resume")
        raise typer.Exit(res.exit_code() if res.signal is not None else 130)


@profile_app.command("predict")
def profile_predict(
        profile: str = typer.Argument(..., help="Wanted throughput profile: DATE:RATE steps, "
                                      "e.g. 0:100Mbit,10s:600Mbit (a bare date is seconds)."),
        volume: str = typer.Option(..., "--volume", help="Bytes to send, e.g. 3GB."),
        rtt: str = typer.Option(..., "--rtt", help="RTT of the path, e.g. 12ms."),
        model: Path | None = typer.Option(None, "--model", help="Model file. [default: "
                                             "runs/profile-model-<cc>-<enforce>.json]"),
        cc: str = typer.Option("nocc", "--cc", help="Mechanism's congestion control (picks the model)."),
        enforce: str = typer.Option("pacing", "--enforce", help="Mechanism's enforcement (picks the model).")
) -> None:
    """The input profile that gives a wanted throughput profile, and when a volume sent
    along it completes (the calibrated model inverted: RR-6874 eq. 3 and 6)."""
    from itb import files
    from itb.errors import ScenarioError
    from itb.scenario import profile as profiles
    from itb.scenario.units import UnitError, parse_size

    if model is not None:  # a file given is checked before the analysis is imported
        files.check(model, "model", "--model")
    from itb.analysis.profile_model import Model
    from itb.study.pursuit_setup import Mechanism

    try:
        steps = profiles.parse_steps([x.split(":", 1) if ":" in x else [x, ""]
                                      for x in csv_option(profile, "PROFILE")])
        vol = parse_size(volume)
    except UnitError as e:
        raise ScenarioError(None, "PROFILE" if "step" in str(e) else "--volume", str(e)) from None
    rtt_ms = _durations_ms(rtt, "--rtt")[0]
    path = model or Mechanism(cc, enforce).model_path()
    if not path.exists():
        raise ScenarioError(None, "--model", f"{path} does not exist: run `itb profile calibrate "
                                             f"--cc {cc} --enforce {enforce}` first")
    m = Model.load(path)
    t = Table(title=f"{m.mechanism} at RTT {rtt_ms:g} ms ({path})")
    for col in ("from (s)", "wanted throughput", "input to ask", "expected goodput"):
        t.add_column(col)

    def mbit(bps: float) -> str:
        return f"{bps / 1e6:.2f} Mbit/s"

    asked = m.input_profile(steps, rtt_ms)
    for (at, want), (_at, x) in zip(steps, asked):
        t.add_row(f"{at / 1e6:g}", mbit(want), mbit(x), mbit(m.goodput_for_throughput(want, rtt_ms)))
    out.print(t)
    lo, hi = min(p.rtt_ms for p in m.per_rtt), max(p.rtt_ms for p in m.per_rtt)
    if not lo <= rtt_ms <= hi:
        err.print(f"RTT {rtt_ms:g} ms is outside the calibrated {lo:g}–{hi:g} ms: extrapolated")
    line = ", ".join(f"[{at / 1e6:g}, \"{x / 1e6:.3f}Mbit\"]" for at, x in asked)
    out.print(f"as a scenario's profile: profile = [{line}]", soft_wrap=True)
    out.print(f"predicted completion of {volume}: {m.completion_s(steps, vol, rtt_ms):.3f} s")
