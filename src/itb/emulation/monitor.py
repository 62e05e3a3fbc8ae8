"""Reads the link emulator's per-interval log (linkem-<dir>.csv)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

FIELDS = ("t_ns", "bytes", "packets", "drops_queue", "drops_loss", "queue_bytes",
          "queue_max_bytes", "late_packets", "max_lag_us")


@dataclass(frozen=True)
class Interval:
    t_ns: int
    bytes: int
    packets: int
    drops_queue: int
    drops_loss: int
    queue_bytes: int
    queue_max_bytes: int
    late_packets: int
    max_lag_us: float


def read_log(path: Path) -> list[Interval]:
    with open(path, newline="") as f:
        rows = csv.DictReader(f)
        return [Interval(*(int(float(r[k])) if k != "max_lag_us" else float(r[k])
                           for k in FIELDS)) for r in rows if r.get("t_ns")]


def direction_log(log_dir: str | Path, direction: str) -> list[Interval]:
    return read_log(Path(log_dir) / f"linkem-{direction}.csv")


def between(rows: list[Interval], t0_ns: int, t1_ns: int) -> list[Interval]:
    return [r for r in rows if t0_ns <= r.t_ns < t1_ns]


def windowed_rates_bps(rows: list[Interval], window_ns: int) -> list[float]:
    """Wire rate in consecutive windows (only complete windows)."""
    if not rows:
        return []
    start = rows[0].t_ns
    sums: dict[int, int] = {}
    for r in rows:
        sums[(r.t_ns - start) // window_ns] = sums.get((r.t_ns - start) // window_ns, 0) + r.bytes
    last = (rows[-1].t_ns - start) // window_ns
    return [sums.get(i, 0) * 8e9 / window_ns for i in range(0, last)]


def mean_rate_bps(rows: list[Interval]) -> float:
    if len(rows) < 2:
        return 0.0
    span = rows[-1].t_ns - rows[0].t_ns
    return sum(r.bytes for r in rows[:-1]) * 8e9 / span if span else 0.0


def busy_span(rows: list[Interval], skip_start_ns: int = 0, skip_end_ns: int = 0) -> list[Interval]:
    """The intervals from the first to the last one that carried bytes, trimmed at both ends
    (a ramp at the start, the drain at the end)."""
    busy = [r for r in rows if r.bytes > 0]
    if not busy:
        return []
    lo, hi = busy[0].t_ns + skip_start_ns, busy[-1].t_ns - skip_end_ns
    return [r for r in rows if lo <= r.t_ns <= hi]
