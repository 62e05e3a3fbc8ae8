"""The arguments of `itb study response-function`: the algorithms and loss rates per
algorithm; the path, the rates and the measured span (each algorithm's own when not
given: itb.cc.published)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from itb.errors import ScenarioError
from itb.scenario.units import parse_duration, parse_rate
from itb.study import options
from itb.study.args import Option, OutDir, Seed, StudyArgs


def finite_rate(text: str, flag: str) -> int:
    try:
        v = parse_rate(text)
    except ValueError as e:
        raise ScenarioError(None, flag, str(e)) from None
    if not v:
        raise ScenarioError(None, flag, "give a finite rate, e.g. 1Gbit")
    return v


def seconds(text: str, flag: str) -> float:
    try:
        v = parse_duration(text) / 1e6
    except ValueError as e:
        raise ScenarioError(None, flag, str(e)) from None
    if v <= 0:
        raise ScenarioError(None, flag, "must be above 0")
    return v


def rtt_ms(text: str, flag: str) -> float:
    return seconds(text, flag) * 1000


def measure_s(text: str, flag: str) -> float:
    v = seconds(text, flag)
    if v < 20:
        raise ScenarioError(None, flag, "at least 20s (a point measures 20 s at least)")
    return v


def window_range(text: str, flag: str) -> tuple[float, float]:
    try:
        span = tuple(float(x) for x in text.split(","))
    except ValueError:
        span = ()
    if len(span) != 2 or not 4 <= span[0] < span[1]:
        raise ScenarioError(
            None, flag, f"{text!r}: give two increasing window sizes in segments, e.g. 120,1000"
        )
    return span[0], span[1]


class ResponseArgs(StudyArgs):
    """None: each algorithm's own (itb.cc.published): its RTT, its rate cap, its window
    range, its measured span, and a bottleneck LINK_HEADROOM times its top planned rate."""

    ccs: Annotated[tuple[str, ...], Option("--cc", options.ccs)] = Field(
        "reno,highspeed,scalable,bic,htcp,cubic",
        validate_default=True,
        description="Algorithms, comma-separated (loss-based ones; vegas too).",
    )
    points: Annotated[int, Option("--points")] = Field(
        5, ge=3, le=20, description="Loss rates per algorithm."
    )
    rtt_ms: Annotated[float | None, Option("--rtt", rtt_ms)] = Field(
        None,
        description="RTT of the path, for every algorithm. [default: each algorithm's "
        "own: 20 ms; HighSpeed 100 ms, BIC 200 ms]",
    )
    rate_bps: Annotated[int | None, Option("--rate", finite_rate)] = Field(  # the bottleneck
        None,
        description="Bottleneck C: far above the flows, so the loss sets the rate. "
        "[default: 1.25x the algorithm's top planned rate, at least 1Gbit]",
    )
    max_rate_bps: Annotated[int | None, Option("--max-rate", finite_rate)] = Field(
        None,
        description="Highest rate the plan aims at (caps the window range). [default: "
        "250Mbit; HighSpeed 500Mbit, BIC 1Gbit]",
    )  # (the CPU of one emulated path)
    max_measure_s: Annotated[float | None, Option("--max-measure", measure_s)] = Field(
        None,
        description="Longest measured span of a point (it aims at 40 mean loss "
        "intervals). [default: 60s; HighSpeed 180s, BIC 300s]",
    )
    windows: Annotated[tuple[float, float] | None, Option("--windows", window_range)] = Field(
        None,
        description="Window range LO,HI in segments the loss rates aim at, for every "
        "algorithm. [default: each algorithm's own]",
    )
    repeat: Annotated[int, Option("--repeat")] = Field(
        1, ge=1, le=20, description="Repetitions per point."
    )
    out_dir: OutDir = Field(
        None,
        description="Study directory (default: runs/response-function-<hash of the arguments>).",
    )
    seed: Seed = Field(
        1,
        description="Seed of the run order and of the loss draws (the i-th "
        "point of each algorithm: seed + i).",
    )
    interval_ms: float = 5.0  # tcp_info sampling: several samples per RTT (no option)
