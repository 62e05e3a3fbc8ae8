"""The plan of `itb study response-function`: per algorithm, loss rates log-spaced so
that the window its published response function gives spans the algorithm's range (above
the low-window regime, below what one emulated path carries); one flow per point on a
link far faster than the flow, with a warm-up and a measured span long enough for about
40 loss intervals."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from itb.cc.published import PUBLISHED
from itb.errors import ScenarioError
from itb.study.response_function.args import ResponseArgs
from itb.study.response_function.cells import ResponseCell
from itb.sweep.index import SweepIndex
from itb.sweep.sweep import Sweep, SweepCell

MSS = 1448  # bytes: 1500-byte MTU with timestamps
MAX_LOSS = 0.05
MEASURED_EVENTS = 40  # mean loss intervals a point measures (within 20–60 s)
# A point lasts its warm-up and measured span (plus SETUP_S for the connection): the flow
# does not hold the repetition (`wait = false`), a small awaited UDP stream on the
# reverse direction (no loss there; the fit reads the data direction only) does, and the
# flow is stopped when it ends. The volume leaves room for a flow 3x faster than planned,
# so that it does not finish early; one that does is measured up to its end.
VOLUME_MARGIN = 3.0
SETUP_S = 10
CLOCK = "clock"
# The bottleneck of a point, when not given: this many times the algorithm's top planned
# rate, at least 1 Gbit/s: above the flows, but not so far that a slow start runs the
# emulator past what it can carry (a 3 Gbit/s link let BIC's reach 2.7 Gbit/s, 230 ms
# behind schedule). A point is left out when the link dropped packets while it was
# measured, or it ran at more than LINK_SHARE_LIMIT of C: then the link set the rate.
LINK_HEADROOM = 1.25
TRANSFER = "rf"


@dataclass(frozen=True)
class Point:
    cc: str
    p: float
    plan_window: float  # segments the published (or planning) response function gives
    warmup_s: float
    measure_s: float
    volume: int
    seed: int  # the emulator's loss draws: independent from point to point
    rtt_ms: float
    rate_bps: int  # the bottleneck

    @property
    def name(self) -> str:
        return f"{self.cc}-p{self.p:.3g}"


def check_ccs(ccs: tuple[str, ...]) -> None:
    for cc in ccs:
        if cc not in PUBLISHED:
            raise ScenarioError(
                None,
                "--cc",
                f"{cc!r} has no loss response function to check "
                f"(choose from {', '.join(PUBLISHED)})",
            )


def points_of(a: ResponseArgs) -> list[Point]:
    """Loss rates log-spaced so the planned window spans the algorithm's range."""
    check_ccs(a.ccs)
    if a.points < 3:
        raise ScenarioError(None, "--points", "a fit of c and d needs at least 3 points")
    out = []
    for cc in a.ccs:
        pub = PUBLISHED[cc]
        rtt_ms = a.rtt_ms or pub.rtt_ms
        max_rate = a.max_rate_bps or pub.max_rate_bps
        rtt = rtt_ms / 1e3
        w_cap = max_rate * rtt / (8 * MSS)
        lo, hi = a.windows or pub.windows
        top = hi
        hi = min(hi, w_cap)
        if hi <= lo:
            raise ScenarioError(
                None,
                "--max-rate",
                f"{cc}: windows of {lo:g}–{top:g} "
                f"segments need more than {max_rate / 1e6:g} Mbit/s at "
                f"{rtt_ms:g} ms",
            )
        link = a.rate_bps or int(max(1e9, LINK_HEADROOM * hi * MSS * 8 / rtt))
        for i, w in enumerate(np.geomspace(hi, lo, a.points)):
            p = min(pub.loss_for(w), MAX_LOSS)
            epoch_s = rtt / (p * w)  # mean time between congestion events
            warmup = float(np.clip(3 * epoch_s, 5, 15))
            measure = float(
                np.clip(MEASURED_EVENTS * epoch_s, 20, a.max_measure_s or pub.max_measure_s)
            )
            rate = w * MSS * 8 / rtt
            volume = int(max(rate / 8 * (warmup + measure) * VOLUME_MARGIN, 10e6))
            # The i-th point of every algorithm shares a seed: the same loss draws at
            # the same p compare algorithms on a common footing.
            out.append(
                Point(
                    cc,
                    float(f"{p:.3g}"),
                    float(w),
                    warmup,
                    measure,
                    volume,
                    a.seed + i,
                    rtt_ms,
                    link,
                )
            )
    return out


def _doc(a: ResponseArgs, pt: Point) -> dict:
    run_s = pt.warmup_s + pt.measure_s
    return {
        # every segment acknowledged on its own: the ACK pattern the response functions
        # assume (otherwise ~10 segments per ACK here, TSO bursts and delayed ACKs, which
        # makes Linux's BIC grow several times faster and HighSpeed slower)
        "testbed": {"name": f"rf-{pt.name}"[:64], "ack_every_segment": True},
        "dumbbell": {"pairs": 1},
        "bottleneck": {
            "rate": f"{pt.rate_bps}bit",
            "rtt": f"{pt.rtt_ms:g}ms",
            "loss": pt.p,
            "loss_reverse": 0,
        },
        "experiment": {
            "name": f"response-{pt.name}",
            "repetitions": a.repeat,
            "seed": pt.seed,
            "interval": f"{a.interval_ms:g}ms",
            "duration": f"{int(run_s + SETUP_S) + 30}s",
        },
        "transfer": [
            {
                "id": TRANSFER,
                "src": "l1",
                "dst": "r1",
                "at": "0s",
                "cc": pt.cc,
                "volume": f"{pt.volume}B",
                "wait": False,
            }
        ],
        # the point's clock: the flow is stopped when this ends
        "udp": [
            {
                "id": CLOCK,
                "src": "r1",
                "dst": "l1",
                "at": "0s",
                "rate": "16kbit",
                "duration": f"{int(run_s + SETUP_S)}s",
                "size": 100,
            }
        ],
    }


def sweep_of(a: ResponseArgs, out: Path) -> Sweep[ResponseCell]:
    cells = [
        SweepCell(
            ResponseCell(
                name=pt.name,
                cc=pt.cc,
                p=pt.p,
                plan_window=pt.plan_window,
                warmup_s=pt.warmup_s,
                measure_s=pt.measure_s,
                volume=pt.volume,
                rtt_ms=pt.rtt_ms,
                rate_bps=pt.rate_bps,
            ),
            _doc(a, pt),
        )
        for pt in points_of(a)
    ]
    return Sweep(
        out, "response-function", SweepIndex[ResponseCell], a.key(), cells, a.repeat, a.seed
    )
