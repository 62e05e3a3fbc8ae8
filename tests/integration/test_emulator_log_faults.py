"""A full disk under the link emulator's log, for real: a 16 MB tmpfs mounted over the
testbed's emulator log directory, filled during repetition 2 of a run, then freed. The
emulator keeps forwarding and says what it lost; the repetition that overlapped the gap
fails with the link and the lost span, the others are whole, nothing is left behind.
The mount is removed however the test ends."""

from __future__ import annotations

import contextlib
import errno
import json
import re
import subprocess
import threading
import time
from pathlib import Path

import pandas as pd

from .test_engine import no_namespaces_left
from .test_faults import Engine, itb_processes, scenario, statuses

FULL_FOR_S = 1.5


def fill(directory: Path) -> Path:
    """A file that takes every free byte of the filesystem."""
    path = directory / "filler"
    chunk = b"\0" * (1 << 16)
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                f.write(chunk)
        except OSError as e:
            assert e.errno == errno.ENOSPC, e
    for size in (4096, 1):  # what is left of the last chunk
        try:
            with open(path, "ab", buffering=0) as f:
                while True:
                    f.write(b"\0" * size)
        except OSError:
            pass
    return path


def mounted(path: Path) -> bool:
    return any(
        line.split()[1] == str(path) for line in Path("/proc/self/mounts").read_text().splitlines()
    )


def log_events(log_dir: Path) -> list[dict]:
    out = []
    try:
        lines = (log_dir / "stdout.log").read_text(errors="replace").splitlines()
    except OSError:
        return out
    for line in lines:
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


@contextlib.contextmanager
def small_log_disk(isolated: Path):
    """A 16 MB tmpfs over the test testbed's emulator log directory; unmounted however
    the test ends, and checked gone."""
    logs = isolated / "state" / "itbt" / "emulators"
    logs.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(logs)], check=True)
    try:
        yield logs
    finally:
        if subprocess.run(["umount", str(logs)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(logs)], check=False)
    assert not mounted(logs)


def test_a_full_log_disk_fails_only_the_repetition_it_overlapped(engine_env, isolated):
    with small_log_disk(isolated) as logs:
        sc = scenario(isolated, reps=3, volume="20MB")  # ~4 s of transfers per repetition
        run = isolated / "run"
        e = Engine(["run", str(sc), "--out", str(run)], engine_env)
        try:
            e.wait_for(lambda: (run / "rep-002" / "events.json").exists(), timeout=240)
            time.sleep(1.2)  # past the timeline's zero (1 s of prelude)
            filler = fill(logs)
            full_ns = time.monotonic_ns()
            time.sleep(FULL_FOR_S)
            filler.unlink()
            freed_ns = time.monotonic_ns()
            # the emulator says so, promptly, once it can write again
            gap = None
            while gap is None and time.monotonic_ns() - freed_ns < 1.5e9:
                gap = next(
                    (ev for ev in log_events(logs / "rl-rr") if ev.get("event") == "log_gap"), None
                )
                time.sleep(0.05)
            seen_ns = time.monotonic_ns()
        finally:
            rc = e.finish()
        out = "".join(e.lines)
        assert gap is not None, "no log_gap event within 1.5 s of the disk having room\n" + out
        assert gap["resumed"] is True and gap["rows"] > 100, gap
        assert "No space left on device" in gap["error"], gap
        assert full_ns - 1e9 < gap["from_ns"] < gap["to_ns"] < freed_ns + 1e9, (
            gap,
            full_ns,
            freed_ns,
        )
        assert seen_ns - freed_ns < 1.5e9

        assert rc == 1, out
        assert statuses(run) == ["ok", "failed", "ok"], out
        res = json.loads((run / "rep-002" / "result.json").read_text())
        assert res["status"] == "failed" and res["environment"] is True, res
        reason = res["reason"]
        m = re.fullmatch(
            r"link emulator rl-rr: its log \((ab, forward|ba, reverse)\) lost the "
            r"rows from (-?[\d.]+) s to (-?[\d.]+) s after the repetition's zero "
            r"\((\d+) rows; linkem: No space left on device \(os error 28\)\)"
            r"(; \d+ more gap\(s\))?: the bottleneck series is not whole",
            reason,
        )
        assert m, reason
        lost_from = res["zero_ns"] + float(m.group(2)) * 1e9
        lost_to = res["zero_ns"] + float(m.group(3)) * 1e9
        assert full_ns - 1e9 < lost_from < lost_to < freed_ns + 1e9, (reason, full_ns, freed_ns)
        flat = " ".join(out.split())  # the console wraps long lines
        assert f"repetition 2/3: failed — {reason}" in flat, out
        for r in (1, 3):
            assert json.loads((run / f"rep-00{r}" / "result.json").read_text())["reason"] is None

        # the other repetitions' bottleneck rows are whole; no hole reached the table
        bott = pd.read_parquet(run / "bottleneck.parquet")
        transfers = pd.read_parquet(run / "transfers.parquet")
        em2 = run / "rep-002" / "emulator" / "rl-rr"
        cut = {p.name.split(".")[0][len("linkem-") :] for p in em2.glob("linkem-*.incomplete.csv")}
        assert cut, sorted(p.name for p in em2.iterdir())
        names = {"ab": "forward", "ba": "reverse"}
        for (rep, direction), rows in bott[bott["link"] == "rl-rr"].groupby(
            ["repetition", "direction"]
        ):
            t = rows["t_ns"].to_numpy()
            step = round(rows["interval_s"].median() * 1e9)
            assert set((t[1:] - t[:-1]).tolist()) == {step}, (rep, direction)
            if rep == 2:
                assert direction not in {names[d] for d in cut}, direction
                continue
            mine = transfers[transfers["repetition"] == rep]
            assert t[0] <= mine["start_ns"].min() and t[-1] >= mine["end_ns"].max(), rep
        whole = bott[bott["repetition"] != 2].groupby("repetition")["direction"].nunique()
        assert whole.to_dict() == {1: 2, 3: 2}
        assert transfers[transfers["repetition"] != 2]["ok"].all()
        meta = json.loads((run / "meta.json").read_text())
        assert not [w for w in meta.get("warnings", []) if "analysis failed" in w], meta
        assert no_namespaces_left() and itb_processes(isolated / "state") == []


