"""The arguments of `itb bench` as a study's: the options given (each a field, parsed from
its text) and, once checked, the benchmark they make (`BenchArgs`: the classes scaled to
this testbed, the design of its repetitions) on the backend chosen.

`--quick` gives the options not given its own values (`QUICK`); an option given wins. So
that the quick value is told from an option left out, those options default to None and
are filled in before the fields are checked. The key is the benchmark's (BenchArgs.key,
with the scale as calibrated): the same command resumes the same directory as before
`itb bench` was a study."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import Field, PrivateAttr, model_validator

from itb.errors import ScenarioError
from itb.study.args import Option, OutDir, StudyArgs

if TYPE_CHECKING:
    from itb.suite.background import Background
    from itb.suite.benchmark import BenchArgs
    from itb.suite.classes import ItbClass

T = TypeVar("T")

# What an option left out is (absent from QUICK: the same with --quick)
DEFAULTS: dict[str, Any] = {
    "apps": "BU,PA",
    "classes": "A-L",
    "ccs": "cubic,reno,bbr",
    "transfer_time": 240.0,
    "spacing": 1.0,
    "pa_messages": 200,
}

QUICK: dict[str, Any] = {
    "apps": "BU,PA",
    "classes": "B,F",
    "ccs": "cubic,reno,bbr",
    # the sequence of every `itb bench` (looks at 3, 5, 7, 10), as far as 10 minutes of
    # runs on 2 cores take it: its last look spends what is left of α (docs/benchmark.md)
    "max_repeat": 10,
    "budget_s": "10min",  # with set-up and calibration, under 15 min
    "transfer_time": 2.0,
    "spacing": 0.25,  # PA's load up within 1.5 s (not 4.3)
    "pa_messages": 8,  # 8 × (1 MB + 2 MB back)
}

MAX_REPEAT = 10  # a sequence's most repetitions per cell, by default


def parse_budget(text: str, flag: str = "--budget") -> float:
    """--budget: a duration with its unit, s, min or h (e.g. 20min) → seconds."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|min|h)\s*", text)
    if m is None or float(m.group(1)) <= 0:
        raise ScenarioError(
            None, flag, f"{text!r}: give a positive duration with s, min or h (e.g. 20min)"
        )
    return float(m.group(1)) * {"s": 1, "min": 60, "h": 3600}[m.group(2)]


def _apps(text: str, flag: str) -> tuple[str, ...]:
    from itb.scenario.options import csv_option
    from itb.suite.apps.registry import check_app  # (numpy: when a benchmark is given)

    return tuple(check_app(a) for a in csv_option(text, flag, upper=True))


def _classes(text: str, flag: str) -> tuple[ItbClass, ...]:
    from itb.suite.classes import parse_classes

    return tuple(parse_classes(text, flag))


def _protocols(text: str, flag: str) -> tuple[str, ...]:
    from itb.scenario.options import parse_ccs

    return tuple(parse_ccs(text, udt=True))


def _one_protocol(text: str, flag: str) -> str:
    ccs = _protocols(text, flag)
    if len(ccs) != 1:
        raise ScenarioError(None, flag, f"one protocol, not {text!r}")
    return ccs[0]


def _capacity(text: str, flag: str) -> int | None:
    from itb.scenario.options import parse_capacity

    return parse_capacity(text)


def _rtt(text: str, flag: str) -> tuple[float, ...]:
    from itb.suite.axes import parse_rtt

    return parse_rtt(text)


def _access(text: str, flag: str) -> int | None:
    from itb.suite.axes import parse_access

    return parse_access(text)


def _background(text: str, flag: str) -> Background:
    from itb.suite.background import parse_background

    return parse_background(text)


def _given(value: T | None) -> T:
    """A field `_left_out` filled in: never None once the model is made."""
    assert value is not None
    return value


