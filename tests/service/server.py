"""A real `itb serve` on loopback for the service's tests: started as a subprocess, waited
for until it answers, stopped (SIGKILL by the fixture, whatever the test did)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ITB = Path(sys.executable).parent / "itb"
GBIT = 10**9
MARGIN = 0.025


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, db: Path, *args: str, rate: str = "1Gbit", **popen) -> None:
        self.db, self.port = db, free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        argv = [
            str(ITB),
            "serve",
            "--db",
            str(db),
            "--link",
            f"access={rate}",
            "--port",
            str(self.port),
            *args,
        ]
        self.proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **popen
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"itb serve exited {self.proc.returncode}: {self.proc.stdout.read()}"
                )
            try:
                if httpx.get(self.url + "/v1/links", timeout=1).status_code in (200, 401):
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        self.proc.kill()  # not left behind: the fixture only knows the servers that answered
        self.proc.wait()
        raise AssertionError("itb serve did not answer within 20 s")

    def stop(self, sig: int = signal.SIGTERM) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.communicate(timeout=10)[0]
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.communicate()[0]


@pytest.fixture
def server(tmp_path):
    started: list[Server] = []

    def start(*args: str, db: Path | None = None, **kw) -> Server:
        s = Server(db or tmp_path / "service.db", *args, **kw)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop(signal.SIGKILL)
