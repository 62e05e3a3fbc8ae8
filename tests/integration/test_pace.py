"""ITB's cgroup sock_ops pacer holds an unmodified program (flow without a rate cap)
to a rate, changed while it sends, over loopback; and leaves nothing behind."""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from itb.backends import cgroup
from itb.backends.host import NetnsHost
from itb.cc import pace

from .conftest import FLOW


@pytest.fixture
def group():
    root = cgroup.hierarchy()
    if root is None:
        pytest.skip("no cgroup v2 hierarchy")
    path = root / f"itbt-pace-{os.getpid()}"
    path.mkdir()
    try:
        yield path
    finally:
        cgroup.kill(path)


def run_flow(tmp_path, group, volume: int, streams: int, port: int) -> dict:
    """flow recv outside the cgroup, flow send (no --rate-bps) inside it."""
    recv = subprocess.Popen(
        [
            str(FLOW),
            "recv",
            "--listen",
            f"127.0.0.1:{port}",
            "--streams",
            str(streams),
            "--bytes",
            str(volume),
            "--log",
            str(tmp_path / "r.csv"),
            "--summary",
            str(tmp_path / "r.json"),
        ],
        stdout=subprocess.PIPE,
    )
    assert recv.stdout.readline().strip() == b"ready"
    send = subprocess.run(
        [
            str(FLOW),
            "send",
            "--to",
            f"127.0.0.1:{port}",
            "--bytes",
            str(volume),
            "--streams",
            str(streams),
            "--log",
            str(tmp_path / "s.csv"),
            "--summary",
            str(tmp_path / "s.json"),
        ],
        preexec_fn=lambda: cgroup.enter(group, os.getpid()),
        timeout=60,
    )
    assert send.returncode == 0 and recv.wait(timeout=10) == 0
    return json.loads((tmp_path / "s.json").read_text())


@pytest.mark.parametrize("streams", [1, 3])
def test_an_unmodified_sender_is_held_to_the_rate(tmp_path, group, streams):
    if not FLOW.exists():
        pytest.skip("flow not built (make native)")
    p = pace.attach(NetnsHost("root", None), group)
    try:
        p.set(80_000_000)
        s = run_flow(tmp_path, group, 40_000_000, streams, 5311 + streams)
        # 40 MB at 80 Mbit/s: 4 s. A socket is paced once its first 64 KiB were
        # acknowledged (and Linux sends its first 10 segments unpaced): on loopback, 3 ×
        # ~80 KB arrive at once
        assert s["goodput_bps"] == pytest.approx(80e6, rel=0.05), s["goodput_bps"]
        time.sleep(0.3)
        assert p.sockets() == 0 and p.open_sockets() == 0  # every socket was seen closing
    finally:
        p.detach()


def test_a_rate_change_reaches_the_sockets_that_are_sending(tmp_path, group):
    import threading

    if not FLOW.exists():
        pytest.skip("flow not built (make native)")
    p = pace.attach(NetnsHost("root", None), group)
    try:
        p.set(40_000_000)
        timer = threading.Timer(1.0, lambda: p.set(160_000_000))
        timer.start()
        # about 1 s at 40 Mbit/s (5 MB, from the sender's start just after the timer's),
        # then 20 MB at 160 Mbit/s: 2 s in all
        s = run_flow(tmp_path, group, 25_000_000, 2, 5320)
        timer.join()
        t = (s["end_ns"] - s["start_ns"]) / 1e9
        assert t == pytest.approx(2.0, rel=0.08), t
    finally:
        p.detach()
