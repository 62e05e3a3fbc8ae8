"""The node worker on this machine (no namespace): dispatch at a date, ready, exit, stop."""

from __future__ import annotations

import io
import json
import time

from itb.engine.worker import Worker


def events_of(buf: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in buf.getvalue().splitlines()]


def wait_for(buf, pred, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [e for e in events_of(buf) if pred(e)]
        if found:
            return found[0]
        time.sleep(0.01)
    raise AssertionError(f"no such event in {events_of(buf)}")


def test_spawn_at_a_date_reports_dispatch_ready_and_exit(tmp_path):
    buf = io.StringIO()
    w = Worker(buf)
    at = time.monotonic_ns() + 200_000_000
    w.handle({"op": "spawn", "id": "a", "at_ns": at, "ready": True,
              "argv": ["sh", "-c", "echo ready; echo oops >&2; exit 3"],
              "stdout": str(tmp_path / "a.out"), "stderr": str(tmp_path / "a.err")})
    d = wait_for(buf, lambda e: e["ev"] == "dispatched")
    assert d["at_ns"] == at and 0 <= d["t_ns"] - at < 50_000_000  # generous: shared CI machines
    wait_for(buf, lambda e: e["ev"] == "ready")
    x = wait_for(buf, lambda e: e["ev"] == "exited")
    assert x["rc"] == 3 and x["stderr_tail"] == "oops"
    assert (tmp_path / "a.out").read_text() == "ready\n"


def test_stop_kills_children_and_cancels_pending_spawns(tmp_path):
    buf = io.StringIO()
    w = Worker(buf)
    now = time.monotonic_ns()
    common = {"stdout": str(tmp_path / "o"), "stderr": str(tmp_path / "e")}
    w.handle({"op": "spawn", "id": "long", "at_ns": now, "argv": ["sleep", "30"], **common})
    w.handle({"op": "spawn", "id": "later", "at_ns": now + 500_000_000, "argv": ["true"], **common})
    wait_for(buf, lambda e: e["ev"] == "dispatched" and e["id"] == "long")
    w.handle({"op": "stop"})
    x = wait_for(buf, lambda e: e["ev"] == "exited" and e["id"] == "long")
    assert x["rc"] == -15  # SIGTERM
    wait_for(buf, lambda e: e["ev"] == "cancelled" and e["id"] == "later", timeout=3)
    assert not [e for e in events_of(buf) if e["ev"] == "dispatched" and e["id"] == "later"]


def test_write_reaches_the_child_stdin(tmp_path):
    buf = io.StringIO()
    w = Worker(buf)
    w.handle({"op": "spawn", "id": "cat", "at_ns": 0, "stdin": True, "argv": ["head", "-n", "1"],
              "stdout": str(tmp_path / "o"), "stderr": str(tmp_path / "e")})
    wait_for(buf, lambda e: e["ev"] == "dispatched")
    w.handle({"op": "write", "id": "cat", "data": '{"rate_bps": 1000}\n'})
    wait_for(buf, lambda e: e["ev"] == "exited")
    assert (tmp_path / "o").read_text() == '{"rate_bps": 1000}\n'
