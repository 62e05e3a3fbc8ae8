"""The engine's side of the node workers: one control connection per node.

Each worker is started through the node's Host (a namespace here, an SSH host there),
so everything it spawns lives on that node. Its events arrive on one queue shared by all
workers, in the order they happen, tagged with the node.

A remote node has its own clock: before each repetition the engine measures its offset
(`sync_clocks`, NTP-style exchanges over the control connection) and from then on
converts every date it sends into the node's clock and every date it receives back
into its own, so the rest of the engine sees one clock. A host may also rewrite the
paths of a spawn (`host.rewrite(cmd)`: its programs and log directory live elsewhere).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from itb.backends import clock as C
from itb.backends.clock import ClockEstimate
from itb.backends.host import Host, json_lines
from itb.errors import BackendError

HELLO_TIMEOUT_S = 30.0
CLOCK_TIMEOUT_S = 5.0
_TIME_KEYS = ("t_ns", "spawned_ns", "at_ns")


@dataclass
class NodeEvent:
    node: str
    event: dict


class WorkerHandle:
    def __init__(self, host: Host, events: queue.Queue):
        self.node = host.name
        self.events = events
        # It dies with this process (and kills what it started): nothing of a run
        # outlives a killed engine.
        env = {**os.environ, "ITB_DIE_WITH_PARENT": str(os.getpid())}
        argv = getattr(host, "worker_argv", None) or [
            sys.executable,
            "-m",
            "itb.backends.hostside.worker",
        ]
        self.rewrite = getattr(host, "rewrite", None)
        remote = getattr(host, "remote", None)
        # in messages: on which machine (an SSH host), doing what
        self.where = (
            ""
            if remote is None
            else (f" (host {remote.name} stopped answering: its control connection closed)")
        )
        self.who = f"worker on {self.node}" + ("" if remote is None else f" (host {remote.name})")
        self.same_clock = getattr(host, "same_clock", True)
        self.offset_ns = 0  # the node's clock minus the engine's
        self.clock = C.SAME if self.same_clock else None
        self._clock = C.Replies(
            lambda seq: self.send(op="clock", seq=seq), self.who, CLOCK_TIMEOUT_S
        )
        self.proc = host.spawn(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        stdin, stdout, stderr = self.proc.stdin, self.proc.stdout, self.proc.stderr
        assert stdin is not None and stdout is not None and stderr is not None  # (pipes)
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self.lock = threading.Lock()
        self.hello = threading.Event()
        self.pid: int | None = None
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for ev in json_lines(self.stdout):
            if ev.get("ev") == "hello":
                self.pid = ev.get("pid")
                self.hello.set()
                continue
            if ev.get("ev") == "clock":
                self._clock.note(ev)
                continue
            for k in _TIME_KEYS:
                if isinstance(ev.get(k), int):
                    ev[k] -= self.offset_ns
            self.events.put(NodeEvent(self.node, ev))
        self.events.put(NodeEvent(self.node, {"ev": "worker_gone", "t_ns": time.monotonic_ns()}))

    def wait_ready(self, timeout_s: float = HELLO_TIMEOUT_S) -> None:
        if not self.hello.wait(timeout_s):
            err = b""
            if self.proc.poll() is not None:
                err = self.stderr.read()
            raise BackendError(
                f"worker on {self.node} did not start within {timeout_s:.0f} s: "
                f"{err.decode(errors='replace')[-300:]}"
            )

    def sync_clock(self) -> ClockEstimate:
        """Measures the node's clock offset (not for a local namespace: same clock)."""
        if self.same_clock:
            return C.SAME  # (self.clock, for good)
        self.offset_ns = 0
        self.clock = self._clock.estimate()
        self.offset_ns = self.clock.offset_ns
        return self.clock

    def send(self, **cmd) -> None:
        if self.rewrite is not None and cmd.get("op") == "spawn":
            cmd = self.rewrite(cmd)
        if isinstance(cmd.get("at_ns"), int) and cmd["at_ns"] > 0:
            cmd["at_ns"] += self.offset_ns
        line = (json.dumps(cmd) + "\n").encode()
        with self.lock:
            try:
                self.stdin.write(line)
                self.stdin.flush()
            except (BrokenPipeError, ValueError) as e:
                raise BackendError(f"{self.who} is gone") from e

    def close(self, timeout_s: float = 5.0) -> None:
        """Ask the worker to stop its children and exit; kill it if it does not."""
        try:
            self.send(op="quit")
        except BackendError:
            pass
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Workers:
    """All node workers of a testbed, started together."""

    def __init__(self, hosts: Sequence[Host]):
        self.events: queue.Queue[NodeEvent] = queue.Queue()
        self.by_node: dict[str, WorkerHandle] = {}
        try:
            for h in hosts:
                self.by_node[h.name] = WorkerHandle(h, self.events)
            for w in self.by_node.values():
                w.wait_ready()
        except BaseException:
            self.close()
            raise

    def __getitem__(self, node: str) -> WorkerHandle:
        return self.by_node[node]

    def sync_clocks(self) -> dict[str, ClockEstimate]:
        return {node: w.sync_clock() for node, w in self.by_node.items()}

    def next_event(self, timeout_s: float) -> NodeEvent | None:
        """The next event of any worker, or None after timeout_s without one."""
        try:
            return self.events.get(timeout=timeout_s)
        except queue.Empty:
            return None

    def stop_all(self) -> None:
        for w in self.by_node.values():
            try:
                w.send(op="stop")
            except BackendError:
                pass

    def close(self) -> None:
        for w in self.by_node.values():
            w.close()
