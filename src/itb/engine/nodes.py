"""The engine's side of the node workers: one control connection per node.

Each worker is started through the node's Host (a namespace here), so everything it
spawns lives on that node. Its events arrive on one queue shared by all workers, in
the order they happen, tagged with the node.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

from itb.backends.host import Host
from itb.errors import BackendError

HELLO_TIMEOUT_S = 30.0


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
        self.proc = host.spawn([sys.executable, "-m", "itb.engine.worker"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env)
        self.lock = threading.Lock()
        self.hello = threading.Event()
        self.pid: int | None = None
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for raw in self.proc.stdout:
            try:
                ev = json.loads(raw)
            except json.JSONDecodeError:
                continue
            if ev.get("ev") == "hello":
                self.pid = ev.get("pid")
                self.hello.set()
                continue
            self.events.put(NodeEvent(self.node, ev))
        self.events.put(NodeEvent(self.node, {"ev": "worker_gone", "t_ns": time.monotonic_ns()}))

    def wait_ready(self, timeout_s: float = HELLO_TIMEOUT_S) -> None:
        if not self.hello.wait(timeout_s):
            err = b""
            if self.proc.poll() is not None:
                err = self.proc.stderr.read()
            raise BackendError(f"worker on {self.node} did not start within {timeout_s:.0f} s: "
                               f"{err.decode(errors='replace')[-300:]}")

    def send(self, **cmd) -> None:
        line = (json.dumps(cmd) + "\n").encode()
        with self.lock:
            try:
                self.proc.stdin.write(line)
                self.proc.stdin.flush()
            except (BrokenPipeError, ValueError) as e:
                raise BackendError(f"worker on {self.node} is gone") from e

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

    def __init__(self, hosts: list[Host]):
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

    def stop_all(self) -> None:
        for w in self.by_node.values():
            try:
                w.send(op="stop")
            except BackendError:
                pass

    def close(self) -> None:
        for w in self.by_node.values():
            w.close()