class BenchStudyArgs(StudyArgs):
    """What `itb bench` is given (module docstring)."""

    apps: Annotated[tuple[str, ...] | None, Option("--app", _apps)] = Field(
        None, description="Applications, comma-separated: TU, WM, PP, BU, PA. [default: BU,PA]"
    )
    classes: Annotated[tuple[Any, ...] | None, Option("--class", _classes)] = Field(
        None, description="Classes: letters and ranges, e.g. A-L, B,F, A-D,K. [default: A-L]"
    )
    ccs: Annotated[tuple[str, ...] | None, Option("--cc", _protocols)] = Field(
        None,
        description="Congestion controls, comma-separated; udt runs the cell's traffic over "
        "UDT (UDT4's own congestion control, each source capped at its C_a; BU, WM, PP; "
        "classes of up to 32 sources a direction). [default: cubic,reno,bbr]",
    )
    reference: Annotated[str | None, Option("--reference", _one_protocol)] = Field(
        None,
        description="The protocol every other one is compared with, fixed before the data. "
        "[default: the first of --cc]",
    )
    repeat: Annotated[int | None, Option("--repeat")] = Field(
        None,
        ge=1,
        le=100,
        description="Exactly this many repetitions of every cell (a fixed design) instead of "
        "repeating until each comparison is decided.",
    )
    max_repeat: Annotated[int | None, Option("--max-repeat")] = Field(
        None,
        ge=3,
        le=100,
        description="Repetitions until every comparison of an application × class is "
        "faster, slower or equivalent, at most this many per cell, looking at the data "
        "after 3, 5, 7, 10, 14, … (docs/benchmark.md). [default: 10]",
    )
    budget_s: Annotated[float | None, Option("--budget", parse_budget, "DURATION")] = Field(
        None,
        description="Stop repeating after this long (e.g. 20min, 2h, 900s) of this "
        "invocation; undecided comparisons then say the budget stopped them. [default: none]",
    )
    quick: Annotated[bool, Option("--quick")] = Field(
        False,
        description="A short benchmark: BU and PA on classes B and F, cubic/reno/bbr, "
        "repeated until decided within 10 minutes of runs (--budget 10min), 2 s transfers "
        "started 0.25 s apart, 8 PA round trips (about 13 minutes on a 2-core machine, "
        "set-up included). Options given explicitly win.",
    )
    out_dir: OutDir = Field(
        None,
        description="Benchmark directory (default: runs/bench-<hash of the arguments>, so "
        "the same command resumes).",
    )
    scale: Annotated[float | None, Option("--scale")] = Field(
        None,
        description="One scale factor for every class: C = K × C_a ÷ factor (C_a: --access, "
        "1 Gbit/s). [default: from the calibration]",
    )
    capacity_bps: Annotated[int | None, Option("--capacity", _capacity)] = Field(
        None,
        description="Scale each class to this bottleneck C instead of the calibrated one, "
        "e.g. 500Mbit.",
    )
    scaling: Annotated[Literal["rate", "window"], Option("--scaling")] = Field(
        "rate",
        description="What scaling preserves: rate keeps every RTT (per-flow windows shrink "
        "by the factor); window multiplies every RTT by the factor (per-flow windows are "
        "the documents', round trips last longer).",
    )
    transfer_time: Annotated[float | None, Option("--transfer-time")] = Field(
        None,
        description="Seconds one BU transfer takes alone at C_a (the documents: 240 = 30 GB "
        "at 1 Gbit/s). [default: 240]",
    )
    spacing: Annotated[float | None, Option("--spacing")] = Field(
        None,
        ge=0,
        description="Start spacing of bulk transfers in seconds (0 = synchronised). "
        "[default: 1; --quick: 0.25]",
    )
    streams: Annotated[int, Option("--streams")] = Field(
        1,
        ge=1,
        le=10,
        description="N_s: parallel streams per BU forward source, sharing its C_a (RR-6244 "
        "Table 5: 1, 5 or 10).",
    )
    buffer: Annotated[str, Option("--buffer")] = Field(
        "bdp",
        description="The bottleneck's queue: bdp (one bandwidth-delay product), sqrtk (BDP/√K, "
        "the small buffer of links of high aggregation K: RR-6244 §4.4, Appenzeller et al. "
        "2004), or a size such as 2MB or 100pkt.",
    )
    k: Annotated[int, Option("--k")] = Field(
        10,
        description="K of the data-centre classes (B, D, F, H, J, L): 1 or 10 (RR-6244 Table "
        '3\'s "1 or 10"). At K = 1 a class runs round(C_g·K) sources, each paced at C_g·K/M '
        "of C_a (class B: one source at 0.8 C_a). The Internet classes keep K = 1000.",
    )
    rtt_modes_ms: Annotated[tuple[float, ...] | None, Option("--rtt", _rtt)] = Field(
        None,
        description="Every class's RTT instead of its own (RR-6244 Table 5: 1ms, 20ms, "
        "200ms), or a mix of modes, one per group of host pairs (BU only): 20ms,200ms or mix "
        "(1, 20 and 200 ms). [default: each class's]",
    )
    access_bps: Annotated[int | None, Option("--access", _access)] = Field(
        None,
        description="The documents' access rate C_a the classes are scaled from (RR-6244 "
        "Table 5: 100Mbit, 1Gbit, 10Gbit): C = K × C_a. On a testbed of fixed C it changes "
        "the scale factor (so a window: see --scaling window and --scale). [default: 1Gbit]",
    )
    background: Annotated[Any, Option("--background", _background)] = Field(
        None,
        description="Background traffic B on a host pair of its own, a share of C: cbr:20% "
        "(constant-rate UDP), poisson:20% (UDP, exponential gaps), exponential:20%, "
        "pareto:20%[:1.5] or weibull:20%[:0.5] (cubic TCP flows, Poisson arrivals, sizes "
        "of that law). [default: none]",
    )
    pa_messages: Annotated[int | None, Option("--pa-messages")] = Field(
        None,
        ge=1,
        le=10000,
        description="PA: round trips of 1 MB messages (the documents' 200; fewer for a short "
        "check). [default: 200]",
    )
    seed: Annotated[int, Option("--seed")] = Field(
        1, ge=0, description="Seed of the run order and of every random draw."
    )

    _bench: BenchArgs = PrivateAttr()

    @model_validator(mode="before")
    @classmethod
    def _left_out(cls, data: Any) -> Any:
        """The options left out: --quick's values, else their defaults (module docstring)."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        given = {k for k, v in data.items() if v is not None}
        if "repeat" in given and given & {"max_repeat", "budget_s"}:
            flag = "--max-repeat" if "max_repeat" in given else "--budget"
            raise ScenarioError(
                None,
                flag,
                "--repeat fixes the repetitions; --max-repeat and --budget end a sequence",
            )
        filled = DEFAULTS | (QUICK if data.get("quick") else {})
        for name, value in filled.items():
            if data.get(name) is None and not (name == "budget_s" and "repeat" in given):
                data[name] = value
        for name, text in (("background", "none"), ("rtt_modes_ms", "")):
            if data.get(name) is None:  # (none: the documents')
                data[name] = text
        return data

    @model_validator(mode="after")
    def _benchmark(self) -> BenchStudyArgs:
        """The benchmark these arguments make on their backend, checked now (its scale from
        the calibration: before anything is written)."""
        from itb.suite.benchmark import BenchArgs
        from itb.suite.scaling import make_scale

        sc = make_scale(
            factor=self.scale,
            capacity_bps=self.capacity_bps,
            transfer_time_s=_given(self.transfer_time),
            mode=self.scaling,
            buffer=self.buffer,
            access_bps=self.access_bps,
            # a simulator: the documents' C, not what this machine emulates
            simulated=self.backend.unbounded_rates,
        )
        self._bench = BenchArgs(
            _given(self.apps),
            _given(self.classes),
            _given(self.ccs),
            self.repeat or self.max_repeat or MAX_REPEAT,
            self.seed,
            _given(self.spacing),
            sc,
            _given(self.pa_messages),
            self.backend,
            self.reference,
            self.streams,
            self.k,
            _given(self.rtt_modes_ms),
            self.background,
            sequential=self.repeat is None,
            budget_s=self.budget_s,
        )
        return self

    @property
    def bench(self) -> BenchArgs:
        """The benchmark: what its sweep is made from."""
        return self._bench

    def key(self) -> dict:
        return self._bench.key()

    def protocols(self) -> tuple[str, ...]:
        return _given(self.ccs)