def test_a_calibration_over_a_log_with_a_hole_does_not_pass(isolated):
    """The disk fills during the TCP test, whose peak-rate check reads the emulator's log:
    that check and the calibration fail, naming the lost rows."""
    from itb.calibration import run as calibration
    from itb.calibration.emulator import LOG_CHECK
    from itb.scenario import load_testbed

    topo = load_testbed(None, {"pairs": 1, "rate": "100Mbit", "rtt": "20ms"})
    opts = calibration.Options(tcp_seconds=5.0, udp_seconds=2.0, pings=20)
    with small_log_disk(isolated) as logs:
        spans: list[tuple[int, int]] = []
        failed: list[BaseException] = []

        def fault():  # inside the TCP test's window: 2 s of ramp are left out
            try:
                time.sleep(3.0)
                filler = fill(logs)
                t = time.monotonic_ns()
                time.sleep(1.0)
                filler.unlink()
                spans.append((t, time.monotonic_ns()))
            except BaseException as e:  # noqa: BLE001 (reported by the test below)
                failed.append(e)

        filler_thread = threading.Thread(target=fault)

        def progress(message: str) -> None:
            if message.startswith("one bulk TCP flow"):
                filler_thread.start()

        cal = calibration.calibrate(topo, opts, progress)
        filler_thread.join()
        assert not failed and spans, failed
        checks = {c.quantity: c for c in cal.checks}
        peak = checks["peak wire rate (100 ms windows)"]
        assert peak.ok is False and peak.cause == "log with a hole", peak
        assert peak.verdict.startswith("log with a hole"), peak.verdict
        assert "the emulator's log (ab, forward) lost the rows from" in peak.detail
        assert "No space left on device" in peak.detail, peak.detail
        whole = checks[LOG_CHECK]
        assert whole.ok is False and whole.measured > 100, whole
        assert not cal.ok
        # the emulator's own account, at exit, says the same
        stats = cal.emulator["stats"]["ab"]
        assert stats["log_rows_lost"] > 100 and stats["log_gaps_total"] >= 1, stats
        g = stats["log_gaps"][0]
        ((full_ns, freed_ns),) = spans
        assert full_ns - 1e9 < g["from_ns"] < g["to_ns"] < freed_ns + 1e9, (g, spans)
        assert no_namespaces_left() and itb_processes(isolated / "state") == []
