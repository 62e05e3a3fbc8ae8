"""A run's metrics (metrics.json) as typed models: what `run_metrics` computes per
repetition and over repetitions, the context it used and the engine's dispatch error
(docs/metrics.md, "run_metrics output"). Written with a format version that is checked
when read: a file of another format (or from before formats were recorded) is refused
with `OtherFormat`; `itb report RUN_DIR` rebuilds it from the run's raw logs.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel

from itb.analysis.results import VersionedResults
from itb.analysis.steps import ProfileKept

FORMAT_VERSION = 2  # 2: utilisation counts the wire bytes that crossed the bottleneck


class Completion(BaseModel):
    """completion_stats: seconds over the completed forward transfers (σ_T with 1/N)."""

    n: int
    n_failed: int
    t_min: float | None = None
    t_mean: float | None = None
    t_max: float | None = None
    sigma_t: float | None = None
    cov: float | None = None


class Margins(BaseModel):
    """margins: the margin over T_mean covering 68 % and 95 % of the completions."""

    n: int
    t_mean: float
    q68_s: float
    m68_s: float
    m68_pct: float | None
    q95_s: float
    m95_s: float
    m95_pct: float | None


class QueueingDelay(BaseModel):
    mean_s: float | None = None
    max_s: float | None = None


class FairShare(BaseModel):
    """The fair-share ideal of the forward transfers and the measured times against it."""

    ideal_mean_s: float | None
    ideal_max_s: float | None
    payload_share: float
    n_compared: int
    measured_mean_s: float | None
    compared_ideal_mean_s: float | None
    difference_pct: float | None
    ignores: list[str]  # traffic on the path the model leaves out


class TransferResult(BaseModel):
    """One transfer of a repetition, every direction."""

    transfer: str
    kind: str
    direction: str
    src: str
    dst: str
    cc: str | None
    streams: int
    bytes_expected: int
    bytes: int | None  # None: the receiver reported nothing (it never ran or was killed)
    ok: bool
    error: str | None
    corrupt_window: str | None
    start_s: float | None  # since the repetition's start; None: the sender never started
    completion_s: float | None  # None: failed
    access_rate_bps: float | None  # None: unlimited
    rtt_s: float | None
    mean_goodput_bps: float | None
    sigma_goodput_bps: float | None
    n_samples: int
    goodput_distribution: list[float] | None  # 101 shares of C_a
    ideal_s: float | None
    wire_bytes: int | None
    bytes_retrans: int | None
    profile_s: float | None = None  # a transfer with a rate profile: keeping it exactly
    lateness_s: float | None = None  # completion_s − profile_s
    deadline_s: float | None = None  # it had to complete this long after its start
    deadline_met: bool | None = None  # None: no deadline; a failed transfer missed it


class Repetition(BaseModel):
    """Every metric of one repetition; statistics over its forward transfers."""

    repetition: int
    completion: Completion
    n_corrupt: int = 0  # among completion.n_failed
    margins: Margins | None = None
    jain: float | None = None  # pooled: every forward transfer
    jain_by_cc: dict[str, float | None] = {}  # intra-protocol: among one cc's transfers
    bin_s: float
    efficiency: float | None = None  # of the measured (forward) flows
    utilisation: float | None = None  # of the measured flows
    link_utilisation: float | None = None  # of the forward bottleneck, all its traffic
    queueing_delay: QueueingDelay = QueueingDelay()
    fair_share: FairShare | None = None
    transfers: list[TransferResult] = []


class Overall(BaseModel):
    """Over all repetitions: completions pooled, and means of the per-repetition figures."""

    n_repetitions: int
    completion: Completion
    n_corrupt: int = 0
    t_mean_mean: float | None = None
    t_mean_sigma: float | None = None  # sample σ (1/(n − 1)) of the repetitions' T_mean
    t_mean_cov: float | None = None
    margins: Margins | None = None
    jain_mean: float | None = None
    jain_by_cc_mean: dict[str, float | None] = {}
    efficiency_mean: float | None = None
    utilisation_mean: float | None = None
    link_utilisation_mean: float | None = None
    fair_share: FairShare | None = None
    lateness: Lateness | None = None  # of the transfers with a rate profile
    deadlines: Deadlines | None = None  # of the transfers with a deadline


class Lateness(BaseModel):
    """Lateness (s: completion_s − profile_s, negative when early) of the transfers with
    a rate profile, all repetitions pooled; σ the sample σ (1/(n − 1)), None from one."""

    n: int  # completed
    n_failed: int
    mean_s: float | None = None
    min_s: float | None = None
    max_s: float | None = None
    sigma_s: float | None = None


class Deadlines(BaseModel):
    """Transfers with a deadline, all repetitions pooled: met = completed by it."""

    n: int
    met: int
    missed: int


class Context(BaseModel):
    """What the metrics were computed against: the forward bottleneck's C (None:
    unlimited), its link, the reverse capacity, the MTU, and the payload share when it was
    given rather than derived from the MTU."""

    capacity_bps: float | None = None
    reverse_capacity_bps: float | None = None
    mtu: int | None = None
    link: str | None = None
    payload_share: float | None = None


class DispatchRepetition(BaseModel):
    repetition: int
    events: int
    p99_ms: float
    max_ms: float


class Dispatch(BaseModel):
    """The engine's dispatch error of the timed events (ms); none timed: events 0."""

    events: int
    p50_ms: float | None = None
    p99_ms: float | None = None
    max_ms: float | None = None
    per_repetition: list[DispatchRepetition] = []


class RunMetrics(VersionedResults):
    """metrics.json of a run."""

    FORMAT: ClassVar[int] = FORMAT_VERSION
    WHAT: ClassVar[str] = "metrics"
    DESCRIPTION: ClassVar[str] = "a run's metrics"
    repetitions: list[Repetition]
    overall: Overall
    context: Context
    dispatch: Dispatch | None = None
    # how the transfers and commands with a rate profile kept it, step by step
    profiles: list[ProfileKept] = []

    def repetition(self, r: int) -> Repetition | None:
        return next((x for x in self.repetitions if x.repetition == r), None)

    @classmethod
    def rebuild_hint(cls, path: Path) -> str:
        return f"`itb report {path.parent}` rebuilds it from the run's logs"
