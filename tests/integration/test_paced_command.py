"""Unmodified programs held to a rate profile by ITB's cgroup sock_ops pacer, through
the emulated WAN: a `[[command]]` with `profile` (GridFTP as RR-6874 used it, and
iperf3), measured at the bottleneck; nothing of the pacer is left afterwards."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from itb.analysis.fairshare import tcp_payload_share
from itb.analysis.run_results import RunMetrics
from itb.analysis.steps import step_rates
from itb.backends import cgroup

from .conftest import REPO, itb

GRIDFTP = REPO / "scenarios" / "profile" / "gridftp-three-steps.toml"


def measured_steps(run: Path, proc: str, steps_s: list[tuple[float, float]]):
    res = json.loads((run / "rep-001" / "result.json").read_text())
    assert res["status"] == "ok", res["reason"]
    p = res["procs"][proc]
    b = pd.read_parquet(run / "bottleneck.parquet")
    fwd = b[(b["link"] == "rl-rr") & (b["direction"] == "forward")]
    steps = [(round(at * 1e6), round(rate)) for at, rate in steps_s]
    # the last step is measured until 0.2 s before the program ended
    rates = step_rates(
        fwd, p["dispatched_ns"], steps, tcp_payload_share(1500), p["exited_ns"] - 200_000_000
    )
    paces = [d for d in res["dispatch"] if d["kind"] == "pace"]
    return rates, paces


def nothing_left() -> None:
    """The testbed's cgroup (and the commands' inside it) removed, no pacer loaded."""
    root = cgroup.for_testbed()
    assert root is None or not root.exists(), list(root.iterdir())
    progs = json.loads(
        subprocess.run(
            ["bpftool", "-j", "prog", "show"], capture_output=True, text=True, check=True
        ).stdout
    )
    assert not [p for p in progs if p.get("name") == "itb_pace"], "a pacer is still loaded"


@pytest.mark.skipif(
    shutil.which("globus-url-copy") is None or shutil.which("globus-gridftp-server") is None,
    reason="GridFTP not installed (make system-deps)",
)
def test_gridftp_follows_a_three_step_profile(engine_env, isolated):
    run = isolated / "run"
    res = itb("run", str(GRIDFTP), "--out", str(run), env=engine_env, timeout=300)
    assert res.returncode == 0, res.stderr + res.stdout
    rates, paces = measured_steps(run, "gridftp.command", [(0, 200e6), (4, 600e6), (8, 300e6)])
    # Measured: 0.998, 0.999, 1.000 of each step's wire rate, from 1 s after each date
    for r in rates:
        assert r.ratio == pytest.approx(1.0, abs=0.03), rates
    assert len(paces) == 2 and all(d["error_ns"] < 50_000_000 for d in paces), paces
    out = (run / "rep-001" / "nodes" / "l1" / "gridftp.command.out").read_text()
    assert "550000000 bytes" in out
    # the run's own account of it: metrics.json and what `itb run` printed
    m = RunMetrics.load(run / "metrics.json")
    (kept,) = m.profiles
    assert (kept.event, kept.kind, kept.direction) == ("gridftp", "command", "forward")
    assert [round(s.ratio, 4) for s in kept.steps] == [round(r.ratio, 4) for r in rates]
    assert "profile of command gridftp, repetition 1" in res.stdout
    nothing_left()


IPERF3 = """
[testbed]
name = "iperf3-profile"
[dumbbell]
pairs = 1
[bottleneck]
rate = "500Mbit"
rtt = "20ms"
[experiment]
duration = "30s"

[[command]]
id = "server"
host = "r1"
argv = ["iperf3", "-s", "-1"]
wait = false

[[command]]
id = "client"
host = "l1"
at = "1s"
argv = ["iperf3", "-c", "198.18.2.1", "-P", "2", "-n", "150M"]
profile = [[0, "150Mbit"], [3, "350Mbit"]]
cc = "cubic"
"""


def test_iperf3_held_to_a_two_step_profile(engine_env, isolated):
    """iperf3's control connection shares its data connections' port: the pacer counts
    a socket once 64 KiB of it were acknowledged, so the two data streams share each
    step and the control connection is left alone."""
    sc = isolated / "iperf3.toml"
    sc.write_text(IPERF3)
    run = isolated / "run"
    res = itb("run", str(sc), "--out", str(run), env=engine_env, timeout=300)
    assert res.returncode == 0, res.stderr + res.stdout
    rates, paces = measured_steps(run, "client.command", [(0, 150e6), (3, 350e6)])
    for r in rates:
        assert r.ratio == pytest.approx(1.0, abs=0.03), rates
    assert len(paces) == 1
    nothing_left()


def test_a_paced_command_is_refused_without_its_program(engine_env, isolated):
    sc = isolated / "bad.toml"
    sc.write_text(IPERF3.replace('"iperf3", "-c"', '"no-such-program-itb", "-c"'))
    res = itb("run", str(sc), "--out", str(isolated / "run"), env=engine_env)
    assert res.returncode == 4, res.stderr
    assert "no-such-program-itb" in res.stderr
    assert not (isolated / "run").exists()
    nothing_left()


def test_a_killed_engine_leaves_no_pacer_after_clean(engine_env, isolated):
    """SIGKILL while an iperf3 is held to its profile: the command's cgroup (inside the
    testbed's) and the program attached to it go with `itb clean`."""
    from .test_faults import Engine

    sc = isolated / "iperf3.toml"
    sc.write_text(IPERF3.replace('"-n", "150M"', '"-n", "400M"'))
    root = cgroup.for_testbed()
    e = Engine(["run", str(sc), "--out", str(isolated / "run")], engine_env)
    try:
        e.wait_for(
            lambda: (
                root is not None
                and (root / "pace-client").exists()
                and cgroup.members(root / "pace-client") != []
            ),
            timeout=120,
        )
        e.proc.kill()
    finally:
        e.finish()
    assert (root / "pace-client").exists()  # what the test is about: left by the kill
    res = itb("clean", env=engine_env)
    assert res.returncode == 0, res.stderr
    nothing_left()
