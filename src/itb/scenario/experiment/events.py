"""The resolved form of a scenario's experiment: frozen events with absolute dates and
integer units (µs, bytes, bit/s), checked against the testbed, and the `Experiment`
that holds them with its repetitions, seed and content hash.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from itb.scenario.testbed.model import Loss


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
    # (µs after the transfer's start, payload bit/s) steps (itb.scenario.experiment.profile). Left
    # out of the canonical form while unset, so older scenarios keep their hash.
    profile: tuple[tuple[int, int], ...] | None = Field(
        default=None, exclude_if=lambda v: v is None
    )
    # "tbf": `rate` kept by a token bucket on the source host's egress (the scenario's
    # topology carries it: itb.scenario.buckets), not by the sender
    enforce: Literal["pacing", "application", "tbf"] = Field(
        default="pacing", exclude_if=lambda v: v == "pacing"
    )
    # a fixed SO_SNDBUF / SO_RCVBUF (bytes) on both ends; None: the kernel autotunes
    socket_buffer_bytes: int | None = Field(default=None, exclude_if=lambda v: v is None)
    # a profile kept by pacing: the pacing this share above it, the writes keeping it
    pace_headroom: float = Field(default=0.0, exclude_if=lambda v: v == 0)
    # "udt": ITB's UDT endpoint (itb-udt) instead of TCP; cc is then "udt"
    protocol: Literal["tcp", "udt"] = Field(default="tcp", exclude_if=lambda v: v == "tcp")
    # a UDT transfer's rate control: ITB's fixed-rate controller along `profile`, or
    # UDT4's own congestion control ("native", `rate_bps` its cap)
    udt_control: Literal["fixed", "native"] = Field(
        default="fixed", exclude_if=lambda v: v == "fixed"
    )
    # µs after its start by which it must have completed
    deadline_us: int | None = Field(default=None, exclude_if=lambda v: v is None)


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
    # bytes of each answer when not the message's size (left out of the canonical form)
    reply_size: int | None = Field(default=None, exclude_if=lambda v: v is None)


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
    # False: stopped once the awaited events are done; left out of the canonical form
    # while True, so older scenarios keep their hash
    wait: bool = Field(default=True, exclude_if=lambda v: v)


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
    wait: bool = Field(default=True, exclude_if=lambda v: v)  # (as Udp.wait)


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
    # Held to a profile (dates from the command's start) and/or a congestion control by
    # the cgroup sock_ops program; left out of the canonical form while unset.
    profile: tuple[tuple[int, int], ...] | None = Field(
        default=None, exclude_if=lambda v: v is None
    )
    cc: str | None = Field(default=None, exclude_if=lambda v: v is None)
    control_port: int | None = Field(default=None, exclude_if=lambda v: v is None)
    # stdout and stderr together kept on disk (None: the default, DEFAULT_OUTPUT_LIMIT);
    # left out of the canonical form while unset
    output_limit_bytes: int | None = Field(default=None, exclude_if=lambda v: v is None)

    @property
    def paced(self) -> bool:
        return self.profile is not None or self.cc is not None


Event = Annotated[
    Transfer | Pingpong | Udp | TcpBackground | SetLink | Command, Field(discriminator="kind")
]


class Experiment(_Frozen):
    name: str
    repetitions: int
    seed: int
    duration_us: int
    interval_us: int
    events: tuple[Event, ...]
    # (left out of the canonical form while 0: older scenarios keep their hash)
    start_jitter_us: int = Field(default=0, exclude_if=lambda v: v == 0)

    def canonical_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))

    def content_hash(self) -> str:
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()

    def ccs(self) -> set[str]:
        """The TCP congestion controls the timeline uses (UDT transfers have their own)."""
        return {
            e.cc
            for e in self.events
            if isinstance(e, Transfer | Pingpong | TcpBackground | Command)
            and e.cc is not None
            and (not isinstance(e, Transfer) or e.protocol == "tcp")
        }

    def pairs(self) -> list[tuple[str, str]]:
        """Every (source, destination) host pair that a transfer, ping-pong or UDP
        stream of the timeline uses (background groups are expanded per repetition)."""
        return sorted(
            {(e.src, e.dst) for e in self.events if isinstance(e, (Transfer, Pingpong, Udp))}
        )
