"""What `itb serve --execute` decides before and after a transfer runs: each link's host
pairs, the links a testbed can carry, and a finished job read back as the request's run
(its last byte's date on the wall clock)."""

from __future__ import annotations

import json

import pytest

from itb.engine.outcome import Outcome
from itb.engine.session import JobResult
from itb.errors import ScenarioError
from itb.scenario import load_testbed
from itb.service import execute as ex
from itb.service.intplan import IntRequest
from itb.service.store import Record, Run

TOPO = load_testbed(None)  # 2 pairs, 1 Gbit/s, 20 ms


def test_one_link_takes_every_pair_and_two_links_one_pair_each():
    assert ex.routes(TOPO, ["access"]) == {"access": [("l1", "r1"), ("l2", "r2")]}
    assert ex.routes(TOPO, ["a", "b"]) == {"a": [("l1", "r1")], "b": [("l2", "r2")]}
    with pytest.raises(ScenarioError, match="3 links need as many host pairs"):
        ex.routes(TOPO, ["a", "b", "c"])


def test_a_link_above_the_testbeds_tcp_payload_rate_is_refused():
    # 1 Gbit/s of 1514-byte frames carries 1e9 · 1448 / 1514 = 956 406 869 bit/s of payload
    one = ex.routes(TOPO, ["access"])
    assert ex.check_capacity(TOPO, one, {"access": 956e6}) == pytest.approx(0.020)
    with pytest.raises(ScenarioError, match="carries 956406869 bit/s"):
        ex.check_capacity(TOPO, one, {"access": 957e6})
    # two links through the one bottleneck: their sum counts
    two = ex.routes(TOPO, ["a", "b"])
    ex.check_capacity(TOPO, two, {"a": 478e6, "b": 478e6})
    with pytest.raises(ScenarioError, match="a, b: 1000000000 bit/s"):
        ex.check_capacity(TOPO, two, {"a": 500e6, "b": 500e6})


def job(tmp_path, recv: dict, status="ok", reason=None, offset_ns=0) -> JobResult:
    (tmp_path / "nodes" / "r1").mkdir(parents=True)
    (tmp_path / "events.json").write_text(json.dumps([{"src": "l1", "dst": "r1"}]))
    (tmp_path / "nodes" / "r1" / "transfer.recv.json").write_text(
        json.dumps({"format": 1, "role": "recv", **recv})
    )
    out = Outcome()
    out.clock = {"r1": {"offset_ns": offset_ns}}
    if status != "ok":
        out.fail(reason, status=status)
    return JobResult("x", tmp_path, out)


REC = Record(
    IntRequest("x", "access", 1000, 0, 10 * 10**9, 10**9), "committed", None, None, None, 0, 0,
    Run("launched", launched_s=999.0),
)  # fmt: skip
PAIR = (1000.0, 5_000_000_000)  # wall 1000 s read with engine 5 s


def test_a_whole_transfer_is_done_at_its_last_bytes_date_on_the_wall_clock(tmp_path):
    # the receiver's clock is 1 s ahead of the engine's: its 8.5 s is the engine's 7.5 s,
    # 2.5 s after the pair's reading: 1002.5 on the wall
    res = job(tmp_path, {"ok": True, "bytes": 1000, "last_byte_ns": 8_500_000_000},
              offset_ns=1_000_000_000)  # fmt: skip
    assert ex.outcome_run(REC, res, PAIR) == Run("done", 999.0, 1002.5, 1000, None, str(tmp_path))


def test_a_short_or_stopped_transfer_is_failed_or_interrupted_with_the_reason(tmp_path):
    short = job(tmp_path / "a", {"ok": True, "bytes": 600, "last_byte_ns": 6_000_000_000})
    run = ex.outcome_run(REC, short, PAIR)
    assert run.state == "failed" and run.reason == "received 600 of 1000 bytes"
    assert run.finish_s is None and run.bytes == 600
    stopped = job(
        tmp_path / "b", {"ok": False, "bytes": 10}, "interrupted", "the session was closed"
    )
    run = ex.outcome_run(REC, stopped, PAIR)
    assert run.state == "interrupted" and run.reason == "the session was closed"
