"""Reads the link emulator's per-interval log: `linkem-<dir>.csv`, the live file, and
the closed segments `linkem-<dir>.<seq>.csv` linkem rotates it into (docs/linkem.md).

ITB's emulators rotate every LOG_SEGMENT_BYTES and keep at most LOG_KEEP_BYTES of closed
segments, so an idle testbed's logs stay bounded; the engine deletes the segments a
repetition has consumed once its rows are copied into the run directory.

Rows linkem could not write (a full disk) leave a gap in the series: `gaps` finds them in
a window, from the rows themselves and from linkem's own reports (its `log_error` /
`log_gap` events and its stats), so that nothing is computed from a log with a hole.
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

LOG_SEGMENT_BYTES = 8 << 20  # ~2.5 min of a busy link's rows at 1 ms, ~5 min idle
LOG_KEEP_BYTES = 128 << 20  # per direction: >= 35 min of a busy link's rows
READ_ATTEMPTS = 5
EVENTS_FILE = "stdout.log"  # the emulator's stdout: its JSON events, one a line
STATS_FILE = "linkem-stats.json"  # written at exit
CONFIG_FILE = "linkem.json"
DEFAULT_INTERVAL_NS = 1_000_000
# linkem writes an interval's row ~100 ms after the interval and flushes every 100 ms: a
# log read sooner than this after an instant lacks its last rows (a "hole" that is not one)
ROWS_WRITTEN_NS = 500_000_000
# a repetition's rows are kept this long past its end: the last frames' intervals
KEPT_PAST_END_NS = 300_000_000

DIRECTIONS = {"ab": "ab, forward", "ba": "ba, reverse"}
FIELDS = (
    "t_ns",
    "bytes",
    "packets",
    "drops_queue",
    "drops_loss",
    "queue_bytes",
    "queue_max_bytes",
    "late_packets",
    "max_lag_us",
)


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
        return [_interval(r) for r in rows if r.get("t_ns")]


def _interval(row: dict[str, str]) -> Interval:
    def count(k: str) -> int:
        return int(float(row[k]))

    return Interval(
        t_ns=count("t_ns"),
        bytes=count("bytes"),
        packets=count("packets"),
        drops_queue=count("drops_queue"),
        drops_loss=count("drops_loss"),
        queue_bytes=count("queue_bytes"),
        queue_max_bytes=count("queue_max_bytes"),
        late_packets=count("late_packets"),
        max_lag_us=float(row["max_lag_us"]),
    )


def direction_log(
    log_dir: str | Path, direction: str, lo_ns: int = 0, hi_ns: int | None = None
) -> list[Interval]:
    """The rows the emulator still holds for one direction, oldest first; with a window,
    only those of the files that can hold rows from lo_ns to hi_ns (filter with `between`)."""
    files = log_files(log_dir, direction)
    if hi_ns is not None:
        files = _covering(files, lo_ns, hi_ns)
    return [row for path in files for row in read_log(path)]


class LogGone(Exception):
    """The rows asked for were rotated away before they were read."""


def log_files(log_dir: str | Path, direction: str) -> list[Path]:
    """The closed segments in order, then the live file (those that exist)."""
    d = Path(log_dir)
    seq = re.compile(rf"linkem-{re.escape(direction)}\.(\d+)\.csv")
    closed = sorted(
        (int(m.group(1)), d / m.group(0))
        for m in map(seq.fullmatch, os.listdir(d) if d.is_dir() else [])
        if m
    )
    live = d / f"linkem-{direction}.csv"
    return [p for _, p in closed] + ([live] if live.exists() else [])


def _first_t(path: Path) -> int | None:
    with open(path) as f:
        f.readline()
        row = f.readline()
    return int(row.split(",", 1)[0]) if row.endswith("\n") else None


def _covering(files: list[Path], lo_ns: int, hi_ns: int) -> list[Path]:
    """The files (in order, each starting where the previous ends) that can hold rows
    from lo_ns to hi_ns: a file's rows end where the next file's first row is."""
    firsts = [_first_t(p) for p in files]
    nexts = firsts[1:] + [None]  # the last file: no next one
    return [
        p
        for p, first, nxt in zip(files, firsts, nexts, strict=True)
        if (first is None or first <= hi_ns) and (nxt is None or nxt > lo_ns)
    ]


def read_window(log_dir: str | Path, direction: str, lo_ns: int, hi_ns: int) -> pd.DataFrame:
    """The rows from lo_ns on, read from only the files that can hold rows up to hi_ns
    (a later file's rows are included too); read again if linkem rotated meanwhile. Raises LogGone if rows from before
    lo_ns are no longer there (the oldest kept row is later than lo_ns)."""
    for _ in range(READ_ATTEMPTS):
        files = log_files(log_dir, direction)
        try:
            first = _first_t(files[0]) if files else None
            frames = [pd.read_csv(p) for p in _covering(files, lo_ns, hi_ns)]
        except FileNotFoundError:
            continue
        if log_files(log_dir, direction) != files:
            continue
        if not files:
            raise FileNotFoundError(Path(log_dir) / f"linkem-{direction}.csv")
        if first is not None and first > lo_ns:
            raise LogGone(f"{log_dir}: rows of {direction} before {first} ns were rotated away")
        df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=FIELDS)
        whole = df.dropna()  # a row the writer is still writing (or one it is cutting)
        if len(whole) < len(df):
            df = whole.astype({k: "int64" for k in FIELDS if k in whole})
        return df[df["t_ns"] >= lo_ns]
    raise LogGone(f"{log_dir}: {direction} kept rotating while being read")


def drop_consumed(log_dir: str | Path, direction: str, t_ns: int) -> None:
    """Deletes the closed segments whose rows all precede t_ns (the next file starts
    at or before it). The live file is never deleted."""
    files = log_files(log_dir, direction)
    for path, after in zip(files[:-1], files[1:]):
        try:
            first = _first_t(after)
            if first is None or first > t_ns:
                return
            path.unlink(missing_ok=True)
        except FileNotFoundError:
            continue


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


@dataclass(frozen=True)
class Gap:
    """Rows missing from one direction's log: those of the intervals from from_ns to
    to_ns (end excluded; None: still missing when read). `rows` and `error` come from
    the emulator's report when it made one (error None: seen only as missing rows)."""

    direction: str
    from_ns: int
    to_ns: int | None
    rows: int | None = None
    error: str | None = None

    def overlaps(self, lo_ns: int, hi_ns: int) -> bool:
        return self.from_ns <= hi_ns and (self.to_ns is None or self.to_ns > lo_ns)

    def describe(self, zero_ns: int, origin: str = "") -> str:
        """E.g. `from 2.412 s to 4.108 s<origin> (1696 rows; linkem: No space left on
        device (os error 28))`, in seconds after zero_ns."""
        span = f"from {(self.from_ns - zero_ns) / 1e9:.3f} s" + (
            " on" if self.to_ns is None else f" to {(self.to_ns - zero_ns) / 1e9:.3f} s"
        )
        what = [
            f"{self.rows} rows" if self.rows is not None else "",
            f"linkem: {self.error}" if self.error else "",
        ]
        detail = "; ".join(w for w in what if w)
        return span + origin + (f" ({detail})" if detail else "")


def interval_ns(log_dir: str | Path) -> int:
    """The emulator's log interval, from its configuration in log_dir."""
    try:
        conf = json.loads((Path(log_dir) / CONFIG_FILE).read_text())
        return int(conf.get("interval_us", DEFAULT_INTERVAL_NS // 1000)) * 1000
    except (OSError, ValueError, TypeError, AttributeError):
        return DEFAULT_INTERVAL_NS


def holes(t_ns: Sequence[int], lo_ns: int, hi_ns: int, step_ns: int) -> list[tuple[int, int]]:
    """Spans [from, to) of at least one interval between lo_ns and hi_ns that no row
    covers (a row t covers [t, t + step_ns)); t_ns in increasing order. A window's
    edges are not on the rows' grid: less than one interval uncovered there is none."""
    out, covered = [], lo_ns
    for t in t_ns:
        if t - covered >= step_ns:
            out.append((covered, t))
        covered = max(covered, t + step_ns)
        if covered > hi_ns:
            return out
    if hi_ns - covered >= step_ns:
        out.append((covered, hi_ns))
    return out


def reported_gaps(log_dir: str | Path, direction: str) -> list[Gap]:
    """The gaps the emulator reported for one direction: its `log_gap` events, a
    `log_error` not followed by one (rows lost from then on), and those its stats list
    at exit (docs/linkem.md). A line that is not JSON (cut by a full disk) is skipped."""
    d = Path(log_dir)
    found: dict[int, Gap] = {}
    try:
        lines = (d / EVENTS_FILE).read_text(errors="replace").splitlines()
    except OSError:
        lines = []
    for line in lines:
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if not isinstance(ev, dict) or ev.get("dir") != direction:
            continue
        if ev.get("event") == "log_error" and ev.get("from_ns") is not None:
            found.setdefault(
                ev["from_ns"], Gap(direction, ev["from_ns"], None, error=ev.get("error"))
            )
        elif ev.get("event") == "log_gap" and ev.get("from_ns") is not None:
            found[ev["from_ns"]] = Gap(
                direction, ev["from_ns"], ev.get("to_ns"), ev.get("rows"), ev.get("error")
            )
    try:
        stats = json.loads((d / STATS_FILE).read_text()).get(direction) or {}
    except (OSError, ValueError, AttributeError):
        stats = {}
    for g in stats.get("log_gaps") or []:
        found[g["from_ns"]] = Gap(
            direction, g["from_ns"], g.get("to_ns"), g.get("rows"), g.get("error")
        )
    return sorted(found.values(), key=lambda g: g.from_ns)


def gaps(
    log_dir: str | Path, direction: str, t_ns: Sequence[int], lo_ns: int, hi_ns: int
) -> list[Gap]:
    """What one direction's log lacks from lo_ns to hi_ns, given the start times of the
    rows read there: the spans without rows (with the emulator's reason when it
    reported one over them) and any gap the emulator reported there. [] : whole."""
    step = interval_ns(log_dir)
    reported = [g for g in reported_gaps(log_dir, direction) if g.overlaps(lo_ns, hi_ns)]
    out = []
    for a, b in holes(t_ns, lo_ns, hi_ns, step):
        why = next((g for g in reported if g.overlaps(a, b - 1)), None)
        out.append(Gap(direction, a, b, (b - a) // step, why.error if why else None))
    out += [
        g for g in reported if not any(h.overlaps(g.from_ns, (g.to_ns or hi_ns) - 1) for h in out)
    ]
    return sorted(out, key=lambda g: g.from_ns)


def window_gaps(log_dir: str | Path, direction: str, lo_ns: int, hi_ns: int) -> list[Gap]:
    """The gaps of one direction's log from lo_ns to hi_ns, reading the rows there (all
    of it, if no row of it is left)."""
    try:
        t = read_window(log_dir, direction, lo_ns, hi_ns)["t_ns"]
    except (LogGone, FileNotFoundError):
        return [Gap(direction, lo_ns, hi_ns)]
    return gaps(log_dir, direction, t[t <= hi_ns].tolist(), lo_ns, hi_ns)
