"""What every application's scenario is made of: the cell (application × class ×
protocol), what a generator returns (`Generated`), the bundling of sources into
transfers, the testbed and experiment tables, the sources' transfers and their
description, and the fluid model's times a run's duration is drawn from."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from itb.errors import ScenarioError
from itb.scenario.testbed.schema import MAX_PAIRS as SCHEMA_MAX_PAIRS
from itb.scenario.units import format_duration, format_rate, parse_buffer
from itb.suite import windows
from itb.suite.classes import ItbClass
from itb.suite.scaling import ClassScale

MAX_SINGLE = 32  # sources per direction that get a transfer each
MAX_STREAMS = 64  # streams in one bundle (the timeline's limit)
MAX_PAIRS = 8  # host pairs of the generated dumbbell
SIM_MAX_PAIRS = SCHEMA_MAX_PAIRS  # in a simulation: a scenario's most
MIN_QUEUE_BYTES = 64 * 1514  # a queue in bytes holds at least 64 full frames


@dataclass(frozen=True)
class Cell:
    """One point of a benchmark: application (and variant) × class × protocol."""

    app: str
    cls: ItbClass
    cc: str
    variant: str | None = None  # TU: "default" or "tuned" host buffers

    @property
    def name(self) -> str:
        v = f"-{self.variant}" if self.variant else ""
        return f"{self.app}{v}-{self.cls.name}-{self.cc}"


@dataclass
class Generated:
    doc: dict  # the scenario file's tables
    realisation: dict = field(default_factory=dict)
    window: windows.FlowWindow | None = None  # a source's window (None: one of C_a at C_g)


def bundles(n_sources: int, streams_per_source: int = 1, *, simulated: bool = False) -> list[int]:
    """Sources per transfer: one each up to MAX_SINGLE sources (simulated: always), else
    as even bundles of at most MAX_STREAMS streams (`streams_per_source` each)."""
    if n_sources <= MAX_SINGLE or simulated:
        return [1] * n_sources
    per = max(1, MAX_STREAMS // streams_per_source)
    n = max(MAX_SINGLE // 2, math.ceil(n_sources / per))
    base, extra = divmod(n_sources, n)
    return [base + (i < extra) for i in range(n)]


UDT = "udt"  # a cell's protocol when it runs UDT (UDT4's congestion control) instead of TCP


def on_protocol(t: dict, cc: str) -> dict:
    """A generated transfer `t` on the cell's protocol: TCP with `cc`, or, for "udt", a
    UDT transfer with UDT4's own congestion control, its `rate` the cap (one stream)."""
    t["cc"] = cc
    if cc == UDT:
        if t.get("streams", 1) != 1:
            raise ScenarioError(
                None,
                "--cc",
                f"udt: transfer {t['id']} bundles {t['streams']} streams, and a UDT transfer "
                f"is one stream (classes of more than {MAX_SINGLE} sources a direction, "
                "or --streams above 1, cannot run UDT)",
            )
        t.pop("streams", None)
        t["protocol"] = UDT
    return t


def rate(bps: float) -> str:
    """A rate as a scenario file writes it (at least 1 bit/s)."""
    return format_rate(max(1, int(round(bps))))


def secs(s: float) -> str:
    """Seconds as a scenario file writes a duration (to the microsecond)."""
    return format_duration(int(round(s * 1e6)))


def testbed(
    cell: Cell,
    cs: ClassScale,
    pairs: int,
    *,
    rtt_ms: float | None = None,
    buffer: str | None = None,
    extra: dict | None = None,
) -> dict:
    """The testbed's tables: a dumbbell of `pairs` host pairs whose bottleneck is the
    class's scaled C with its queue (`buffer`, default the scale's: `cs.buffer`;
    `extra`: further tables, e.g. the pairs' RTTs)."""
    doc = {
        "testbed": {
            "name": f"itb-{cell.name}".replace("_", "-")[:64],
            "topology": "dumbbell",
            "description": f"ITB {cell.app} class {cell.cls.name} ({cell.cls.meaning}), "
            f"scaled by {cs.factor:g} ({cs.mode} scaling)",
        },
        "dumbbell": {"pairs": pairs},
        "bottleneck": {
            "rate": rate(cs.capacity_bps),
            "rtt": secs((cs.rtt_ms if rtt_ms is None else rtt_ms) / 1000),
            "buffer": cs.buffer if buffer is None else buffer,
        },
    }
    doc.update(extra or {})
    return doc


