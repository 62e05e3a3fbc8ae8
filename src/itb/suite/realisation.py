"""What a sweep's index keeps of how a cell's class was realised on this testbed, and the
benchmark's cell (`BenchCell`): written by the plans (`itb.suite.apps`: how the sources
were drawn; `scaling`: the class scaled; `windows`: a source's window), read back by the
benchmark's table and report and by the bulk studies' reports (docs/benchmark.md).

These are descriptions for the reader: the fields the code and the reports read are
typed; what an application adds of its own (a bulk source's volume, a ping-pong's
message size, …) is kept as written (`extra="allow"`), as are the keys an older ITB
wrote. The cell itself refuses keys it does not have (`IndexCell`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from itb.sweep.index import IndexCell


class Described(BaseModel):
    model_config = ConfigDict(extra="allow")


class ScaleRecord(Described):
    """One class on this testbed (`scaling.ClassScale.to_json`)."""

    cls: str
    factor: float  # C, C_a and volumes divided by this
    volume_factor: float  # bulk volumes divided by this too
    capacity_bps: int  # C
    access_bps: float  # C_a
    transfer_time_s: float  # one BU transfer alone at C_a
    source: str  # where the capacity or the factor came from
    mode: str = "rate"  # rate or window (a benchmark from before window scaling: rate)
    rtt_ms: float | None = None  # the RTT used (None: recorded before; the class RTT)
    buffer: str = "1bdp"  # the bottleneck's queue (recorded before buffers were chosen: 1 BDP)
    nominal_access_bps: float = 1e9  # the documents' C_a scaled from (before --access: 1 Gbit/s)
    rtt_modes_ms: list[float] = []  # an RTT mix's modes on this testbed (none: one RTT)
    bu_volume_bytes: int


class ClassRecord(Described):
    """A class of the documents (`apps.generate`: `registry._class_json`)."""

    name: str
    k: int
    rtt_ms: float
    c_g: float
    r: float
    meaning: str
    forward_sources: int
    reverse_sources: int
    rtt_modes_ms: list[float] = []  # --rtt with several modes
    forward_share: float = 1.0  # what a forward source offers, as a share of C_a
    reverse_share: float = 1.0


class WindowRecord(Described):
    """One source's window in segments, in the documents and here
    (`windows.FlowWindow.to_json`; its docstring has the definitions)."""

    cls: str
    mode: str
    load: float
    documents_rate_bps: float
    documents_rtt_ms: float
    testbed_rate_bps: float
    testbed_rtt_ms: float
    mss_bytes: int
    min_segments: int
    documents_segments: float
    documents_share_segments: float | None
    testbed_segments: float
    testbed_share_segments: float | None
    smallest_segments: float
    documents_cycle_s: float
    testbed_cycle_s: float
    warning: str | None


class Realisation(Described):
    """How a cell's sources were realised (`apps.Generated.realisation`) and its class's
    scale: what the bulk studies' cells keep."""

    scale: ScaleRecord
    forward: str
    reverse: str
    notes: list[str] = []


class BenchRealisation(Realisation):
    """A benchmark cell's realisation (`apps.generate`): its class, application and
    protocol too, and a source's window."""

    cls: ClassRecord
    app: str
    variant: str | None
    cc: str
    window: WindowRecord | None = None  # None: a benchmark from before windows were recorded
    streams_per_source: int = 1  # N_s of BU's forward sources (1: every other application)
    background: str = "none"  # RR-6244's B: the background traffic (--background)


class BenchCell(IndexCell):
    """A cell of `itb bench` (bench.json): application (and variant) × class × protocol."""

    model_config = ConfigDict(
        extra="forbid", validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
    )
    app: str
    variant: str | None  # TU: "default" or "tuned"
    cls: str = Field(alias="class")
    cc: str
    realisation: BenchRealisation

    @property
    def label(self) -> str:
        """ "BU", "TU/tuned": the application and its variant."""
        return self.app + (f"/{self.variant}" if self.variant else "")
