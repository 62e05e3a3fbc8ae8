"""The ledger of a service that runs its plans on a testbed (`itb serve --execute`):
plans from `lead` after now to `guard` before the deadline, commits refused once too
late to launch, launched plans that no longer move, and the runs in the store."""

from __future__ import annotations

import pytest

from itb.service.intplan import IntRequest
from itb.service.ledger import Conflict, Ledger, LinkSpec
from itb.service.store import Run, Store

GBIT = 10**9
S = 10**9  # ns per second


def Request(rid, vol, rt, dt, rate, link):
    """A request with its dates in seconds (whole or halves here)."""
    return IntRequest(rid, link, vol, round(rt * S), round(dt * S), int(rate))


def executing(tmp_path, now=0, rate=GBIT) -> Ledger:
    return Ledger(
        Store(tmp_path / "s.db"), [LinkSpec("a", rate)], 0.0, 60.0, now,
        lead_s=5.0, guard_s=0.4, launch_s=3.0,
    )  # fmt: skip


def test_a_plan_starts_lead_after_now_and_ends_guard_before_the_deadline(tmp_path):
    lg = executing(tmp_path)
    # released at 1 s (before now + lead = 5 s), deadline 20 s: 1 Gbit in [5, 19.6]
    rec, _ = lg.quote(Request("x", 125_000_000, 1.0, 20.0, GBIT, "a"), now=0)
    assert rec.plan.segments == ((5 * S, 6 * S, GBIT),)
    # 14.6 s of the link is all the window leaves: 14.7 s of volume is refused
    rec, _ = lg.quote(Request("y", int(14.7 * GBIT / 8), 1.0, 20.0, GBIT, "a"), now=0)
    assert rec.state == "refused" and "leaves 14.600 s" in rec.reason
    rec, _ = lg.quote(Request("z", 1000, 1.0, 5.3, GBIT, "a"), now=0)
    assert rec.state == "refused" and "window ends before a transfer can run" in rec.reason


def test_a_commit_is_refused_once_the_plan_starts_sooner_than_its_launch_needs(tmp_path):
    lg = executing(tmp_path)
    lg.quote(Request("x", 125_000_000, 0.0, 20.0, GBIT, "a"), now=0)  # starts at 5 s
    lg.quote(Request("y", 125_000_000, 0.0, 20.0, GBIT, "a"), now=0)  # starts at 6 s
    assert lg.commit("y", now=1900000000).state == "committed"  # 4.1 s before: in time
    with pytest.raises(Conflict, match="too late to commit"):
        lg.commit("x", now=2500000000)  # 2.5 s before its start, 3 s are needed
    assert lg.get("x", now=2500000000).state == "held"


def test_a_claimed_request_is_launched_once_and_a_cancelled_one_never(tmp_path):
    lg = executing(tmp_path)
    for rid in ("x", "y"):
        lg.quote(Request(rid, 1000, 0.0, 20.0, GBIT, "a"), now=0)
        lg.commit(rid, now=0)
    assert [r.request.id for r in lg.due(until=6000000000)] == ["x", "y"]
    stopped = []
    lg.on_cancel = stopped.append
    assert lg.claim("x") and not lg.claim("x")
    lg.cancel("y", now=1000000000)
    assert not lg.claim("y") and stopped == []  # y was never launched: nothing to stop
    lg.cancel("x", now=1000000000)
    assert stopped == ["x"]
    assert lg.due(until=100000000000) == []


def test_a_capacity_change_keeps_a_launched_plan_whole_and_moves_the_others(tmp_path):
    lg = executing(tmp_path)
    # x: 1 Gbit/s over [5, 15]; y: 1 Gbit/s over [15, 17]
    lg.quote(Request("x", 1_250_000_000, 0.0, 30.0, GBIT, "a"), now=0)
    lg.quote(Request("y", 250_000_000, 0.0, 30.0, GBIT, "a"), now=0)
    for rid in ("x", "y"):
        lg.commit(rid, now=0)
    assert lg.claim("x")
    # at 6 s the link halves: x (launched) keeps its plan, above the new capacity; y,
    # not launched, is placed again from now + lead = 11 s at the 0.5 Gbit/s x leaves
    # free... none until 15 s, then 0.5 Gbit/s: 2 Gbit in 4 s, [15, 19]
    assert lg.set_capacity("a", GBIT // 2, now=6000000000) == []
    assert lg.get("x", now=6000000000).plan.segments == ((5 * S, 15 * S, GBIT),)
    assert lg.get("y", now=6000000000).plan.segments == ((15 * S, 19 * S, GBIT // 2),)


def test_the_store_keeps_each_run_and_a_restart_marks_the_running_ones_interrupted(tmp_path):
    lg = executing(tmp_path)
    for rid in ("x", "y"):
        lg.quote(Request(rid, 1000, 0.0, 20.0, GBIT, "a"), now=0)
        lg.commit(rid, now=0)
        lg.claim(rid)
    lg.ran("x", Run("launched", launched_s=2.0, dir="/runs/1"), 2.0)
    lg.ran("y", Run("done", 2.0, 5.25, 1000, None, "/runs/2"), 6.0)
    assert lg.get("y", now=6000000000).run == Run("done", 2.0, 5.25, 1000, None, "/runs/2")
    store = Store(tmp_path / "s.db")  # the service restarted
    assert store.interrupt_runs(30.0) == ["x"]
    x = store.get("x").run
    assert x.state == "interrupted" and x.reason == "the service stopped while it ran"
    assert store.get("y").run.state == "done"
    again = Ledger(store, [LinkSpec("a", GBIT)], 0.0, 60.0, 30 * S, lead_s=5.0)
    assert again.launched == {"x", "y"}
