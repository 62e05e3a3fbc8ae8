"""The experiment part of a scenario file as the user writes it: `[experiment]` and the
arrays of events `[[transfer]]`, `[[pingpong]]`, `[[udp]]`, `[[tcp_background]]`,
`[[set]]`, `[[command]]`.

Dates are relative to the start of a repetition. This module validates each section on
its own (types, units, ranges, known congestion controls) with the field path in every
error; checking the events against the testbed is `itb.scenario.experiment.timeline.resolve`.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from itb.errors import ScenarioError
from itb.scenario.experiment import profile as profiles
from itb.scenario.experiment.algorithms import (
    KNOWN_CCS,  # whether usable here is a preflight question
)
from itb.scenario.testbed.schema import (
    LossField,
    OneWay,
    Rate,
    choice,
    field_path,
    first_error,
    strict_int,
)
from itb.scenario.units import UnitError, parse_duration, parse_rate, parse_size

MAX_STREAMS = 64
MAX_REPETITIONS = 1000
MAX_SEED = 2**63 - 1  # the emulator's and numpy's seeds are 64-bit
MAX_DURATION_US = 24 * 3600 * 1_000_000
MIN_INTERVAL_US, MAX_INTERVAL_US = 1_000, 3_600_000_000
MAX_MESSAGE_BYTES = 1 << 30  # flow's largest buffer (--read-size, --write-size)
EVENT_ID = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}"
# What a command's stdout and stderr together may leave on disk per process, unless its
# `output_limit` says otherwise; the rest is read and dropped (itb.backends.hostside.worker).
DEFAULT_OUTPUT_LIMIT = 64 * 2**20
MAX_OUTPUT_LIMIT = 16 * 2**30


def _date(v: object) -> int:
    return parse_duration(v)  # negative dates are refused by the unit parser


def _positive_duration(v: object) -> int:
    us = parse_duration(v)
    if us <= 0:
        raise UnitError(f"must be longer than 0 (got {v!r})")
    return us


def _timeline_span(v: object) -> int:
    us = _positive_duration(v)
    if us > MAX_DURATION_US:
        raise UnitError(f"at most {MAX_DURATION_US // 1_000_000} s (24 h; got {v!r})")
    return us


def _sampling_interval(v: object) -> int:
    """What the endpoints sample at (flow's --interval-us: 1 ms to 1 h)."""
    us = parse_duration(v)
    if not MIN_INTERVAL_US <= us <= MAX_INTERVAL_US:
        raise UnitError(f"must be 1ms to 3600s, what the endpoints sample at (got {v!r})")
    return us


def _message_size(v: object) -> int:
    n = _volume(v)
    if n > MAX_MESSAGE_BYTES:
        raise UnitError(f"a message is at most 1GiB, what the endpoints buffer (got {v!r})")
    return n


def _optional_message_size(v: object) -> int | None:
    return None if v is None else _message_size(v)


MIN_SOCKET_BUFFER, MAX_SOCKET_BUFFER = 4096, 1 << 30  # flow's --socket-buffer range


def _socket_buffer(v: object) -> int | None:
    if v is None:
        return None
    n = parse_size(v) if isinstance(v, str) else v
    if isinstance(n, bool) or not isinstance(n, int):
        raise UnitError(f'a socket buffer is a size, e.g. "16MB" (got {v!r})')
    if not MIN_SOCKET_BUFFER <= n <= MAX_SOCKET_BUFFER:
        raise UnitError(f"a socket buffer must be 4 KiB to 1 GiB (got {v!r})")
    return n


def _volume(v: object) -> int:
    n = parse_size(v)
    if n <= 0:
        raise UnitError(f"a volume must be larger than 0 (got {v!r})")
    return n


def _any_rate(v: object) -> int | None:
    """Rates of traffic (not links): 1 kbit/s to 100 Gbit/s, or unlimited."""
    return parse_rate(v, lo=1_000, hi=100_000_000_000)


def _profile(v: object) -> tuple[profiles.Step, ...] | str | None:
    """Inline steps, or the name of a profile file (read when the timeline is resolved)."""
    if v is None or isinstance(v, str):
        if isinstance(v, str) and not v.strip():
            raise UnitError("a profile file name must not be empty")
        return v
    return profiles.parse_steps(v)


NS3_MODEL = re.compile(r"ns3:Tcp[A-Za-z0-9]+")  # ns-3's own model, in simulation only


def _cc(v: object) -> str:
    if isinstance(v, str) and NS3_MODEL.fullmatch(v):
        return v
    if not isinstance(v, str) or v not in KNOWN_CCS:
        raise UnitError(
            f"unknown congestion control {v!r}; known: {', '.join(KNOWN_CCS)} (and in "
            "simulation ns-3's models as ns3:<model>, e.g. ns3:TcpCubic)"
        )
    return v


UDT_NATIVE = "udt"  # a UDT transfer's cc: UDT4's own congestion control


def _transfer_cc(v: object) -> str:
    """A TCP congestion control, or "udt" (UDT4's own, for a UDT transfer)."""
    return v if v == UDT_NATIVE else _cc(v)


def _hosts(v: object) -> tuple[str, ...]:
    """One host name or a list of them (a group)."""
    names = [v] if isinstance(v, str) else v
    if (
        not isinstance(names, (list, tuple))
        or not names
        or not all(isinstance(n, str) for n in names)
    ):
        raise UnitError(f"expected a host name or a list of host names, got {v!r}")
    return tuple(names)


def _argv(v: object) -> tuple[str, ...]:
    if not isinstance(v, (list, tuple)) or not v or not all(isinstance(a, str) for a in v):
        raise UnitError(f'expected a list of strings such as ["iperf3", "-s", "-1"], got {v!r}')
    return tuple(v)


def _output_limit(v: object) -> int:
    n = parse_size(v)
    if not 0 < n <= MAX_OUTPUT_LIMIT:
        raise UnitError(f"an output limit must be larger than 0 and at most 16GiB (got {v!r})")
    return n


def _event_id(v: object) -> str:
    if not isinstance(v, str) or not re.fullmatch(EVENT_ID, v):
        raise UnitError(f"{v!r} is not a valid id: up to 32 letters, digits, '.', '_' or '-'")
    return v


Date = Annotated[int, BeforeValidator(_date)]
Span = Annotated[int, BeforeValidator(_positive_duration)]
Volume = Annotated[int, BeforeValidator(_volume)]
TrafficRate = Annotated[int | None, BeforeValidator(_any_rate)]
CC = Annotated[str, BeforeValidator(_cc)]
ProfileField = Annotated[tuple[tuple[int, int], ...] | str | None, BeforeValidator(_profile)]
Enforce = Annotated[str, BeforeValidator(choice(("pacing", "application", "tbf"), "enforcement"))]
Protocol = Annotated[str, BeforeValidator(choice(("tcp", "udt"), "protocol"))]
Hosts = Annotated[tuple[str, ...], BeforeValidator(_hosts)]
Argv = Annotated[tuple[str, ...], BeforeValidator(_argv)]
EventId = Annotated[str, BeforeValidator(_event_id)]
Direction = Annotated[
    str, BeforeValidator(choice(("forward", "reverse", "background"), "direction"))
]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExperimentSection(_Section):
    name: str | None = None
    repetitions: Annotated[int, strict_int(1, MAX_REPETITIONS)] = 1
    seed: Annotated[int, strict_int(0, MAX_SEED)] = 1
    # end of the timeline: every event lies before it
    duration: Annotated[int, BeforeValidator(_timeline_span)] = 300_000_000
    spacing: Date = 1_000_000  # default start spacing inside a group of transfers
    # goodput and tcp_info sampling interval
    interval: Annotated[int, BeforeValidator(_sampling_interval)] = 100_000
    files_dir: str | None = None  # the only directory source_file/sink_file may name
    # each repetition delays every transfer, ping-pong and UDP stream by a draw in
    # [0, start_jitter] (seeded): repetitions of a deterministic testbed (a simulator) differ
    start_jitter: Date = 0


class TransferSpec(_Section):
    """One transfer, or a group when src/dst are lists (zipped; a single name repeats)."""

    id: EventId | None = None
    src: Hosts
    dst: Hosts
    at: Date = 0
    spacing: Date | None = None  # between the starts of a group; default experiment.spacing
    volume: Volume
    cc: Annotated[str, BeforeValidator(_transfer_cc)] = "cubic"
    streams: Annotated[int, strict_int(1, MAX_STREAMS)] = 1
    rate: TrafficRate = None
    profile: ProfileField = (
        None  # rate steps over time (itb.scenario.experiment.profile), or a file
    )
    # how the sender keeps rate/profile: pacing, its writes, or a token bucket on its host
    enforce: Enforce = "pacing"
    # a fixed SO_SNDBUF / SO_RCVBUF of this size on both ends (iperf's -w); None: autotuned
    socket_buffer: Annotated[int | None, BeforeValidator(_socket_buffer)] = None
    # a profile kept by pacing: pace this share above it, the writes keeping the profile
    pace_headroom: Annotated[float, Field(ge=0.0, le=0.5)] = 0.0
    deadline: Span | None = None  # it must complete this long after its start
    protocol: Protocol = "tcp"  # "udt": the UDT endpoint, its rate from `rate` or `profile`
    direction: Direction | None = None  # default from the hosts' sides
    source_file: str | None = None  # read the bytes from this file on the source
    sink_file: str | None = None  # write them to this file on the destination
    overwrite: bool = False  # sink_file may replace an existing file
    wait: bool = True  # False: adverse traffic, stopped once the awaited events are done


class PingpongSpec(_Section):
    id: EventId | None = None
    src: str
    dst: str
    at: Date = 0
    count: Annotated[int, strict_int(1, 1_000_000)] = 200
    # one message: flow holds it in memory on both ends, in buffers of at most 1 GiB
    size: Annotated[int, BeforeValidator(_message_size)] = 1_000_000
    # what the destination answers each message with (default: the message itself)
    reply_size: Annotated[int | None, BeforeValidator(_optional_message_size)] = None
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
    arrivals: Annotated[str, BeforeValidator(choice(("cbr", "poisson"), "arrival process"))] = "cbr"
    wait: bool = True  # False: adverse traffic, stopped once the awaited events are done


class SizeDistribution(_Section):
    distribution: Annotated[
        str,
        BeforeValidator(choice(("exponential", "pareto", "weibull", "fixed"), "size distribution")),
    ]
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
    wait: bool = True  # False: its flows are stopped once the awaited events are done


class SetSpec(_Section):
    id: EventId | None = None
    at: Date
    link: str
    direction: Annotated[
        str, BeforeValidator(choice(("forward", "reverse", "both"), "direction"))
    ] = "both"
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
    # Held by ITB's cgroup sock_ops program (itb.cc.pace): the total rate of the
    # command's TCP data connections follows `profile` (dates from its start), and its
    # connections get `cc`; a connection with `control_port` at either end is neither
    # paced nor counted (GridFTP's control channel).
    profile: ProfileField = None
    cc: Annotated[str | None, BeforeValidator(lambda v: v if v is None else _cc(v))] = None
    control_port: Annotated[int | None, strict_int(1, 65535)] = None
    # bytes of stdout and stderr together kept on disk; default DEFAULT_OUTPUT_LIMIT
    output_limit: Annotated[int | None, BeforeValidator(lambda v: _output_limit(v))] = None


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


def validate_sections(data: dict, source: str | None) -> ScenarioSections:
    """The experiment sections of a scenario file, or a ScenarioError naming the field."""
    try:
        return ScenarioSections.model_validate(data)
    except ValidationError as e:
        loc, reason = first_error(e.errors()[0], root=ScenarioSections)
        raise ScenarioError(source, field_path(loc), reason) from None
