"""`itb clean` after SIGKILL mid-`up`, and bad input that must create nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from itb.backends import local

from .conftest import REPO, itb


def _leftovers() -> dict:
    linkems = subprocess.run(["pgrep", "-f", "linkem --config"], capture_output=True, text=True)
    return {
        "namespaces": local.owned_namespaces(),
        "linkem": [p for p in linkems.stdout.split() if p],
    }


def test_clean_after_sigkill_mid_up(isolated):
    proc = subprocess.Popen(
        [sys.executable, "-m", "itb.cli", "testbed", "up", "--pairs", "6"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=os.environ.copy(),
        start_new_session=True,
    )
    # Kill once the build has started creating namespaces.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len(local.owned_namespaces()) < 3:
        time.sleep(0.005)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert local.owned_namespaces(), "killed too late or never started"
    res = itb("clean")
    assert res.returncode == 0, res.stderr
    assert _leftovers() == {"namespaces": [], "linkem": []}
    assert itb("clean").returncode == 0  # idempotent


def test_clean_after_sigkill_when_up(isolated):
    res = itb("testbed", "up", "--pairs", "1")
    assert res.returncode == 0, res.stderr
    assert _leftovers()["linkem"]
    assert itb("clean").returncode == 0
    assert _leftovers() == {"namespaces": [], "linkem": []}


BAD = {
    "unknown_field": ('[bottleneck]\nrate = "1Gbit"\ncolour = "red"\n', "colour"),
    "negative_rate": ('[bottleneck]\nrate = "-5Mbit"\n', "bottleneck.rate"),
    "unitless_rate": ('[bottleneck]\nrate = "100"\n', "bottleneck.rate"),
    "rtt_too_long": ('[bottleneck]\nrtt = "11s"\n', "bottleneck.rtt"),
    "tiny_buffer": ('[bottleneck]\nbuffer = "100B"\n', "bottleneck.buffer"),
    "unknown_topology": ('[testbed]\ntopology = "torus"\n', "testbed.topology"),
}


def test_bad_input_exit_2_nothing_created(isolated):
    for name, (text, field) in BAD.items():
        path = isolated / f"{name}.toml"
        path.write_text(text)
        res = itb("testbed", "up", str(path))
        assert res.returncode == 2, (name, res.stdout, res.stderr)
        msg = " ".join(res.stderr.split())
        assert str(path.name) in msg and field in msg, (name, msg)
        assert not local.owned_namespaces(), name
    res = itb("testbed", "up", str(REPO / "tests" / "data" / "duplicate-hosts.toml"))
    assert res.returncode == 2 and "duplicate" in res.stderr.lower(), res.stderr
    assert not local.owned_namespaces()
