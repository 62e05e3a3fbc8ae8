"""The session's rules for jobs running together on one testbed, with scripted node
workers: receivers first, senders at their dates once the receivers are ready, a job
done when its processes exit, a failing one cancelled (and only it), its records
committed, its events told apart from another job's by their prefix."""

from __future__ import annotations

import queue
import threading
import time

from itb.engine.nodes import NodeEvent
from itb.engine.session import Job, Session, wall_to_engine
from itb.rundir.layout import read_json
from itb.scenario import load_testbed
from itb.scenario.scenario import timeline_on

TOPO = load_testbed(None)


class Worker:
    def __init__(self, node: str, sent: list):
        self.node, self.sent, self.where = node, sent, ""

    def send(self, **cmd) -> None:
        self.sent.append((self.node, cmd))


class Workers:
    def __init__(self):
        self.sent: list = []
        self.by_node = {h.name: Worker(h.name, self.sent) for h in TOPO.hosts()}
        self.events: queue.Queue = queue.Queue()

    def __getitem__(self, node):
        return self.by_node[node]

    def next_event(self, timeout_s):
        try:
            return self.events.get(timeout=timeout_s)
        except queue.Empty:
            return None

    def ev(self, node, **event):
        event.setdefault("t_ns", time.monotonic_ns())
        if event["ev"] == "dispatched":  # on time
            event.update(at_ns=event["t_ns"], spawned_ns=event["t_ns"], pid=1)
        self.events.put(NodeEvent(node, event))

    def spawned(self, ident):
        return [cmd for _, cmd in self.sent if cmd.get("op") == "spawn" and cmd["id"] == ident]

    def ops(self, op):
        return [cmd["id"] for _, cmd in self.sent if cmd.get("op") == op]


class Testbed:
    topology, name, emulators = TOPO, "fake", {}

    def cc_names(self):
        return {}

    def prepare(self, rd):
        pass

    def gather(self, rd, end_ns=0):
        return []


def transfers(*pairs):
    data = {
        "transfer": [
            {"id": f"t{k}", "src": s, "dst": d, "at": "0s", "volume": "1MB", "cc": "reno"}
            for k, (s, d) in enumerate(pairs)
        ]
    }
    return timeline_on(TOPO, data, "test")


def started(tmp_path):
    done: list = []
    sc = transfers(("l1", "r1"))
    s = Session(sc, Testbed(), tmp_path, done.append)
    s.workers = w = Workers()
    s._thread = threading.Thread(target=s._loop, daemon=True)
    s._thread.start()
    return s, w, done


def wait_for(pred, timeout_s=5.0):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.01)
    raise AssertionError("timed out")


def job(name, zero_in_s, end_in_s, *pairs):
    now = time.monotonic_ns()
    events = list(transfers(*pairs).experiment.events)
    return Job(name, events, now + int(zero_in_s * 1e9), now + int(end_in_s * 1e9))


def exit_all(w, prefix, ids, rc=0):
    for ident, node in ids:
        w.ev(node, ev="dispatched", id=prefix + ident)
        w.ev(node, ev="exited", id=prefix + ident, rc=rc)


def test_a_job_sends_its_senders_at_its_zero_once_its_receivers_are_ready(tmp_path):
    s, w, done = started(tmp_path)
    j = job("a", 1.0, 10.0, ("l1", "r1"))
    rd = s.submit(j)
    assert [c["at_ns"] for c in w.spawned("j1/t0.recv")] == [0]  # at once
    assert w.spawned("j1/t0.send") == []
    w.ev("r1", ev="ready", id="j1/t0.recv")
    wait_for(lambda: w.spawned("j1/t0.send"))
    assert w.spawned("j1/t0.send")[0]["at_ns"] == j.zero_ns  # (its `at` is 0 s)
    exit_all(w, "j1/", [("t0.recv", "r1"), ("t0.send", "l1")])
    wait_for(lambda: done)
    assert done[0].name == "a" and done[0].outcome.status == "ok" and w.ops("cancel") == []
    assert read_json(rd / "result.json")["job"] == "a"
    s._closing.set()


def test_a_job_whose_receiver_is_not_ready_in_time_fails_alone_and_is_cancelled(tmp_path):
    s, w, done = started(tmp_path)
    late = s.submit(job("late", 0.3, 10.0, ("l1", "r1")))
    ok = s.submit(job("ok", 1.0, 10.0, ("l2", "r2")))
    w.ev("r2", ev="ready", id="j2/t0.recv")
    wait_for(lambda: done)
    assert done[0].name == "late" and "receivers not ready" in done[0].outcome.reason
    assert w.ops("cancel") == ["j1/t0.recv", "j1/t0.send"] and w.spawned("j1/t0.send") == []
    exit_all(w, "j2/", [("t0.recv", "r2"), ("t0.send", "l2")])
    wait_for(lambda: len(done) == 2)
    assert done[1].name == "ok" and done[1].outcome.status == "ok"
    assert late.name == "000001" and ok.name == "000002"
    s._closing.set()


def test_a_failing_sender_stops_its_receiver_and_a_cancel_interrupts_a_job(tmp_path):
    s, w, done = started(tmp_path)
    s.submit(job("a", 0.6, 10.0, ("l1", "r1")))
    s.submit(job("b", 0.6, 10.0, ("l2", "r2")))
    w.ev("r1", ev="ready", id="j1/t0.recv")
    w.ev("r2", ev="ready", id="j2/t0.recv")
    wait_for(lambda: w.spawned("j2/t0.send"))
    w.ev("l1", ev="dispatched", id="j1/t0.send")
    w.ev("l1", ev="exited", id="j1/t0.send", rc=1, stderr_tail="connection refused")
    wait_for(lambda: "j1/t0.recv" in w.ops("cancel"))
    w.ev("r1", ev="exited", id="j1/t0.recv", rc=-15)
    wait_for(lambda: done)
    assert (
        done[0].name == "a" and "exited with code 1: connection refused" in done[0].outcome.reason
    )
    s.cancel("b")
    wait_for(lambda: "j2/t0.send" in w.ops("cancel"))
    exit_all(w, "j2/", [("t0.recv", "r2"), ("t0.send", "l2")], rc=-15)
    wait_for(lambda: len(done) == 2)
    assert done[1].outcome.status == "interrupted"
    assert done[1].outcome.reason == "cancelled by its client"
    s._closing.set()


def test_a_wall_clock_date_maps_to_the_engine_clock_through_one_pair_of_readings():
    # read together: wall 1000.0 s, engine 5e9 ns; 2.5 s later on the wall
    assert wall_to_engine(1002.5, (1000.0, 5_000_000_000)) == 7_500_000_000
