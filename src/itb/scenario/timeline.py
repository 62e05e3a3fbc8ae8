"""The experiment part of a scenario file: repetitions, seed, and a timeline of events.

A scenario file is a testbed file plus `[experiment]` and arrays of events:
`[[transfer]]`, `[[pingpong]]`, `[[udp]]`, `[[tcp_background]]`, `[[set]]`,
`[[command]]`. Dates are relative to the start of a repetition. This module validates
what the user wrote (field paths in every error) and resolves it against the testbed
into frozen events with integer units (µs, bytes, bit/s); anything that would fail at
run time for a reason visible in the file (unknown host, date beyond the end, volume 0,
unknown congestion control) fails here, before anything runs.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Annotated, Literal, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from itb.scenario.algorithms import KNOWN_CCS  # whether usable here is a preflight question
from itb.errors import ScenarioError
from itb.scenario.model import Loss, Topology
from itb.scenario.schema import (
    LossField,
    OneWay,
    Rate,
    _choice,
    _strict_int,
    field_path,
    first_error,
)
from itb.scenario.units import UnitError, parse_duration, parse_rate, parse_size

MAX_STREAMS = 64
MAX_REPETITIONS = 1000
MAX_DURATION_US = 24 * 3600 * 1_000_000
MAX_BACKGROUND_FLOWS = 10_000
EVENT_ID = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}"


def _date(v: object) -> int:
    return parse_duration(v)  # negative dates are refused by the unit parser


def _positive_duration(v: object) -> int:
    us = parse_duration(v)
    if us <= 0:
        raise UnitError(f"must be longer than 0 (got {v!r})")
    return us


def _volume(v: object) -> int:
    n = parse_size(v)
    if n <= 0:
        raise UnitError(f"a volume must be larger than 0 (got {v!r})")
    return n


def _any_rate(v: object) -> int | None:
    """Rates of traffic (not links): 1 kbit/s to 100 Gbit/s, or unlimited."""
    return parse_rate(v, lo=1_000, hi=100_000_000_000)


def _cc(v: object) -> str:
    if not isinstance(v, str) or v not in KNOWN_CCS:
        raise UnitError(f"unknown congestion control {v!r}; known: {', '.join(KNOWN_CCS)}")
    return v


def _hosts(v: object) -> tuple[str, ...]:
    """One host name or a list of them (a group)."""
    names = [v] if isinstance(v, str) else v
    if not isinstance(names, (list, tuple)) or not names or not all(isinstance(n, str) for n in names):
        raise UnitError(f'expected a host name or a list of host names, got {v!r}')
    return tuple(names)


def _argv(v: object) -> tuple[str, ...]:
    if not isinstance(v, (list, tuple)) or not v or not all(isinstance(a, str) for a in v):
        raise UnitError(f'expected a list of strings such as ["iperf3", "-s", "-1"], got {v!r}')
    return tuple(v)


def _event_id(v: object) -> str:
    if not isinstance(v, str) or not re.fullmatch(EVENT_ID, v):
        raise UnitError(f"{v!r} is not a valid id: up to 32 letters, digits, '.', '_' or '-'")
    return v


Date = Annotated[int, BeforeValidator(_date)]
Span = Annotated[int, BeforeValidator(_positive_duration)]
Volume = Annotated[int, BeforeValidator(_volume)]
TrafficRate = Annotated[int | None, BeforeValidator(_any_rate)]
CC = Annotated[str, BeforeValidator(_cc)]
Hosts = Annotated[tuple[str, ...], BeforeValidator(_hosts)]
Argv = Annotated[tuple[str, ...], BeforeValidator(_argv)]
EventId = Annotated[str, BeforeValidator(_event_id)]
Direction = Annotated[str, BeforeValidator(_choice(("forward", "reverse", "background"), "direction"))]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExperimentSection(_Section):
    name: str | None = None
    repetitions: Annotated[int, _strict_int(1, MAX_REPETITIONS)] = 1
    seed: Annotated[int, _strict_int(0)] = 1
    duration: Span = 300_000_000  # end of the timeline: every event lies before it
    spacing: Date = 1_000_000  # default start spacing inside a group of transfers
    interval: Span = 100_000  # goodput and tcp_info sampling interval


class TransferSpec(_Section):
    """One transfer, or a group when src/dst are lists (zipped; a single name repeats)."""

    id: EventId | None = None
    src: Hosts
    dst: Hosts
    at: Date = 0
    spacing: Date | None = None  # between the starts of a group; default experiment.spacing
    volume: Volume
    cc: CC = "cubic"
    streams: Annotated[int, _strict_int(1, MAX_STREAMS)] = 1
    rate: TrafficRate = None
    direction: Direction | None = None  # default from the hosts' sides
    source_file: str | None = None  # read the bytes from this file on the source
    sink_file: str | None = None  # write them to this file on the destination
    wait: bool = True  # False: adverse traffic, stopped once the awaited events are done


class PingpongSpec(_Section):
    id: EventId | None = None
    src: str
    dst: str
    at: Date = 0
    count: Annotated[int, _strict_int(1, 1_000_000)] = 200
    size: Volume = 1_000_000
    cc: CC = "cubic"
    rate: TrafficRate = None  # pacing cap of each direction (a source's access capacity)
    direction: Direction | None = None


class UdpSpec(_Section):
    id: EventId | None = None
    src: str
    dst: str
    at: Date = 0
    rate: Annotated[int, BeforeValidator(lambda v: _require_rate(v))]
    duration: Span
    size: Annotated[int, BeforeValidator(lambda v: _datagram(v))] = 1472
    arrivals: Annotated[str, BeforeValidator(_choice(("cbr", "poisson"), "arrival process"))] = "cbr"


class SizeDistribution(_Section):
    distribution: Annotated[str, BeforeValidator(_choice(("exponential", "pareto", "weibull", "fixed"),
                                                         "size distribution"))]
    mean: Volume
    shape: float | None = None  # pareto alpha (> 1), weibull k (> 0)


class TcpBackgroundSpec(_Section):
    """Seeded flows: Poisson arrivals (mean gap), sizes drawn from a distribution."""

    id: EventId | None = None
    src: Hosts
    dst: Hosts
    at: Date = 0
    duration: Span
    mean_gap: Span
    sizes: SizeDistribution
    cc: CC = "cubic"


class SetSpec(_Section):
    id: EventId | None = None
    at: Date
    link: str
    direction: Annotated[str, BeforeValidator(_choice(("forward", "reverse", "both"), "direction"))] = "both"
    rate: Rate = Field(default=None)
    delay: OneWay | None = None
    loss: LossField | None = None


class CommandSpec(_Section):
    id: EventId | None = None
    host: str
    at: Date = 0
    argv: Argv
    check: bool = True  # a non-zero exit fails the repetition
    wait: bool = True  # the repetition waits for it (False: stopped at the end)


class ScenarioSections(_Section):
    """The experiment part of a scenario file (the testbed part is validated elsewhere)."""

    experiment: ExperimentSection = ExperimentSection()
    transfer: list[TransferSpec] = Field(default_factory=list)
    pingpong: list[PingpongSpec] = Field(default_factory=list)
    udp: list[UdpSpec] = Field(default_factory=list)
    tcp_background: list[TcpBackgroundSpec] = Field(default_factory=list)
    set: list[SetSpec] = Field(default_factory=list)
    command: list[CommandSpec] = Field(default_factory=list)


SECTIONS = tuple(ScenarioSections.model_fields)


def _require_rate(v: object) -> int:
    r = _any_rate(v)
    if r is None:
        raise UnitError("a UDP stream needs a finite rate")
    return r


def _datagram(v: object) -> int:
    n = parse_size(v) if isinstance(v, str) else v
    if isinstance(n, bool) or not isinstance(n, int) or not 16 <= n <= 65_000:
        raise UnitError(f"datagram size must be 16 to 65000 bytes (got {v!r})")
    return n


# --- resolved form -------------------------------------------------------------------


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Transfer(_Frozen):
    kind: Literal["transfer"] = "transfer"
    id: str
    at_us: int
    src: str
    dst: str
    volume: int
    cc: str
    streams: int
    rate_bps: int | None
    direction: Literal["forward", "reverse", "background"]
    source_file: str | None = None
    sink_file: str | None = None
    wait: bool = True


class Pingpong(_Frozen):
    kind: Literal["pingpong"] = "pingpong"
    id: str
    at_us: int
    src: str
    dst: str
    count: int
    size: int
    cc: str
    direction: Literal["forward", "reverse", "background"]
    rate_bps: int | None = None


class Udp(_Frozen):
    kind: Literal["udp"] = "udp"
    id: str
    at_us: int
    src: str
    dst: str
    rate_bps: int
    duration_us: int
    size: int
    arrivals: Literal["cbr", "poisson"]
    seed: int


class TcpBackground(_Frozen):
    kind: Literal["tcp_background"] = "tcp_background"
    id: str
    at_us: int
    src: tuple[str, ...]
    dst: tuple[str, ...]
    duration_us: int
    mean_gap_us: int
    distribution: str
    mean_bytes: int
    shape: float | None
    cc: str


class SetLink(_Frozen):
    kind: Literal["set"] = "set"
    id: str
    at_us: int
    link: str
    direction: Literal["forward", "reverse", "both"]
    rate_bps: int | None
    rate_given: bool
    delay_us: int | None
    loss: Loss | None


class Command(_Frozen):
    kind: Literal["command"] = "command"
    id: str
    at_us: int
    host: str
    argv: tuple[str, ...]
    check: bool
    wait: bool


Event = Annotated[Union[Transfer, Pingpong, Udp, TcpBackground, SetLink, Command],
                  Field(discriminator="kind")]


class Experiment(_Frozen):
    name: str
    repetitions: int
    seed: int
    duration_us: int
    interval_us: int
    events: tuple[Event, ...]

    def canonical_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))

    def content_hash(self) -> str:
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()

    def ccs(self) -> set[str]:
        return {e.cc for e in self.events if hasattr(e, "cc")}

    def pairs(self) -> list[tuple[str, str]]:
        """Every (source, destination) host pair that a transfer, ping-pong or UDP
        stream of the timeline uses (background groups are expanded per repetition)."""
        return sorted({(e.src, e.dst) for e in self.events
                       if isinstance(e, (Transfer, Pingpong, Udp))})


def validate_sections(data: dict, source: str | None) -> ScenarioSections:
    try:
        return ScenarioSections.model_validate(data)
    except ValidationError as e:
        loc, reason = first_error(e.errors()[0], root=ScenarioSections)
        raise ScenarioError(source, field_path(loc), reason) from None


def resolve(sections: ScenarioSections, topo: Topology, source: str | None) -> Experiment:
    """Check every event against the testbed and give each an id and absolute date."""
    exp = sections.experiment
    hosts = {n.name: n for n in topo.hosts()}
    links = {lk.name: lk for lk in topo.links}
    events: list = []
    ids: set[str] = set()

    def fail(field: str, reason: str):
        raise ScenarioError(source, field, reason)

    def host(name: str, field: str) -> str:
        if name not in hosts:
            fail(field, f"unknown host {name!r}; hosts of this testbed: {', '.join(sorted(hosts))}")
        return name

    def date(at: int, field: str) -> int:
        if at >= exp.duration:
            fail(field, f"date {at / 1e6:g} s is not before the end of the timeline "
                        f"(experiment.duration = {exp.duration / 1e6:g} s)")
        return at

    def new_id(given: str | None, default: str, field: str) -> str:
        name = given or default
        if name in ids:
            fail(field, f"event id {name!r} is used twice")
        ids.add(name)
        return name

    def direction(src: str, dst: str) -> str:
        a, b = hosts[src].side, hosts[dst].side
        return "reverse" if (a, b) == ("right", "left") else "forward"

    for i, t in enumerate(sections.transfer):
        where = f"transfer[{i}]"
        srcs, dsts = t.src, t.dst
        n = max(len(srcs), len(dsts))
        for name, group in (("src", srcs), ("dst", dsts)):
            if len(group) not in (1, n):
                fail(f"{where}.{name}", f"a group needs as many sources as destinations "
                                        f"(or one of either): {len(srcs)} vs {len(dsts)}")
        spacing = exp.spacing if t.spacing is None else t.spacing
        base = t.id or f"t{i + 1}"
        if (t.source_file or t.sink_file) and (t.streams != 1 or n != 1):
            fail(f"{where}.streams", "a transfer from or to a file is one transfer of one stream")
        for k in range(n):
            src = host(srcs[k % len(srcs)], f"{where}.src")
            dst = host(dsts[k % len(dsts)], f"{where}.dst")
            if src == dst:
                fail(f"{where}.dst", f"source and destination are the same host {src!r}")
            at = date(t.at + k * spacing, f"{where}.at" if k == 0 else f"{where}.spacing")
            events.append(Transfer(
                id=new_id(None, base if n == 1 else f"{base}.{k + 1}", f"{where}.id"),
                at_us=at, src=src, dst=dst, volume=t.volume, cc=t.cc, streams=t.streams,
                rate_bps=t.rate, direction=t.direction or direction(src, dst),
                source_file=t.source_file, sink_file=t.sink_file, wait=t.wait))
    for i, p in enumerate(sections.pingpong):
        where = f"pingpong[{i}]"
        src, dst = host(p.src, f"{where}.src"), host(p.dst, f"{where}.dst")
        if src == dst:
            fail(f"{where}.dst", f"source and destination are the same host {src!r}")
        events.append(Pingpong(id=new_id(p.id, f"pp{i + 1}", f"{where}.id"),
                               at_us=date(p.at, f"{where}.at"), src=src, dst=dst,
                               count=p.count, size=p.size, cc=p.cc, rate_bps=p.rate,
                               direction=p.direction or direction(src, dst)))
    for i, u in enumerate(sections.udp):
        where = f"udp[{i}]"
        src, dst = host(u.src, f"{where}.src"), host(u.dst, f"{where}.dst")
        if src == dst:
            fail(f"{where}.dst", f"source and destination are the same host {src!r}")
        at = date(u.at, f"{where}.at")
        if at + u.duration > exp.duration:
            fail(f"{where}.duration", "the stream would run past the end of the timeline")
        events.append(Udp(id=new_id(u.id, f"udp{i + 1}", f"{where}.id"), at_us=at, src=src,
                          dst=dst, rate_bps=u.rate, duration_us=u.duration, size=u.size,
                          arrivals=u.arrivals, seed=exp.seed + i))
    for i, b in enumerate(sections.tcp_background):
        where = f"tcp_background[{i}]"
        for name in b.src:
            host(name, f"{where}.src")
        for name in b.dst:
            host(name, f"{where}.dst")
        at = date(b.at, f"{where}.at")
        if at + b.duration > exp.duration:
            fail(f"{where}.duration", "the flows would start past the end of the timeline")
        sz = b.sizes
        if sz.distribution == "pareto" and (sz.shape is None or sz.shape <= 1):
            fail(f"{where}.sizes.shape", "a Pareto size distribution needs shape > 1 (finite mean)")
        if sz.distribution == "weibull" and (sz.shape is None or sz.shape <= 0):
            fail(f"{where}.sizes.shape", "a Weibull size distribution needs shape > 0")
        if b.duration / b.mean_gap > MAX_BACKGROUND_FLOWS:
            fail(f"{where}.mean_gap", f"more than {MAX_BACKGROUND_FLOWS} flows expected; "
                                      "use a longer mean gap")
        events.append(TcpBackground(
            id=new_id(b.id, f"bg{i + 1}", f"{where}.id"), at_us=at, src=b.src, dst=b.dst,
            duration_us=b.duration, mean_gap_us=b.mean_gap, distribution=sz.distribution,
            mean_bytes=sz.mean, shape=sz.shape, cc=b.cc))
    for i, s in enumerate(sections.set):
        where = f"set[{i}]"
        link = links.get(s.link)
        if link is None or not link.emulated:
            emulated = sorted(n for n, lk in links.items() if lk.emulated)
            fail(f"{where}.link", f"unknown or not emulated link {s.link!r}; emulated links: "
                                  f"{', '.join(emulated) or 'none'}")
        given = "rate" in s.model_fields_set
        if not (given or s.delay is not None or s.loss is not None):
            fail(where, "nothing to change: give rate, delay or loss")
        events.append(SetLink(id=new_id(s.id, f"set{i + 1}", f"{where}.id"),
                              at_us=date(s.at, f"{where}.at"), link=s.link,
                              direction=s.direction, rate_bps=s.rate, rate_given=given,
                              delay_us=s.delay, loss=s.loss))
    for i, c in enumerate(sections.command):
        where = f"command[{i}]"
        events.append(Command(id=new_id(c.id, f"cmd{i + 1}", f"{where}.id"),
                              at_us=date(c.at, f"{where}.at"),
                              host=host(c.host, f"{where}.host"), argv=c.argv, check=c.check,
                              wait=c.wait))
    if not events:
        fail("(file)", "the timeline is empty: add at least one [[transfer]], [[pingpong]], "
                       "[[udp]], [[tcp_background]] or [[command]]")
    events.sort(key=lambda e: (e.at_us, e.id))
    return Experiment(name=exp.name or topo.name, repetitions=exp.repetitions, seed=exp.seed,
                      duration_us=exp.duration, interval_us=exp.interval, events=tuple(events))


def events_for_repetition(exp: Experiment, repetition: int) -> list:
    """The concrete events of one repetition: background flows drawn from their
    distributions with a seed of (experiment seed, repetition, event index), so each
    repetition differs but a rerun of the same repetition is identical."""
    import numpy as np

    out: list = []
    for index, e in enumerate(exp.events):
        if not isinstance(e, TcpBackground):
            out.append(e)
            continue
        rng = np.random.default_rng([exp.seed, repetition, index])
        t, k = e.at_us, 0
        while True:
            t += int(rng.exponential(e.mean_gap_us))
            if t >= e.at_us + e.duration_us:
                break
            src, dst = e.src[k % len(e.src)], e.dst[k % len(e.dst)]
            k += 1
            if src == dst:
                continue
            out.append(Transfer(id=f"{e.id}.{k}", at_us=t, src=src, dst=dst,
                                volume=max(1, int(draw_size(rng, e))), cc=e.cc, streams=1,
                                rate_bps=None, direction="background"))
    out.sort(key=lambda ev: (ev.at_us, ev.id))
    return out


def draw_size(rng, e: TcpBackground) -> float:
    """One flow size in bytes with mean e.mean_bytes."""
    import math

    if e.distribution == "fixed":
        return e.mean_bytes
    if e.distribution == "exponential":
        return rng.exponential(e.mean_bytes)
    if e.distribution == "pareto":  # Lomax + 1 is Pareto with x_m = 1; scale to the mean
        xm = e.mean_bytes * (e.shape - 1) / e.shape
        return xm * (1 + rng.pareto(e.shape))
    scale = e.mean_bytes / math.gamma(1 + 1 / e.shape)  # weibull
    return scale * rng.weibull(e.shape)
