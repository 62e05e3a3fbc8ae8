"""What the link emulator tells a calibration: its log, read once it holds the rows of a
test (`fresh`); a check failed when the log it was computed from has a hole (`whole`); a
failed check when the log lost rows over the whole calibration (`log_whole`) or the
emulator reported rows it could not write (`judge_log`); and its own stats at exit (late
packets, drops, its CPU during the TCP test: `judge_emulator`)."""

from __future__ import annotations

import time

from itb.backends.testbed import Emulator
from itb.calibration.record import Calibration
from itb.calibration.verdict import Check
from itb.emulation import monitor
from itb.scenario.testbed.pathspec import PathSpec

LATE_SHARE_WARN = 0.001
LOG_CHECK = "link emulator's 1 ms log: no rows lost"
LOG_SETTLE_NS = monitor.ROWS_WRITTEN_NS


def fresh(em: Emulator | None, until_ns: int) -> None:
    """The emulator's log once it holds the rows up to `until_ns` (this machine's clock):
    linkem writes a row ~0.1 s after its interval and flushes every 0.1 s, so a log read
    at once lacks the last rows (a "hole" that is not one). A remote emulator's log is
    then copied here."""
    if em is None:
        return
    wait = (until_ns + LOG_SETTLE_NS - time.monotonic_ns()) / 1e9
    if wait > 0:
        time.sleep(wait)
    em.sync_logs()


def whole(
    check: Check, em, direction: str, rows: list[monitor.Interval], lo_ns: int, hi_ns: int
) -> Check:
    """The check, failed if the emulator's log it was computed from has a hole between
    lo_ns and hi_ns: figures from a log with missing rows prove nothing."""
    gaps = monitor.gaps(em.log_dir, direction, [r.t_ns for r in rows], lo_ns, hi_ns)
    if gaps:
        check.ok = False
        check.cause = "log with a hole"
        check.detail = "; ".join(p for p in (check.detail, _gap_text(gaps, lo_ns)) if p)
    return check


def _gap_text(
    gaps: list[monitor.Gap], zero_ns: int, origin: str = " after the window started"
) -> str:
    g = gaps[0]
    more = f", {len(gaps) - 1} more gap(s)" if len(gaps) > 1 else ""
    return (
        f"the emulator's log ({monitor.DIRECTIONS[g.direction]}) lost the rows "
        f"{g.describe(zero_ns, origin)}{more}"
    )


def log_whole(cal: Calibration, em, t0_ns: int, off: int = 0) -> None:
    """A failed check when the emulator's log lost rows between t0_ns and now, in
    either direction: every figure read from it meanwhile (the MTU-size UDP test's
    departures too) may be off. Dates on the emulator's clock (`off`: its offset)."""
    hi = time.monotonic_ns() + off - LOG_SETTLE_NS  # rows are written ~0.2 s after their interval
    time.sleep(LOG_SETTLE_NS / 1e9)
    gaps = [g for d in ("ab", "ba") for g in monitor.window_gaps(em.log_dir, d, t0_ns, hi)]
    if gaps:
        cal.checks.append(
            Check(
                LOG_CHECK,
                0,
                sum(g.rows or 0 for g in gaps),
                "rows",
                None,
                _gap_text(gaps, t0_ns, " after the calibration started"),
                ok=False,
                cause="rows lost",
            )
        )


def judge_log(cal: Calibration, stats: dict) -> None:
    """Rows the emulator itself reported lost (at exit, in its stats) fail the
    calibration too, unless a check already said so."""
    lost = {d: stats.get(d, {}).get("log_rows_lost", 0) for d in ("ab", "ba")}
    if any(lost.values()) and not any(c.quantity == LOG_CHECK for c in cal.checks):
        cal.checks.append(
            Check(
                LOG_CHECK,
                0,
                sum(lost.values()),
                "rows",
                None,
                f"the emulator reported rows it could not write: {lost}",
                ok=False,
                cause="rows lost",
            )
        )


def judge_emulator(cal: Calibration, spec: PathSpec, stats: dict) -> None:
    """The bottleneck emulator's stats at exit: rows it lost (`judge_log`), packets released
    late or dropped, and its CPU during the TCP test, as warnings."""
    if spec.bottleneck is None or spec.bottleneck.name not in stats:
        return
    s = stats[spec.bottleneck.name]
    cal.emulator.update({"stats": s})
    judge_log(cal, s)
    cpu = cal.emulator.get("cpu_pct_during_tcp")
    for name in ("ab", "ba"):
        d = s.get(name, {})
        segs = max(1, d.get("tx_segments", 0))
        if d.get("late_packets", 0) / segs > LATE_SHARE_WARN:
            cal.warnings.append(
                f"link emulator ({name}) released {d['late_packets']} of {segs} packets "
                f"({100 * d['late_packets'] / segs:.2f} %) more than 200 µs late (max lag "
                f"{d.get('max_lag_us', 0) / 1000:.1f} ms): the machine is short of CPU for "
                "this experiment; timings of those packets are off"
            )
        for key, what in (
            ("socket_drops", "dropped at its socket (could not keep up)"),
            ("pool_drops", "dropped for lack of buffer memory"),
        ):
            if d.get(key, 0):
                cal.warnings.append(f"link emulator ({name}) {what}: {d[key]} packets")
    if cpu is not None and cpu > 90.0:
        cal.warnings.append(
            f"link emulator used {cpu:.0f} % of a core during the TCP test: "
            "it may limit the experiment"
        )