def queue_for(cs: ClassScale, rtt_ms: float, floor_bytes: int) -> str:
    """The bottleneck's queue for paths whose RTTs the bottleneck's own (shorter) RTT does
    not hold: the scale's buffer rule as bytes of C × `rtt_ms`, at least `floor_bytes`;
    a size given with --buffer as it is."""
    spec = parse_buffer(cs.buffer)
    if spec.kind != "bdp":
        return cs.buffer
    return f"{max(int(cs.capacity_bps / 8 * rtt_ms / 1000 * spec.amount), floor_bytes)}B"


def rtt_mix(cs: ClassScale, pairs: int, seed: int) -> dict:
    """`testbed` arguments for an RTT mix (--rtt with several modes): the bottleneck has
    the shortest mode, every host pair one mode in equal proportions (RR-6244 §4.5.3: one
    mode per pair of sites), the queue the buffer rule at the modes' mean."""
    modes = cs.rtt_modes_ms
    return {
        "rtt_ms": min(modes),
        "buffer": queue_for(cs, sum(modes) / len(modes), MIN_QUEUE_BYTES),
        "extra": {
            "pair_rtt": {
                "distribution": "multimodal",
                "modes": [secs(m / 1000) for m in modes],
                "seed": seed,
            }
        },
    }


def experiment(cell: Cell, duration_s: float) -> dict:
    """The `[experiment]` table: named after the cell, sampled every 100 ms."""
    return {
        "name": f"itb-{cell.name}",
        "duration": secs(math.ceil(duration_s)),
        "interval": "100ms",
    }


def sources(
    ident: str,
    sizes: list[int],
    pairs: int,
    reverse: bool,
    cs: ClassScale,
    per_source_bytes: int,
    cc: str,
    at_s: float,
    spacing_s: float,
    *,
    wait: bool = True,
    direction: str | None = None,
    first_pair: int = 1,
    streams_per_source: int = 1,
    share: float = 1.0,
) -> list[dict]:
    """One [[transfer]] per bundle of `sizes[k]` sources, round-robin over `pairs` host
    pairs from `first_pair`, `spacing_s` apart; a source is `streams_per_source` parallel
    streams sharing its C_a (RR-6244's N_s), paced at `share` of C_a (below 1 only where
    a class at K = 1 offers less than whole sources: ItbClass.forward_share)."""
    out = []
    for k, n in enumerate(sizes):
        p = k % pairs + first_pair
        src, dst = (f"r{p}", f"l{p}") if reverse else (f"l{p}", f"r{p}")
        t = {
            "id": f"{ident}.{k + 1}",
            "src": src,
            "dst": dst,
            "at": secs(at_s + k * spacing_s),
            "volume": f"{per_source_bytes * n}B",
            "streams": n * streams_per_source,
            "rate": rate(cs.access_bps * share * n),
        }
        on_protocol(t, cc)
        if not wait:
            t["wait"] = False
        if direction:
            t["direction"] = direction
        out.append(t)
    return out


def describe(
    what: str,
    n: int,
    sizes: list[int],
    cs: ClassScale,
    pairs: int,
    streams_per_source: int = 1,
    share: float = 1.0,
) -> str:
    """How `n` sources of one direction were realised, in words (for the realisation)."""
    if not n:
        return f"no {what} sources"
    lo, hi = min(sizes), max(sizes)
    how = (
        f"{len(sizes)} transfers of one source"
        if hi == 1
        else f"{len(sizes)} transfers (virtual sources) of {lo if lo == hi else f'{lo}–{hi}'} sources"
    )
    at = (
        f"C_a = {rate(cs.access_bps)}/s"
        if share == 1.0
        else f"{share:.3g} × C_a = {rate(cs.access_bps * share)}/s"
    )
    each = (
        f"each a stream paced at {at}"
        if streams_per_source == 1
        else f"each {streams_per_source} parallel streams sharing {at}"
    )
    return f"{n} {what} sources as {how}, {each}, over {min(pairs, len(sizes))} host pairs"


def for_whole_run(cs: ClassScale, duration_s: float) -> int:
    """Bytes of an adverse source: more than it can send at C_a before the run ends."""
    return int(cs.access_bps / 8 * duration_s)


def fair_time_s(volume: int, cs: ClassScale, c_g: float, share: float = 1.0) -> float:
    """A source's completion time in the fluid model: its rate is min(share · C_a, C/M),
    i.e. share · C_a / max(1, C_g) with M = C_g · K / share sources and C = K · C_a."""
    return volume * 8 / (cs.access_bps * share / max(1.0, c_g))


def duration(measured_s: float, start_span_s: float, rtt_ms: float) -> float:
    """Generous: three times the fluid estimate, so only a hung run reaches the end."""
    return max(60.0, 3 * (start_span_s + measured_s) + 40 * rtt_ms / 1000 + 30)
