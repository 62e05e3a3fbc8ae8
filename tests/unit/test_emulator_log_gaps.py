"""Holes in the emulator's log (rows linkem could not write: a full disk) are found, named
and never analysed: the repetition fails as the testbed's fault, its rows stay out of the
bottleneck table, and a calibration check computed over a hole does not pass."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from itb import rundir
from itb.analysis import logs as collect
from itb.calibration.emulator import judge_log, whole
from itb.calibration.record import Calibration
from itb.calibration.verdict import at_most
from itb.emulation import monitor
from itb.engine import records
from itb.engine.outcome import Outcome

MS = 1_000_000
HEADER = ",".join(monitor.FIELDS) + "\n"


def rows(times) -> str:
    return "".join(f"{t},1500,1,0,0,0,0,0,0\n" for t in times)


def emulator_dir(d, ab, ba=None, events=(), stats=None):
    """A log dir as linkem leaves it: config, both live files, events, stats."""
    d.mkdir(parents=True, exist_ok=True)
    (d / monitor.CONFIG_FILE).write_text(json.dumps({"interval_us": 1000}))
    (d / "linkem-ab.csv").write_text(HEADER + rows(ab))
    (d / "linkem-ba.csv").write_text(HEADER + rows(ab if ba is None else ba))
    (d / monitor.EVENTS_FILE).write_text("".join(json.dumps(e) + "\n" for e in events))
    if stats is not None:
        (d / monitor.STATS_FILE).write_text(json.dumps(stats))
    return d


def grid(a_ms: int, b_ms: int) -> list[int]:
    return [t * MS for t in range(a_ms, b_ms)]


def test_holes_are_spans_of_whole_intervals_without_rows():
    t = grid(0, 10)
    assert monitor.holes(t, 0, 9 * MS, MS) == []
    # window edges off the grid: less than one interval uncovered is no hole
    assert monitor.holes(t, MS // 2, 9 * MS + MS // 2, MS) == []
    missing = [x for x in t if x not in (3 * MS, 4 * MS)]
    assert monitor.holes(missing, 0, 9 * MS, MS) == [(3 * MS, 5 * MS)]
    assert monitor.holes(grid(0, 5), 0, 9 * MS, MS) == [(5 * MS, 9 * MS)]  # the tail
    assert monitor.holes(grid(4, 10), 0, 9 * MS, MS) == [(0, 4 * MS)]  # the head
    assert monitor.holes([], 0, 9 * MS, MS) == [(0, 9 * MS)]


def test_the_emulators_reports_are_read_from_its_events_and_stats(tmp_path):
    events = [
        {"event": "ready", "pid": 1},
        {"event": "log_error", "dir": "ab", "from_ns": 5 * MS, "error": "No space"},
        {
            "event": "log_gap",
            "dir": "ab",
            "from_ns": 5 * MS,
            "to_ns": 9 * MS,
            "rows": 4,
            "error": "No space",
            "resumed": True,
        },
        {"event": "log_error", "dir": "ab", "from_ns": 20 * MS, "error": "EIO"},
        {"event": "log_error", "dir": "ba", "from_ns": 1 * MS, "error": "other dir"},
    ]
    d = emulator_dir(tmp_path / "em", grid(0, 30), events=events)
    with open(d / monitor.EVENTS_FILE, "a") as f:
        f.write('{"event":"log_gap","dir":"ab","fr')  # cut by the full disk
    got = monitor.reported_gaps(d, "ab")
    assert got == [
        monitor.Gap("ab", 5 * MS, 9 * MS, 4, "No space"),
        monitor.Gap("ab", 20 * MS, None, None, "EIO"),
    ]  # still open
    (d / monitor.STATS_FILE).write_text(
        json.dumps(
            {
                "ab": {
                    "log_gaps": [{"from_ns": 20 * MS, "to_ns": 25 * MS, "rows": 5, "error": "EIO"}]
                }
            }
        )
    )
    assert monitor.reported_gaps(d, "ab")[1] == monitor.Gap("ab", 20 * MS, 25 * MS, 5, "EIO")


def test_gaps_name_the_missing_rows_with_the_emulators_reason(tmp_path):
    t = grid(0, 5) + grid(9, 30)
    events = [
        {
            "event": "log_gap",
            "dir": "ab",
            "from_ns": 5 * MS,
            "to_ns": 9 * MS,
            "rows": 4,
            "error": "No space left on device (os error 28)",
            "resumed": True,
        }
    ]
    d = emulator_dir(tmp_path / "em", t, events=events)
    g = monitor.gaps(d, "ab", t, 0, 29 * MS)
    assert g == [monitor.Gap("ab", 5 * MS, 9 * MS, 4, "No space left on device (os error 28)")]
    assert monitor.gaps(d, "ab", t, 10 * MS, 29 * MS) == []  # outside the window
    assert monitor.gaps(d, "ba", t, 0, 29 * MS)[0].error is None  # seen, not reported
    # a report over rows that look whole still counts: the emulator knows better
    assert len(monitor.gaps(d, "ab", grid(0, 30), 0, 29 * MS)) == 1
    assert monitor.window_gaps(d, "ab", 0, 29 * MS) == g


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "EMULATOR_LOG_WAIT_S", 0.0)
    r = tmp_path / "run"
    rundir.rep_dir(r, 1).mkdir(parents=True)
    return r


def outcome(start_ms: int, zero_ms: int, end_ms: int) -> Outcome:
    return Outcome(start_ns=start_ms * MS, zero_ns=zero_ms * MS, end_ns=end_ms * MS)


def test_a_whole_log_is_kept_and_the_repetition_stays_ok(run, tmp_path):
    em = emulator_dir(tmp_path / "em", grid(0, 3000))
    out = outcome(100, 600, 2500)
    records.gather_emulator_logs(run, 1, {"rl-rr": SimpleNamespace(log_dir=str(em))}, out)
    assert out.status == "ok", out.reason
    frames = collect.bottleneck_frames(run, 1)
    fwd = next(f for f in frames if (f["direction"] == "forward").all())
    # the rows kept start at 100 ms and run to 2800 ms (300 ms past the end); the table
    # stamps each 1 ms interval with its end
    assert fwd["t_ns"].iloc[0] == 101 * MS and fwd["t_ns"].iloc[-1] == 2801 * MS


def test_a_hole_in_the_window_fails_the_repetition_and_stays_out_of_the_tables(run, tmp_path):
    ab = grid(0, 1400) + grid(1900, 3000)  # 500 rows lost, 0.8 s after the zero
    events = [
        {
            "event": "log_error",
            "dir": "ab",
            "from_ns": 1400 * MS,
            "error": "No space left on device (os error 28)",
        },
        {
            "event": "log_gap",
            "dir": "ab",
            "from_ns": 1400 * MS,
            "to_ns": 1900 * MS,
            "rows": 500,
            "error": "No space left on device (os error 28)",
            "resumed": True,
        },
    ]
    em = emulator_dir(tmp_path / "em", ab, ba=grid(0, 3000), events=events)
    out = outcome(100, 600, 2500)
    records.gather_emulator_logs(run, 1, {"rl-rr": SimpleNamespace(log_dir=str(em))}, out)
    assert out.status == "failed" and out.environment
    assert out.reason == (
        "link emulator rl-rr: its log (ab, forward) lost the rows from 0.800 s to 1.300 s "
        "after the repetition's zero (500 rows; linkem: No space left on device (os error "
        "28)): the bottleneck series is not whole"
    )
    kept = rundir.rep_dir(run, 1) / "emulator" / "rl-rr"
    assert not (kept / "linkem-ab.csv").exists()
    assert (kept / "linkem-ab.incomplete.csv").exists()  # kept to look at, not tabled
    frames = collect.bottleneck_frames(run, 1)
    assert [set(f["direction"]) for f in frames] == [{"reverse"}]


def test_rows_that_never_came_fail_it_too(run, tmp_path):
    """The disk is still full when the repetition is gathered: the rows stop."""
    events = [{"event": "log_error", "dir": "ab", "from_ns": 2000 * MS, "error": "EIO"}]
    em = emulator_dir(tmp_path / "em", grid(0, 2000), ba=grid(0, 3000), events=events)
    out = outcome(100, 600, 2500)
    records.gather_emulator_logs(run, 1, {"rl-rr": SimpleNamespace(log_dir=str(em))}, out)
    assert out.status == "failed" and out.environment
    assert (
        "from 1.400 s to 2.200 s after the repetition's zero (800 rows; linkem: EIO)" in out.reason
    ), out.reason


def test_a_partial_last_line_is_left_out(tmp_path):
    d = emulator_dir(tmp_path / "em", grid(0, 10))
    with open(d / "linkem-ab.csv", "a") as f:
        f.write(f"{10 * MS},15")
    df = monitor.read_window(d, "ab", 0, 20 * MS)
    assert df["t_ns"].tolist() == grid(0, 10) and df["bytes"].dtype == "int64"


def test_a_calibration_check_over_a_hole_does_not_pass(tmp_path):
    em = SimpleNamespace(log_dir=str(emulator_dir(tmp_path / "em", grid(0, 100))))
    window = monitor.between(monitor.direction_log(em.log_dir, "ab", 0, 99 * MS), 0, 99 * MS)
    check = whole(at_most("peak", 100, 90, "Mbit/s"), em, "ab", window, 0, 99 * MS)
    assert check.ok is True
    holed = [r for r in window if not 40 * MS <= r.t_ns < 60 * MS]
    check = whole(at_most("peak", 100, 90, "Mbit/s"), em, "ab", holed, 0, 99 * MS)
    assert check.ok is False and check.verdict.startswith("log with a hole")
    assert (
        "lost the rows from 0.040 s to 0.060 s after the window started (20 rows)" in check.detail
    ), check.detail


def test_rows_the_emulator_reported_lost_fail_the_calibration():
    cal = Calibration(testbed={}, path={})
    judge_log(cal, {"ab": {"log_rows_lost": 0}, "ba": {"log_rows_lost": 0}})
    assert cal.ok
    judge_log(cal, {"ab": {"log_rows_lost": 12}, "ba": {}})
    assert not cal.ok and cal.checks[-1].measured == 12
