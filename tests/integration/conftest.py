"""Integration tests build real namespaces and move real bytes: root and a built linkem.

Every test runs under its own prefix and state directory, and cleans up even on failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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
    env.update({"ITB_PREFIX": "itbt", "ITB_STATE_DIR": str(isolated / "state"),
                "ITB_FLOW": str(FLOW)})
    return env


def itb(*args, env=None, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "itb.cli", *args], capture_output=True,
                          text=True, timeout=timeout, env=env or os.environ.copy())
