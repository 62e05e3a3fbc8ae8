"""The summaries flow (and itb-udt) write at the end of each transfer,
`<event>.<role>.json` (docs/flow.md), as typed models: one per role, the same fields as
flow's own `Summary` structs. Both sides hold their fields and format to one list,
native/flow/summary-format.json (flow's tests, tests/unit/test_flow_summary.py).

`format` is 1; a summary without it was written by a flow from before the field, with
the same fields, and is read as format 1. A higher format is refused, named.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from itb.rundir.records import Record

SUMMARY_FORMAT = 1


class Summary(Record):
    WHAT: ClassVar[str] = "an endpoint's summary"
    VERSION_FIELD: ClassVar[str | None] = "format"
    VERSION: ClassVar[int] = SUMMARY_FORMAT
    VERSION_MISSING: ClassVar[int | None] = SUMMARY_FORMAT
    format: int = SUMMARY_FORMAT
    role: str | None = None

    @classmethod
    def other_version_hint(cls, data: dict) -> str:
        return "written by another flow: report the run with the ITB that made it"

    ok: bool | None = None
    error: str | None = None
    bytes: int | None = None


class Cpu(Record):
    user_s: float | None = None
    system_s: float | None = None


class Sent(Record):
    """What a sender's sockets put on the wire (Σ tcp_info over its streams)."""

    bytes: int | None = None
    retrans_bytes: int | None = None
    segments: int | None = None
    data_segments: int | None = None
    header_bytes: int | None = None


class Rtt(Record):
    min: int
    mean: float
    max: int


class SendSummary(Summary):
    role: Literal["send"] = "send"
    streams: int | None = None
    cc: str | None = None
    cc_in_use: str | None = None
    start_ns: int | None = None
    end_ns: int | None = None
    connect_ns: int | None = None
    goodput_bps: float | None = None
    total_retrans: int | None = None
    sent: Sent | None = None
    rate_bps: int | None = None
    rate_changes: list[list[int]] = []
    profile: list[list[int]] | None = None  # [µs after the start, bit/s]
    enforce: str | None = None  # pacing | application
    messages: int | None = None
    rtt_ns: Rtt | None = None
    cpu: Cpu | None = None


class RecvSummary(Summary):
    role: Literal["recv"] = "recv"
    streams: int | None = None
    per_stream_bytes: list[int] = []
    first_byte_ns: int | None = None
    last_byte_ns: int | None = None
    accept_ns: int | None = None
    expected_bytes: int | None = None
    goodput_bps: float | None = None
    messages: int | None = None
    cpu: Cpu | None = None


class UdpSendSummary(Summary):
    role: Literal["udp-send"] = "udp-send"
    rate_bps: int | None = None
    size: int | None = None
    poisson: bool | None = None
    seed: int | None = None
    datagrams: int | None = None
    send_errors: int | None = None
    start_ns: int | None = None
    end_ns: int | None = None


class UdpRecvSummary(Summary):
    role: Literal["udp-recv"] = "udp-recv"
    datagrams: int | None = None
    lost: int | None = None
    first_ns: int | None = None
    last_ns: int | None = None
    start_ns: int | None = None
    end_ns: int | None = None


BY_ROLE: dict[str, type[Summary]] = {
    "send": SendSummary,
    "recv": RecvSummary,
    "udp-send": UdpSendSummary,
    "udp-recv": UdpRecvSummary,
}


class FlowSummary(Summary):
    """Any role's summary, as the tables read it: the fields they use."""

    start_ns: int | None = None
    end_ns: int | None = None
    last_byte_ns: int | None = None
    cc_in_use: str | None = None
    sent: Sent | None = None
    cpu: Cpu | None = None
