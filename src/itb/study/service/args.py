"""The arguments of `itb study service`: the workloads, the policies, the congestion
controls TS1 runs with, the access link, the margin and the repetitions."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from itb.study import options
from itb.study.args import KEY_IF_SET, Option, OutDir, Seed, StudyArgs
from itb.study.bulk import STUDY_DIR

WORKLOADS = ("paper", "random")
POLICIES = ("ITB", "TS2", "EDF", "ALAP", "TS1")
# how a planned policy's transfers keep their plans: a congestion control and an
# enforcement (docs/profile.md's mechanisms that can pause: UDT's controller and a
# command's pacer cannot); tbf keeps one rate, so only plans of one segment (TS2's)
MECHANISMS = ("nocc-pacing",) + tuple(
    f"{cc}-{how}" for cc in ("bic", "reno", "cubic") for how in ("pacing", "application", "tbf")
)


class ServiceArgs(StudyArgs):
    workloads: Annotated[
        tuple[str, ...], Option("--workloads", options.choices(WORKLOADS, "workload"))
    ] = Field(
        "paper,random",
        validate_default=True,
        description="paper: eWAN's §V example made feasible (--paper-volume × 2, window "
        "--window); random: --requests seeded requests at offered load --load over --horizon.",
    )
    policies: Annotated[
        tuple[str, ...], Option("--policies", options.choices(POLICIES, "policy"))
    ] = Field(
        "ITB,TS1",
        validate_default=True,
        description="Planned policies (ITB's exact planner, TS2, EDF, ALAP) run their plans "
        "with TCP without congestion control, paced; TS1 starts every request at its release "
        "with each --cc.",
    )
    mechanisms: Annotated[
        tuple[str, ...] | None,
        Option("--mechanisms", options.choices(MECHANISMS, "mechanism")),
        KEY_IF_SET,
    ] = Field(
        None,
        description="How planned transfers keep their plans, a cell each: nocc-pacing (TCP "
        "without congestion control, paced m/(1-m) above the plan, the writes keeping it); "
        "CC-pacing (bic, reno, cubic: the same pacing, the congestion control can hold it "
        "back); CC-application (the writes' cap only); CC-tbf (a token bucket on the source "
        "host at the plan's rate: one-rate plans, TS2's). [default: nocc-pacing]",
    )
    ccs: Annotated[tuple[str, ...], Option("--cc", options.ccs)] = Field(
        "cubic,reno", validate_default=True, description="TS1's congestion controls."
    )
    capacity_bps: Annotated[int, Option("--capacity", options.rate)] = Field(
        "1Gbit", validate_default=True, description="The access link's rate (the bottleneck)."
    )
    rtt_ms: Annotated[float, Option("--rtt", options.rtt_ms)] = Field(
        "100ms", validate_default=True, description="The path's RTT (the paper's 100 ms)."
    )
    margin: Annotated[float, Option("--margin")] = Field(
        0.025, ge=0.0, le=0.5, description="m: plans use at most B_in · (1 − m)."
    )
    guard_rtts: Annotated[float, Option("--guard-rtts")] = Field(
        4.0,
        ge=0.0,
        le=100.0,
        description="Planned deadlines are this many RTTs early: the connection's set-up (1 "
        "RTT) and the last bytes' delivery after the profile (1.5 RTT measured), with room.",
    )
    paper_volume: Annotated[int, Option("--paper-volume", options.volume)] = Field(
        "3.4GB", validate_default=True, description="Each of the paper example's two volumes."
    )
    window_s: Annotated[float, Option("--window")] = Field(
        60.0, ge=1.0, le=3600.0, description="The paper example's window [0, dt], seconds."
    )
    requests: Annotated[int, Option("--requests")] = Field(
        20, ge=2, le=500, description="Requests of the random workload."
    )
    load: Annotated[float, Option("--load")] = Field(
        0.9, ge=0.1, le=3.0, description="The random workload's offered load (Σ vol / (C · H))."
    )
    horizon_s: Annotated[float, Option("--horizon")] = Field(
        40.0, ge=5.0, le=3600.0, description="The random workload's horizon H, seconds."
    )
    workload_seed: Annotated[int, Option("--workload-seed")] = Field(
        1, ge=0, description="The random workload's seed."
    )
    hosts: Annotated[int, Option("--hosts")] = Field(
        2,
        ge=1,
        le=8,
        description="Source hosts behind the access link; requests take them in turn.",
    )
    repeat: Annotated[int, Option("--repeat")] = Field(
        10, ge=1, le=100, description="Repetitions per cell."
    )
    out_dir: OutDir = Field(None, description=STUDY_DIR)
    seed: Seed = Field(1, description="Seed of the run order.")
