"""What runs on an SSH host during a run: its node worker and, on the emulator host,
linkem (started by a worker of its own, so that it dies with that worker, which dies
when the control connection closes).

`SshNode` is the `Host` of one scenario node placed on an inventory host: commands go
over the host's control connection (through `sudo -n` when its user is not root);
the worker runs from the copy ITB deployed there, records the PID and start time of
everything it starts (for `itb clean --inventory`), and the paths of a spawn are
rewritten to the host's copies of the programs and its log directory.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from itb.backends import clock as C
from itb.backends.host import Completed, json_lines
from itb.backends.ssh.conn import Connection, RemoteProc
from itb.emulation import monitor
from itb.errors import BackendError

WORKER_FILE = "bin/itb-worker.py"  # itb.backends.hostside.worker, copied there
PROCS_FILE = "procs"


@dataclass
class Remote:
    """One inventory host as ITB uses it: its connection, its directory, its privilege."""

    conn: Connection
    dir: str  # ITB's directory there (per prefix)
    sudo: bool = False
    uid: int | None = None  # the SSH user's

    @property
    def name(self) -> str:
        return self.conn.name

    def argv(self, argv: Sequence[str]) -> list[str]:
        out = [str(a) for a in argv]
        return ["sudo", "-n", "--", *out] if self.sudo else out

    def run(self, argv, *, check=True, timeout=60, input=None) -> Completed:
        return self.conn.run(self.argv(argv), check=check, timeout=timeout, input=input)

    def worker_argv(self) -> list[str]:
        return ["python3", f"{self.dir}/{WORKER_FILE}", "--record", f"{self.dir}/{PROCS_FILE}"]


@dataclass
class SshNode:
    """The `Host` of a scenario node on a remote machine."""

    name: str  # the scenario's node
    remote: Remote
    paths: list[tuple[str, str]] = field(default_factory=list)  # local prefix → remote
    same_clock = False

    def run(self, argv, *, check=True, timeout=60, input=None) -> Completed:
        return self.remote.run(argv, check=check, timeout=timeout, input=input)

    def spawn(self, argv, *, stdin=None, stdout=None, stderr=None, env=None) -> RemoteProc:
        return self.remote.conn.process(self.remote.argv(argv))

    @property
    def worker_argv(self) -> list[str]:
        return self.remote.worker_argv()

    def local_to_remote(self, value: str) -> str:
        for lo, re in self.paths:
            if value == lo or value.startswith(lo.rstrip("/") + "/"):
                return re + value[len(lo) :]
        return value

    def rewrite(self, cmd: dict) -> dict:
        out = dict(cmd)
        out["argv"] = [self.local_to_remote(str(a)) for a in cmd["argv"]]
        for k in ("stdout", "stderr"):
            if out.get(k):
                out[k] = self.local_to_remote(out[k])
        return out


class RemoteEmulator:
    """linkem on the emulator host, as the engine's `EmulatorHandle` is used: `send`
    (a runtime change), `death`, and its log directory (a local mirror, `sync_logs`)."""

    ID = "linkem"

    def __init__(
        self, link: str, remote: Remote, config_path: str, log_dir: str, mirror: Path, binary: str
    ):
        self.link, self.remote = link, remote
        self.remote_log_dir = log_dir
        self.log_dir = str(mirror)
        self.clock_offset_ns = 0
        self._events: queue.Queue = queue.Queue()
        self._dead: str | None = None
        self._ready = threading.Event()
        self._hello = threading.Event()
        self._synced: dict[str, int] = {}
        self._clock = C.Replies(
            lambda seq: self._send(op="clock", seq=seq),
            f"host {remote.name}: the emulator's worker",
        )
        self.pid: int | None = None  # linkem's, on the emulator host
        self.proc = remote.conn.process(remote.argv(remote.worker_argv()))
        threading.Thread(target=self._read, daemon=True).start()
        if not self._hello.wait(30):
            raise BackendError(
                f"host {remote.name}: the emulator's worker did not start: "
                f"{self.proc.stderr.read().decode(errors='replace')[-300:]}"
            )
        self._send(
            op="spawn",
            id=self.ID,
            at_ns=0,
            argv=[binary, "--config", config_path],
            stdout=f"{log_dir}/{monitor.EVENTS_FILE}",
            stderr=f"{log_dir}/stderr.log",
            stdin=True,
            ready=True,
            ready_match='"ready"',
        )
        deadline = time.monotonic() + 15
        while not self._ready.is_set() and self._dead is None and time.monotonic() < deadline:
            time.sleep(0.02)
        if not self._ready.is_set():
            why = self._dead or "not ready after 15 s"
            self.close()
            raise BackendError(f"link emulator {link} on host {remote.name}: {why}")

    def _read(self) -> None:
        for ev in json_lines(self.proc.stdout):
            kind = ev.get("ev")
            if kind == "hello":
                self._hello.set()
            elif kind == "clock":
                self._clock.note(ev)
            elif kind == "ready":
                self._ready.set()
            elif kind == "dispatched":
                self.pid = ev.get("pid")
            elif kind == "spawn_failed":
                self._dead = f"could not start: {ev.get('reason')}"
            elif kind == "exited":
                self._dead = f"exit {ev.get('rc')}: {ev.get('stderr_tail', '')[-200:]}"
        if self._dead is None:
            self._dead = f"host {self.remote.name} stopped answering (control connection closed)"

    def _send(self, **cmd) -> None:
        try:
            self.proc.stdin.write((json.dumps(cmd) + "\n").encode())
        except (BrokenPipeError, OSError) as e:
            raise BackendError(f"host {self.remote.name}: emulator control lost ({e})") from None

    def send(self, command: dict) -> None:
        self._send(op="write", id=self.ID, data=json.dumps(command) + "\n")

    def sync_clock(self) -> C.ClockEstimate:
        """The emulator host's clock offset: its log rows are dated on that clock."""
        est = self._clock.estimate()
        self.clock_offset_ns = est.offset_ns
        return est

    def death(self) -> str | None:
        return self._dead

    def cpu_seconds(self) -> float:
        """linkem's CPU time so far (user + system), read on the emulator host."""
        stat = self.remote.run(["cat", f"/proc/{self.pid}/stat"]).stdout
        fields = stat.rsplit(") ", 1)[1].split()
        ticks = int(self.remote.run(["getconf", "CLK_TCK"]).stdout.strip() or 100)
        return (int(fields[11]) + int(fields[12])) / ticks

    def sync_logs(self) -> None:
        """Bring the remote log segments that changed since the last call into the local
        mirror; segments the gathering consumed (deleted from the mirror) go remotely too."""
        mirror = Path(self.log_dir)
        mirror.mkdir(parents=True, exist_ok=True)
        gone = [n for n in self._synced if not (mirror / n).exists()]
        if gone:
            self.remote.run(
                ["rm", "-f", "--", *(f"{self.remote_log_dir}/{n}" for n in gone)], check=False
            )
            for n in gone:
                self._synced.pop(n, None)
        listing = self.remote.run(
            ["find", self.remote_log_dir, "-maxdepth", "1", "-type", "f", "-printf", "%f %s\\n"]
        ).stdout
        for line in listing.splitlines():
            name, _, size = line.rpartition(" ")
            if not name or name == "control" or self._synced.get(name) == int(size):
                continue
            self.remote.conn.get(f"{self.remote_log_dir}/{name}", mirror / name)
            self._synced[name] = int(size)

    def close(self) -> dict | None:
        """Stops linkem (its worker gives it SIGTERM: it writes its statistics) and
        returns those statistics when the host still answers."""
        try:
            self._send(op="quit")
        except BackendError:
            pass
        try:
            self.proc.wait(10)
        except Exception:
            self.proc.kill()
        try:
            text = self.remote.conn.read_text(f"{self.remote_log_dir}/{monitor.STATS_FILE}")
            return json.loads(text) if text else None
        except (BackendError, ValueError):
            return None


def measure_clock(remote: Remote) -> C.ClockEstimate:
    """The host's clock against this machine's, through a worker started for it."""
    proc = remote.conn.process(remote.argv(remote.worker_argv()))
    replies = C.Replies(
        lambda seq: proc.stdin.write((json.dumps({"op": "clock", "seq": seq}) + "\n").encode()),
        f"host {remote.name}: its worker",
    )
    hello, started = threading.Event(), []

    def read():
        for ev in json_lines(proc.stdout):
            if ev.get("ev") == "hello":
                started.append(True)
                hello.set()
            elif ev.get("ev") == "clock":
                replies.note(ev)
        replies.note(None)
        hello.set()  # it ended: no need to wait for a hello

    threading.Thread(target=read, daemon=True).start()
    try:
        if not hello.wait(30) or not started:
            raise BackendError(f"host {remote.name}: its worker did not start")
        return replies.estimate()
    finally:
        proc.kill()
