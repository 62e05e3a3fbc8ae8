"""The benchmark table as typed results (`table.json`, checked format version): one row
per application × class × protocol with the means over repetitions and their 95 %
intervals, and the protocol comparisons (itb.analysis.compare)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from itb.analysis.compare import Comparison
from itb.analysis.results import VersionedResults

FORMAT_VERSION = (
    3  # 2: comparisons against a fixed reference, Fieller, Bonferroni; 3: Hsu, Holm, looks
)


class BenchRow(BaseModel):
    """One cell: application (and variant) × class × protocol. Metrics are means over
    the repetitions that ran, each with the half-width of its 95 % Student-t interval
    (None from one repetition: no spread is claimed from one sample)."""

    model_config = ConfigDict(populate_by_name=True)
    app: str
    variant: str | None
    cls: str = Field(alias="class")
    cc: str
    repetitions: int  # that ran forward transfers
    transfers: int  # completed forward transfers
    failed: int  # failed or corrupt forward transfers (not in T)
    corrupt: int = 0  # of them, with an impossible window in tcp_info
    failed_repetitions: int = 0
    t_mean: float | None = None  # s
    t_mean_ci95: float | None = None
    t_min: float | None = None
    t_min_ci95: float | None = None
    t_max: float | None = None
    t_max_ci95: float | None = None
    sigma_t: float | None = None  # s, population σ over one repetition's transfers
    sigma_t_ci95: float | None = None
    cov: float | None = None
    cov_ci95: float | None = None
    jain: float | None = None  # pooled over the cell's forward transfers
    jain_ci95: float | None = None
    jain_intra: float | None = None  # among the transfers of the cell's protocol
    jain_intra_ci95: float | None = None
    efficiency: float | None = None
    efficiency_ci95: float | None = None
    utilisation: float | None = None
    utilisation_ci95: float | None = None
    scale_factor: float | None = None  # C, C_a and volumes divided by this
    volume_factor: float | None = None
    capacity_bps: float | None = None  # C on this testbed
    access_bps: float | None = None  # C_a on this testbed
    scaling: str = "rate"  # rate or window
    testbed_rtt_ms: float | None = None
    buffer: str = "1bdp"  # the bottleneck's queue, as the scenario wrote it
    streams_per_source: int = 1  # N_s: parallel streams of each forward source (BU)
    k: int | None = None  # the class's aggregation level K as run (--k)
    rtt: str | None = None  # the class's RTT in the documents' terms, or its mix ("1ms,20ms")
    nominal_access_bps: float | None = None  # the documents' C_a it was scaled from (--access)
    background: str = "none"  # B (--background)
    window_segments: float | None = None  # smallest per-flow window on this testbed
    window_warning: bool = False  # under ~20 segments

    @property
    def label(self) -> str:
        return self.app + (f"/{self.variant}" if self.variant else "")


class BenchComparison(Comparison):
    """A protocol against the reference protocol of its application × class."""

    model_config = ConfigDict(populate_by_name=True)
    app: str
    variant: str | None
    cls: str = Field(alias="class")
    failed_tested: int = 0
    failed_reference: int = 0


class BenchTable(VersionedResults):
    FORMAT: ClassVar[int] = FORMAT_VERSION
    rows: list[BenchRow]
    comparisons: list[BenchComparison]


def group_label(app: str, variant: str | None, cls: str) -> str:
    """An application (and its variant) and class as tables and figures name them: "BU F",
    "WM/mix B"."""
    return f"{app}{'/' + variant if variant else ''} {cls}"


def repetitions_compared(comparisons: list[BenchComparison]) -> int:
    """The repetitions an application × class's verdicts stand on: the most any of its
    comparisons was decided (or last looked at) with, on either side — what the verdict
    matrix shows, printed and in the report (a protocol may have run one more, which
    the budget's end left without a look)."""
    return max((max(c.n_tested, c.n_reference) for c in comparisons), default=0)


def reference_of(key: dict) -> str | None:
    """A benchmark's reference protocol from its arguments' key (BenchArgs.key)."""
    return key.get("reference") or next(iter(key.get("ccs") or []), None)
