"""`itb profile predict` (`itb profile calibrate` is a study: itb.study.profile_calibration,
its command made by itb.cli.studies, which is imported first so that it is listed first)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from itb.cli import studies  # noqa: F401  (registers `itb profile calibrate` before `predict`)
from itb.cli.common import err, out, profile_app
from itb.cli.output import JSON, print_json
from itb.scenario.options import csv_option


@profile_app.command("predict")
def profile_predict(
    profile: str = typer.Argument(
        ...,
        help="Wanted throughput profile: DATE:RATE steps, "
        "e.g. 0:100Mbit,10s:600Mbit (a bare date is seconds).",
    ),
    volume: str = typer.Option(..., "--volume", help="Bytes to send, e.g. 3GB."),
    rtt: str = typer.Option(..., "--rtt", help="RTT of the path, e.g. 12ms."),
    model: Path | None = typer.Option(
        None, "--model", help="Model file. [default: runs/profile-model-<cc>-<enforce>.json]"
    ),
    cc: str = typer.Option(
        "nocc", "--cc", help="Mechanism's congestion control (picks the model)."
    ),
    enforce: str = typer.Option(
        "pacing", "--enforce", help="Mechanism's enforcement (picks the model)."
    ),
    as_json: bool = JSON,
) -> None:
    """The input profile that gives a wanted throughput profile, and when a volume sent
    along it completes (the calibrated model inverted: RR-6874 eq. 3 and 6)."""
    from itb import files
    from itb.errors import ScenarioError
    from itb.scenario.experiment import profile as profiles
    from itb.scenario.units import UnitError, parse_size
    from itb.study.options import durations_ms

    if model is not None:  # a file given is checked before the analysis is imported
        files.check(model, "model", "--model")
    from itb.analysis.profile_model import Model
    from itb.study.pursuit import Mechanism

    try:
        steps = profiles.parse_steps(
            [x.split(":", 1) if ":" in x else [x, ""] for x in csv_option(profile, "PROFILE")]
        )
        vol = parse_size(volume)
    except UnitError as e:
        raise ScenarioError(None, "PROFILE" if "step" in str(e) else "--volume", str(e)) from None
    rtt_ms = durations_ms(rtt, "--rtt")[0]
    path = model or Mechanism(cc, enforce).model_path()
    if not path.exists():
        raise ScenarioError(
            None,
            "--model",
            f"{path} does not exist: run `itb profile calibrate "
            f"--cc {cc} --enforce {enforce}` first",
        )
    m = Model.load(path)
    asked = m.input_profile(steps, rtt_ms)
    lo, hi = min(p.rtt_ms for p in m.per_rtt), max(p.rtt_ms for p in m.per_rtt)
    if not lo <= rtt_ms <= hi:
        err.print(f"RTT {rtt_ms:g} ms is outside the calibrated {lo:g}–{hi:g} ms: extrapolated")
    completion_s = m.completion_s(steps, vol, rtt_ms)
    if as_json:
        rows = [
            {
                "from_s": at / 1e6,
                "wanted_throughput_bps": want,
                "input_bps": x,
                "expected_goodput_bps": m.goodput_for_throughput(want, rtt_ms),
            }
            for (at, want), (_at, x) in zip(steps, asked)
        ]
        scenario = [[at / 1e6, f"{x / 1e6:.3f}Mbit"] for at, x in asked]
        doc = {"mechanism": m.mechanism, "model": path, "rtt_ms": rtt_ms, "steps": rows}
        doc |= {"extrapolated": not lo <= rtt_ms <= hi, "scenario_profile": scenario}
        print_json(doc | {"volume_bytes": vol, "completion_s": completion_s})
        return
    t = Table(title=f"{m.mechanism} at RTT {rtt_ms:g} ms ({path})")
    for col in ("from (s)", "wanted throughput", "input to ask", "expected goodput"):
        t.add_column(col)

    def mbit(bps: float) -> str:
        return f"{bps / 1e6:.2f} Mbit/s"

    for (at, want), (_at, x) in zip(steps, asked):
        t.add_row(
            f"{at / 1e6:g}", mbit(want), mbit(x), mbit(m.goodput_for_throughput(want, rtt_ms))
        )
    out.print(t)
    line = ", ".join(f'[{at / 1e6:g}, "{x / 1e6:.3f}Mbit"]' for at, x in asked)
    out.print(f"as a scenario's profile: profile = [{line}]", soft_wrap=True)
    out.print(f"predicted completion of {volume}: {completion_s:.3f} s")
