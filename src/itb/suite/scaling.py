"""Scaling the classes to a testbed (docs/benchmark.md): keep K, C_g, R and the number of
sources; divide C, C_a and volumes by one factor. The documents' hosts had
C_a = 1 Gbit/s (RR-6244 Table 5 also has 100 Mbit/s and 10 Gbit/s: `--access`), so a
class's nominal bottleneck is C = K · C_a.

Two modes say what the scaling preserves:

- `rate` (the default) keeps the class RTT: time scales (RTTs, slow start, CUBIC's
  growth in seconds) are the documents', but every per-flow window C_a · RTT shrinks by
  the factor (itb.suite.windows says by how much);
- `window` multiplies the RTT by the factor as well: C_a · RTT, the per-flow window in
  bytes and segments, is the documents', and every RTT-counted time stretches instead.

Bulk volumes may in addition be shortened by a *volume factor* so that a benchmark
fits in minutes rather than the documents' hours (one 30 GB BU transfer takes 240 s at
its C_a); both factors are recorded in every result.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from itb.calibration.record import DEFAULT_CALIBRATION, read_calibration
from itb.errors import ScenarioError
from itb.rundir.records import RunDirError
from itb.scenario.testbed.schema import MAX_ONE_WAY_US
from itb.scenario.units import UnitError, parse_buffer
from itb.suite.classes import ItbClass

NOMINAL_ACCESS_BPS = 1_000_000_000  # the documents' end hosts
PAPER_BU_VOLUME = 30_000_000_000  # bytes per BU transfer (predictability report)
PAPER_BU_TIME_S = PAPER_BU_VOLUME * 8 / NOMINAL_ACCESS_BPS  # 240 s at C_a
PAPER_CAPACITY_BPS = 10_000_000_000  # the documents' bottleneck (C = 10 Gbit/s)
MIN_LINK_BPS, MAX_LINK_BPS = 10_000_000, 10_000_000_000  # the emulator's range
# K = 1000 classes run 800–3500 paced streams: their cost is per stream (timers,
# wake-ups), not per bit. On a 2-core machine at C = 1 Gbit/s the senders could not
# offer more than ~450 Mbit/s (0 drops at C_g = 2.0); at 200 Mbit/s the bottleneck
# saturates. Auto scaling caps their C here.
MANY_SOURCES_MAX_BPS = 200_000_000
SCALING_MODES = ("rate", "window")
# The bottleneck's queue: one bandwidth-delay product (what a link of few flows needs), or
# BDP/√K, the small buffer RR-6244 (§4.4) cites for links of high aggregation K
# (Appenzeller, Keslassy, McKeown, "Sizing router buffers", SIGCOMM 2004: BDP/√n for n
# long-lived flows), or a size given as a scenario writes one ("2MB", "100pkt").
BUFFER_POLICIES = ("bdp", "sqrtk")
MAX_RTT_MS = 2 * MAX_ONE_WAY_US / 1000  # the longest round trip of one emulated link
# Window mode: one BU transfer alone at C_a must last at least this many (stretched)
# round trips, or slow start (~log2(W / 10) round trips to a window of W segments) and
# a few losses would be most of it; the documents' transfers lasted 1200–12000.
MIN_ROUND_TRIPS = 50


@dataclass(frozen=True)
class Scale:
    """How the classes are shrunk to this testbed."""

    capacity_bps: int | None  # the testbed's C every class is scaled to (auto mode)
    factor: float | None  # one factor for every class (given with --scale)
    transfer_time_s: float  # one BU transfer at C_a, after the volume factor
    source: str  # where the capacity or the factor came from
    mode: str = "rate"  # rate: keep the RTT; window: RTT × factor (keep C_a · RTT)
    buffer: str = "bdp"  # the bottleneck's queue: bdp, sqrtk or a size (BUFFER_POLICIES)
    access_bps: int = NOMINAL_ACCESS_BPS  # the documents' C_a the classes are scaled from
    # simulated (ns-3): no cap for classes of many sources (MANY_SOURCES_MAX_BPS is this
    # machine's emulator's limit), and every source a transfer of its own
    simulated: bool = False

    def factor_for(self, cls: ItbClass) -> float:
        if self.factor is not None:
            return self.factor
        return cls.k * self.access_bps / self.capacity_for(cls)

    def capacity_for(self, cls: ItbClass) -> int:
        """The class's C: the testbed's, capped for classes of many sources (auto mode)."""
        cap = self.capacity_bps
        if cap is None:
            raise ValueError("a scale given by its factor has no capacity to scale to")
        many = cls.forward_sources > 100 and not self.simulated
        return min(cap, MANY_SOURCES_MAX_BPS) if many else cap

    @property
    def volume_factor(self) -> float:
        """30 GB at C_a lasts 240 s (C_a = 1 Gbit/s); the volume factor brings that time,
        whatever C_a, to transfer_time_s."""
        return PAPER_BU_VOLUME * 8 / self.access_bps / self.transfer_time_s

    def of(self, cls: ItbClass) -> ClassScale:
        f = self.factor_for(cls)
        c = cls.k * self.access_bps / f
        if not MIN_LINK_BPS <= c <= MAX_LINK_BPS:
            raise ScenarioError(
                None,
                "--scale",
                f"class {cls.name} at scale {f:g} needs C = {c / 1e6:g} Mbit/s; the "
                f"emulator takes 10 Mbit/s to 10 Gbit/s (try --scale "
                f"{cls.k * self.access_bps / MAX_LINK_BPS:g} or more, or "
                "leave --scale out to scale each class to the calibrated testbed)",
            )
        rtt = (
            stretched_rtt_ms(cls, f, self.transfer_time_s) if self.mode == "window" else cls.rtt_ms
        )
        return ClassScale(
            cls.name,
            f,
            self.volume_factor,
            int(round(c)),
            self.access_bps / f,
            self.transfer_time_s,
            self.source,
            self.mode,
            rtt,
            buffer_of(self.buffer, cls),
            self.access_bps,
            tuple(m * rtt / cls.rtt_ms for m in cls.rtt_modes_ms),
            self.simulated,
        )

    def to_json(self) -> dict:
        """The scale as a benchmark's key holds it (the default buffer and C_a left out,
        as in the keys written before they were chosen)."""
        d = asdict(self) | {"volume_factor": self.volume_factor}
        if self.buffer == "bdp":
            del d["buffer"]
        if self.access_bps == NOMINAL_ACCESS_BPS:
            del d["access_bps"]
        if not self.simulated:
            del d["simulated"]
        return d


def buffer_of(policy: str, cls: ItbClass) -> str:
    """The class's bottleneck queue as a scenario writes it: "1bdp", BDP/√K as a BDP
    multiple (K = 10: "0.3162bdp"), or the size given."""
    if policy == "bdp":
        return "1bdp"
    if policy == "sqrtk":
        return f"{1 / math.sqrt(cls.k):.4g}bdp"
    return policy


@dataclass(frozen=True)
class ClassScale:
    """One class on this testbed: what every result of it records."""

    cls: str
    factor: float  # C, C_a and volumes divided by this
    volume_factor: float  # bulk volumes divided by this too
    capacity_bps: int  # C
    access_bps: float  # C_a
    transfer_time_s: float  # one BU transfer alone at C_a
    source: str
    mode: str  # rate or window (Scale.mode)
    rtt_ms: float  # the RTT this testbed uses: the class RTT, × factor in window mode
    buffer: str = "1bdp"  # the bottleneck's queue, as the scenario writes it
    nominal_access_bps: float = NOMINAL_ACCESS_BPS  # the documents' C_a (--access)
    rtt_modes_ms: tuple[float, ...] = ()  # an RTT mix (--rtt), × factor in window mode
    simulated: bool = False  # every source a transfer of its own (Scale.simulated)

    @property
    def bu_volume(self) -> int:
        """Bytes per BU source: 30 GB ÷ factor ÷ volume factor."""
        return max(1, int(PAPER_BU_VOLUME / self.factor / self.volume_factor))

    def to_json(self) -> dict:
        d = asdict(self) | {"bu_volume_bytes": self.bu_volume}
        if not self.rtt_modes_ms:  # (recorded only for a mix)
            del d["rtt_modes_ms"]
        if not self.simulated:
            del d["simulated"]
        return d


def stretched_rtt_ms(cls: ItbClass, factor: float, transfer_time_s: float) -> float:
    """Window mode: the class RTT × the factor, refused beyond what the emulator takes
    or when one BU transfer would last fewer than MIN_ROUND_TRIPS of it."""
    rtt = cls.rtt_ms * factor
    what = (
        f"class {cls.name}: window scaling stretches its {cls.rtt_ms:g} ms RTT by the "
        f"factor {factor:g} to {rtt / 1000:g} s"
    )
    if rtt > MAX_RTT_MS:
        raise ScenarioError(
            None,
            "--scaling",
            f"{what}; an emulated path takes round trips up to {MAX_RTT_MS / 1000:g} s "
            f"(a factor of at most {MAX_RTT_MS / cls.rtt_ms:g} for this class): "
            "leave this class out of window scaling or use --scaling rate",
        )
    if transfer_time_s < MIN_ROUND_TRIPS * rtt / 1000:
        raise ScenarioError(
            None,
            "--scaling",
            f"{what}; one transfer of {transfer_time_s:g} s would last "
            f"{transfer_time_s / (rtt / 1000):.3g} round trips, fewer than "
            f"{MIN_ROUND_TRIPS}: give --transfer-time "
            f"{math.ceil(MIN_ROUND_TRIPS * rtt / 1000):g} or more",
        )
    return rtt


def from_calibration(path: Path, transfer_time_s: float) -> Scale:
    """The calibrated bottleneck rate, when the last `itb calibrate` found it accurate."""
    try:
        cal = read_calibration(path)
    except FileNotFoundError:
        raise ScenarioError(
            str(path),
            "(file)",
            "no calibration: run `itb calibrate` first "
            "(`make calibrate`), or give --scale or --capacity",
        ) from None
    except RunDirError as e:
        raise ScenarioError(str(path), "(file)", f"not a calibration ITB reads: {e}") from None
    if not cal.path.rate_bps:
        raise ScenarioError(
            str(path),
            "path.rate_bps",
            "the calibrated path has no rate (an unlimited path): give --capacity",
        )
    rate = cal.path.rate_bps
    source = f"calibration {path} (C = {rate / 1e6:g} Mbit/s)"
    off = cal.checks_off()
    if off:  # the rate is still the testbed's; say which checks were off
        source += f"; checks off in that calibration: {', '.join(off)}"
    return Scale(rate, None, transfer_time_s, source)


def make_scale(
    *,
    factor: float | None,
    capacity_bps: int | None,
    transfer_time_s: float,
    calibration: Path = DEFAULT_CALIBRATION,
    mode: str = "rate",
    buffer: str = "bdp",
    access_bps: int | None = None,
    simulated: bool = False,
) -> Scale:
    """The scale from --scale, --capacity or the calibration; `access_bps` the documents'
    C_a the classes start from (None: 1 Gbit/s). Simulated: without either, every class
    at the documents' C = 10 Gbit/s (K = 10: unscaled; K = 1000: C_a = 10 Mbit/s), and
    no cap for classes of many sources."""
    if not (math.isfinite(transfer_time_s) and transfer_time_s > 0):
        raise ScenarioError(None, "--transfer-time", "must be a positive number of seconds")
    if mode not in SCALING_MODES:
        raise ScenarioError(
            None, "--scaling", f"unknown scaling {mode!r}; give {' or '.join(SCALING_MODES)}"
        )
    if factor is not None and capacity_bps is not None:
        raise ScenarioError(None, "--scale", "give --scale or --capacity, not both")
    buffer = check_buffer(buffer)
    access = NOMINAL_ACCESS_BPS if access_bps is None else access_bps
    if factor is not None:
        if not (math.isfinite(factor) and factor >= 1):
            raise ScenarioError(None, "--scale", "the scale factor must be at least 1")
        return Scale(None, factor, transfer_time_s, "--scale", mode, buffer, access, simulated)
    if capacity_bps is None and simulated:
        capacity_bps, source = PAPER_CAPACITY_BPS, "the documents' C (simulated)"
    else:
        source = "--capacity"
    if capacity_bps is not None:
        if not MIN_LINK_BPS <= capacity_bps <= MAX_LINK_BPS:
            raise ScenarioError(None, "--capacity", "must lie in 10 Mbit/s – 10 Gbit/s")
        return Scale(capacity_bps, None, transfer_time_s, source, mode, buffer, access, simulated)
    return replace(
        from_calibration(calibration, transfer_time_s), mode=mode, buffer=buffer, access_bps=access
    )


def check_buffer(text: str) -> str:
    """--buffer: bdp, sqrtk, or a queue size as a scenario writes one; ScenarioError
    naming the option otherwise."""
    t = text.strip().lower()
    if t in BUFFER_POLICIES:
        return t
    try:
        spec = parse_buffer(text.strip())
    except UnitError as e:
        raise ScenarioError(None, "--buffer", f"{e}; or {' or '.join(BUFFER_POLICIES)}") from None
    if spec.kind == "bdp":  # a multiple is not one of the two rules: say which
        raise ScenarioError(
            None, "--buffer", f"{text!r}: give bdp, sqrtk, or a size (bytes or packets)"
        )
    return text.strip()
