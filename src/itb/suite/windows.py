"""Per-flow windows: how many segments one source keeps in flight in the documents'
setting and on this testbed (docs/benchmark.md, "What scaling preserves").

A source sending at rate r over a path of round-trip time RTT fills it with a window of

    W = r · RTT / (8 · MSS)  segments (MSS = 1448 B: 1500 B frames with TCP timestamps).

r is the source's capacity C_a while the bottleneck is not congested; when the M forward
sources offer more than C (C_g = M · C_a / C > 1), each one's fair share is
C / M = C_a / C_g. The bottleneck's one-BDP queue adds at most as much again.

Reno's congestion-avoidance cycle (from W/2 after a loss back to W, one segment per
round trip) lasts W/2 round trips: how often a transfer meets losses, and how many
cycles it lives through, follow from it.

Below about MIN_SEGMENTS segments the variants cannot differ: BIC (below 14 segments),
HighSpeed (38, RFC 3649) and Scalable (100) run Reno's increase, CUBIC stays in its
Reno-friendly region (RFC 9438), and with a window of a few segments a loss is seldom
repaired by fast retransmit (three duplicate ACKs need four segments in flight) but by a
retransmission timeout: every loss-based variant is then Reno dominated by timeouts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

from itb.suite.classes import ItbClass
from itb.suite.realisation import BenchRealisation
from itb.suite.scaling import ClassScale

MSS_BYTES = 1448
MIN_SEGMENTS = 20
CONSEQUENCE = (
    "loss-based variants behave like Reno dominated by timeouts; differences "
    "between them are not measurable here"
)


def segments(rate_bps: float, rtt_ms: float, mss: int = MSS_BYTES) -> float:
    """W = rate · RTT / (8 · MSS)."""
    return rate_bps * rtt_ms / 1000 / 8 / mss


@dataclass(frozen=True)
class FlowWindow:
    """One source of a class, as one application realises it: its window in segments in
    the documents' setting and on this testbed."""

    cls: str
    mode: str  # the scaling mode (rate: RTT kept; window: RTT × factor)
    load: float  # C_g the source competes at (M / K realised; 1 for a flow alone)
    documents_rate_bps: float  # its capacity in the documents (C_a = 1 Gbit/s; C for TU)
    documents_rtt_ms: float
    testbed_rate_bps: float  # its capacity here, after scaling
    testbed_rtt_ms: float

    def _share(self, w: float) -> float | None:
        return w / self.load if self.load > 1 else None

    @property
    def documents(self) -> float:
        return segments(self.documents_rate_bps, self.documents_rtt_ms)

    @property
    def documents_share(self) -> float | None:
        """At the fair share C_a / C_g, where the class is congested (C_g > 1)."""
        return self._share(self.documents)

    @property
    def testbed(self) -> float:
        return segments(self.testbed_rate_bps, self.testbed_rtt_ms)

    @property
    def testbed_share(self) -> float | None:
        return self._share(self.testbed)

    @property
    def smallest(self) -> float:
        """The window the source runs with here: its fair share's where congested."""
        share = self.testbed_share
        return self.testbed if share is None else share

    @property
    def documents_smallest(self) -> float:
        share = self.documents_share
        return self.documents if share is None else share

    @property
    def documents_cycle_s(self) -> float:
        """Reno's cycle at the documents' window: W/2 round trips, in seconds."""
        return self.documents_smallest / 2 * self.documents_rtt_ms / 1000

    @property
    def testbed_cycle_s(self) -> float:
        return self.smallest / 2 * self.testbed_rtt_ms / 1000

    @property
    def warning(self) -> str | None:
        w = self.smallest
        if w >= MIN_SEGMENTS:
            return None
        return (
            f"class {self.cls}: {w:.3g} segments per flow on this testbed (under "
            f"{MIN_SEGMENTS}; {self.documents_smallest:.0f} in the "
            f"documents): {CONSEQUENCE}"
        )

    def to_json(self) -> dict:
        return asdict(self) | {
            "mss_bytes": MSS_BYTES,
            "min_segments": MIN_SEGMENTS,
            "documents_segments": self.documents,
            "documents_share_segments": self.documents_share,
            "testbed_segments": self.testbed,
            "testbed_share_segments": self.testbed_share,
            "smallest_segments": self.smallest,
            "documents_cycle_s": self.documents_cycle_s,
            "testbed_cycle_s": self.testbed_cycle_s,
            "warning": self.warning,
        }


def of_source(
    cls: ItbClass,
    cs: ClassScale,
    *,
    testbed_rate_bps: float | None = None,
    documents_rate_bps: float | None = None,
    load: float | None = None,
) -> FlowWindow:
    """A source of `cls` scaled by `cs`: by default one of capacity C_a (the documents'
    1 Gbit/s or --access, C_a ÷ factor here) competing at the class's realised C_g."""
    return FlowWindow(
        cls.name,
        cs.mode,
        cls.c_g_realised if load is None else load,
        cs.nominal_access_bps if documents_rate_bps is None else documents_rate_bps,
        cls.rtt_ms,
        cs.access_bps if testbed_rate_bps is None else testbed_rate_bps,
        cs.rtt_ms,
    )


def warnings_of(realisations: Iterable[BenchRealisation]) -> list[str]:
    """One line per class and window whose sources fall under MIN_SEGMENTS, naming the
    applications concerned, from the cells' recorded realisations (bench.json)."""
    found: dict[str, list[str]] = {}
    for r in realisations:
        if r.window is not None and r.window.warning:
            label = r.app + (f"/{r.variant}" if r.variant else "")
            apps = found.setdefault(r.window.warning, [])
            if label not in apps:
                apps.append(label)
    return [f"{', '.join(apps)}: {text}" for text, apps in found.items()]
