"""Integration tests build real namespaces and move real bytes: root and a built linkem.

Every test runs under its own prefix and state directory, and cleans up even on failure.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LINKEM = REPO / "native" / "target" / "release" / "linkem"
FLOW = REPO / "native" / "target" / "release" / "flow"


def pytest_collection_modifyitems(config, items):
    reason = None
    if os.geteuid() != 0:
        reason = "needs root for network namespaces"
    elif not LINKEM.exists():
        reason = "linkem not built (make native)"
    elif shutil.which("iperf3") is None:
        reason = "iperf3 not installed (make system-deps)"
    if reason:
        for item in items:
            if "integration" in str(item.fspath):
                item.add_marker(pytest.mark.skip(reason=reason))


LOCK = Path("/run/lock/itb-integration-tests.lock")


@pytest.fixture(scope="session", autouse=True)
def one_integration_run_at_a_time():
    """Two test runs on one machine would meet on the same prefixes, namespaces and lab
    networks (and skew each other's timings): a second run waits for the first."""
    if os.geteuid() != 0:
        yield
        return
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(LOCK, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(
                f"\nwaiting for another integration test run ({LOCK})",
                file=sys.__stderr__,
                flush=True,
            )
            fcntl.flock(f, fcntl.LOCK_EX)
        yield


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """A private prefix and state dir; everything is removed afterwards, pass or fail."""
    monkeypatch.setenv("ITB_PREFIX", "itbt")
    monkeypatch.setenv("ITB_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("ITB_LINKEM", str(LINKEM))
    from itb import cc
    from itb.backends import local

    try:
        yield tmp_path
    finally:
        local.clean()
        cc.clean()  # struct_ops congestion controls a test (or a killed run) registered


@pytest.fixture
def engine_env(isolated, monkeypatch):
    """`isolated`, plus the flow binary: the environment of an `itb run` subprocess."""
    if not FLOW.exists():
        pytest.skip("flow not built (make native)")
    monkeypatch.setenv("ITB_FLOW", str(FLOW))
    env = os.environ.copy()
    env.update(
        {"ITB_PREFIX": "itbt", "ITB_STATE_DIR": str(isolated / "state"), "ITB_FLOW": str(FLOW)}
    )
    return env


def itb(*args, env=None, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "itb.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env or os.environ.copy(),
    )


def ssh_env(prefix: str, state: Path) -> dict:
    """The environment of `itb` commands on an SSH lab under `prefix`."""
    env = os.environ.copy()
    env.update(
        {
            "ITB_PREFIX": prefix,
            "ITB_STATE_DIR": str(state),
            "ITB_FLOW": str(FLOW),
            "ITB_LINKEM": str(LINKEM),
        }
    )
    return env


@contextmanager
def lab_up(d: Path, prefix: str, hosts: int, control_net: str, *extra: str):
    """An SSH lab (`itb lab up`, `extra`: more of its options) in d/lab under `prefix`, on
    a control network of its own (a lab the user has up, 198.19.1, is left alone); yields
    (inventory, env, the `lab up` result). Afterwards its hosts are cleaned and it is
    taken down, pass or fail."""
    if os.geteuid() != 0 or not FLOW.exists() or not LINKEM.exists():
        pytest.skip("needs root and the native programs")
    if not Path("/usr/sbin/sshd").exists():
        pytest.skip("openssh-server not installed (make system-deps)")
    env = ssh_env(prefix, d / "state")
    res = itb(
        "lab",
        "up",
        "--hosts",
        str(hosts),
        "--dir",
        str(d / "lab"),
        "--control-net",
        control_net,
        *extra,
        env=env,
    )
    assert res.returncode == 0, res.stderr
    inv = d / "lab" / "inventory.toml"
    try:
        yield inv, env, res
    finally:
        itb("clean", "--inventory", str(inv), "--force", env=env)
        res = itb("lab", "down", "--dir", str(d / "lab"), env=env)
        assert res.returncode == 0, res.stderr
        left = subprocess.run(["ip", "netns"], capture_output=True, text=True).stdout
        assert f"{prefix}lab-" not in left


def calibrate_over_ssh(testbed: Path, inventory: Path, env: dict, out: Path, udp_s: str = "2"):
    """`itb calibrate TESTBED --inventory …` with short tests (2 s of TCP, `udp_s` of each
    UDP test); asserts it exits 0 and returns its calibration.json."""
    res = itb(
        "calibrate",
        str(testbed),
        "--inventory",
        str(inventory),
        "--json",
        str(out),
        "--tcp-seconds",
        "2",
        "--udp-seconds",
        udp_s,
        env=env,
        timeout=300,
    )
    cal = json.loads(out.read_text()) if out.exists() else None
    assert res.returncode == 0 or (cal and late_bursts_only(cal)), res.stdout + res.stderr
    return cal


PEAK_CHECK = "peak wire rate (100 ms windows)"
PEAK_WINDOW_US = 100_000
UDP_CHECK = "UDP at 1.2 × rate: "
UDP_DELIVERED = UDP_CHECK + "delivered to the receiver (frames)"
UDP_DEPARTURES = UDP_CHECK + "emulator departures"


def late_bursts_only(cal: dict) -> bool:
    """Every failed check is one the emulator's own stats explain (it says when it was
    late: its warning stays in the calibration; on a quiet machine the checks hold; make
    test runs the unit and simulation jobs on the same cores):
    - the peak wire rate: a packet released L late moves from its 100 ms window to the
      next, which then holds up to L more of the rate (configured · (1 + L / 100 ms));
    - a UDP rate (delivered, or the emulator's departures) off by at most the share of
      packets the emulator released late: an emulator short of CPU falls behind its
      schedule by those packets, and the receiver's window counts some that were due in
      the one before (measured 2026-12-07: 1.98 % short with 2.29 % late; 1.53 % over
      with 1.90–2.40 % late); or short because the emulator, late, sent less, when the
      receiver got what it sent (within 0.5 % of the rate)."""
    failed = [c for c in cal["checks"] if c["ok"] is False]
    stats = [d for d in cal["emulator"].get("stats", {}).values() if isinstance(d, dict)]
    lag_us = max((d.get("max_lag_us", 0) for d in stats), default=0)
    late = max(
        (d.get("late_packets", 0) / d["tx_segments"] for d in stats if d.get("tx_segments")),
        default=0.0,
    )

    udp = {
        c["quantity"]: c["measured"] for c in cal["checks"] if c["quantity"].startswith(UDP_CHECK)
    }
    departures, delivered = udp.get(UDP_DEPARTURES), udp.get(UDP_DELIVERED)

    def explained(c: dict) -> bool:
        if c["quantity"] == PEAK_CHECK:
            return c["measured"] <= c["configured"] * (1 + lag_us / PEAK_WINDOW_US)
        if not c["quantity"].startswith(UDP_CHECK):
            return False
        if abs(c["measured"] - c["configured"]) <= c["configured"] * late:
            return True
        # an emulator that was late and sent less than its rate, and a receiver that got
        # what it sent: the shortfall is the emulator's, starved of CPU (the tool says so);
        # the path measured is right (seen 2026-12-07: departures 2.62 % short, delivered
        # 2.98 %, 0.90 % of packets late by up to 13.2 ms)
        return (
            late > 0
            and departures is not None
            and delivered is not None
            and departures <= c["configured"]
            and abs(delivered - departures) <= 0.005 * c["configured"]
        )

    return bool(failed) and all(explained(c) for c in failed)


ENGINE_SCENARIO = """
[testbed]
name = "engine-test"
[dumbbell]
pairs = 2
access_rate = "50Mbit"
[bottleneck]
rate = "100Mbit"
rtt = "20ms"

[experiment]
repetitions = {reps}
duration = "{duration}"

[[transfer]]
id = "bulk"
src = ["l1", "l2"]
dst = ["r1", "r2"]
spacing = "{spacing}"
volume = "{volume}"
"""


def engine_scenario(
    path: Path, reps: int, volume: str, spacing: str, duration: str = "30s", extra: str = ""
) -> Path:
    """The engine tests' scenario: two pairs through a 100 Mbit/s dumbbell, `reps`
    repetitions of one bulk transfer of `volume` per pair, `spacing` apart (+ `extra`)."""
    path.write_text(
        ENGINE_SCENARIO.format(reps=reps, volume=volume, spacing=spacing, duration=duration) + extra
    )
    return path
