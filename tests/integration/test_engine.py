"""`itb run` end to end: real transfers through the emulator, the run directory, failures
of an endpoint, Ctrl-C and --resume. Small volumes; every test cleans up."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd

from itb.analysis.run_results import RunMetrics
from itb.backends import procs

from .conftest import engine_scenario, itb


def write(tmp: Path, reps=1, volume="5MB", duration="30s") -> Path:
    return engine_scenario(tmp / "scenario.toml", reps, volume, "500ms", duration)


def no_namespaces_left():
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return not any(line.startswith("itbt-") for line in out.splitlines())


def test_run_delivers_volumes_and_writes_the_run_directory(engine_env, isolated):
    scenario = write(isolated, reps=2)
    run = isolated / "run"
    res = itb("run", str(scenario), "--out", str(run), env=engine_env, timeout=300)
    assert res.returncode == 0, res.stderr + res.stdout
    meta = json.loads((run / "meta.json").read_text())
    assert meta["status"] == "complete" and meta["repetition_status"] == ["ok", "ok"]
    assert [s["stage"] for s in meta["stages"]][:5] == [
        "preflight",
        "reservation",
        "deployment",
        "configuration",
        "calibration",
    ]
    assert meta["dispatch"]["events"] == 4 and meta["dispatch"]["p99_ms"] < 50
    tr = pd.read_parquet(run / "transfers.parquet")
    assert len(tr) == 4 and tr["ok"].all()
    assert (tr["bytes"] == 5_000_000).all()
    # 5 MB at most 50 Mbit/s (access) cannot take less than 0.8 s
    assert (tr["completion_s"] > 0.8).all() and (tr["completion_s"] < 10).all()
    samples = pd.read_parquet(run / "samples.parquet")
    good = samples[samples["series"] == "goodput"]
    assert good.groupby(["repetition", "transfer"])["bytes"].sum().eq(5_000_000).all()
    assert (samples["series"] == "tcp_info").any()
    bott = pd.read_parquet(run / "bottleneck.parquet")
    fwd = bott[bott["direction"] == "forward"].groupby("repetition")["bytes"].sum()
    assert (fwd > 10_000_000).all()  # both transfers' frames crossed the bottleneck
    metrics = RunMetrics.load(run / "metrics.json")  # checks its format version too
    assert metrics.overall.completion.n == 4
    assert metrics.overall.fair_share.ideal_mean_s > 0
    assert (run / "report" / "report.html").exists()
    assert no_namespaces_left()
    # the report is rebuilt from the directory alone
    (run / "metrics.json").unlink()
    res = itb("report", str(run), env=engine_env)
    assert res.returncode == 0, res.stderr
    again = RunMetrics.load(run / "metrics.json")
    assert again.overall.completion == metrics.overall.completion


def _kill_first_sender(stop: threading.Event, killed: list) -> None:
    """Kill `flow send` on l1 once it has run for a moment."""
    while not stop.is_set():
        for pid in procs.pids_in("itbt-l1"):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if len(cmd) > 1 and cmd[0].endswith(b"flow") and cmd[1] == b"send":
                time.sleep(0.5)
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
        time.sleep(0.05)


def test_killed_endpoint_fails_its_repetition_and_the_next_goes_on(engine_env, isolated):
    scenario = write(isolated, reps=2, volume="20MB")
    run = isolated / "run"
    stop, killed = threading.Event(), []
    killer = threading.Thread(target=_kill_first_sender, args=(stop, killed), daemon=True)
    killer.start()
    t0 = time.monotonic()
    try:
        res = itb("run", str(scenario), "--out", str(run), env=engine_env, timeout=300)
    finally:
        stop.set()
    assert killed, "the sender was never seen"
    assert res.returncode == 1, res.stderr + res.stdout
    r1 = json.loads((run / "rep-001" / "result.json").read_text())
    r2 = json.loads((run / "rep-002" / "result.json").read_text())
    assert r1["status"] == "failed" and "SIGKILL" in r1["reason"] and "bulk.1.send" in r1["reason"]
    assert r1["end_ns"] - r1["zero_ns"] < 15e9  # failed fast, not at the end of the timeline
    assert r2["status"] == "ok"
    tr = pd.read_parquet(run / "transfers.parquet")
    assert not tr[tr["repetition"] == 1]["ok"].all() and tr[tr["repetition"] == 2]["ok"].all()
    assert time.monotonic() - t0 < 200
    assert no_namespaces_left()


def test_ctrl_c_keeps_partial_results_and_resume_finishes(engine_env, isolated):
    scenario = write(isolated, reps=3, volume="5MB")
    run = isolated / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "itb.cli", "run", str(scenario), "--out", str(run)],
        env=engine_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (run / "rep-002" / "events.json").exists():
            time.sleep(0.1)
        assert (run / "rep-002").exists()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    meta = json.loads((run / "meta.json").read_text())
    assert meta["status"] == "incomplete"
    assert meta["repetition_status"][0] == "ok"
    assert meta["repetition_status"][1] in ("interrupted", "ok")
    assert no_namespaces_left()
    res = itb("run", str(scenario), "--out", str(run), "--resume", env=engine_env, timeout=300)
    assert res.returncode == 0, res.stderr
    meta = json.loads((run / "meta.json").read_text())
    assert meta["status"] == "complete" and meta["repetition_status"] == ["ok", "ok", "ok"]
    assert "already done, skipped" in res.stderr
    assert no_namespaces_left()


def test_bad_timeline_is_refused_before_anything_runs(engine_env, isolated):
    path = isolated / "bad.toml"
    engine_scenario(path, 1, "5MB", "500ms")
    path.write_text(path.read_text().replace('dst = ["r1", "r2"]', 'dst = ["r1", "zz"]'))
    run = isolated / "run"
    res = itb("run", str(path), "--out", str(run), env=engine_env)
    assert res.returncode == 2
    assert "bad.toml" in res.stderr and "transfer[0].dst" in res.stderr and "'zz'" in res.stderr
    assert not run.exists() and no_namespaces_left()
