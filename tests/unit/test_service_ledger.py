"""The service's ledger on a store in a temporary directory, its clock given by each call:
holds that expire, retries, refusals that say why, and restarts that re-plan."""

from __future__ import annotations

import pytest

from itb.service.ledger import Conflict, Ledger, LinkSpec
from itb.service.model import Request
from itb.service.store import Store

GBIT = 1e9


def ledger(tmp_path, rate=GBIT, margin=0.0, now=0.0) -> Ledger:
    return Ledger(Store(tmp_path / "s.db"), [LinkSpec("a", rate)], margin, 60.0, now)


def big(rid: str, rt=100.0) -> Request:
    """1.25 GB in a 10 s window at up to 1 Gbit/s: the whole link for the whole window."""
    return Request(rid, 1_250_000_000, rt, rt + 10.0, GBIT, "a")


def test_a_hold_keeps_its_capacity_until_it_expires(tmp_path):
    lg = ledger(tmp_path)
    first, new = lg.quote(big("x"), now=0.0)
    assert new and first.state == "held" and first.expires_s == 60.0
    assert first.plan.segments == ((100.0, 110.0, GBIT),)
    assert lg.quote(big("y"), now=30.0)[0].state == "refused"
    # at 60 s x's hold has expired: z gets the window
    assert lg.quote(big("z"), now=60.0)[0].state == "held"
    assert lg.get("x", now=61.0).state == "expired"
    with pytest.raises(Conflict):
        lg.commit("x", now=61.0)


def test_a_retry_gets_the_first_answer_and_another_request_under_its_id_a_conflict(tmp_path):
    lg = ledger(tmp_path)
    rec, _ = lg.quote(big("x"), now=0.0)
    again, new = lg.quote(big("x"), now=5.0)
    assert not new and again == rec
    with pytest.raises(Conflict):
        lg.quote(big("x", rt=200.0), now=5.0)


def test_a_refusal_says_what_the_window_or_the_link_leaves(tmp_path):
    lg = ledger(tmp_path)
    short = Request("s", 2_500_000_000, 0.0, 10.0, GBIT, "a")  # 20 s at 1 Gbit/s
    assert "needs 20.000 s" in lg.quote(short, now=0.0)[0].reason
    lg.commit(lg.quote(big("x"), now=0.0)[0].request.id, now=1.0)
    half = Request("h", 1_250_000_000, 105.0, 115.0, GBIT, "a")  # 5 s of it taken by x
    assert "carries 625000000 of the 1250000000 bytes" in lg.quote(half, now=2.0)[0].reason
    passed = Request("p", 1000, 0.0, 1.0, GBIT, "a")
    assert lg.quote(passed, now=2.0)[0].reason == "the deadline has passed"


def test_a_restart_with_a_larger_margin_replans_and_breaks_what_no_longer_fits(tmp_path):
    lg = ledger(tmp_path)
    for rid in ("x", "y"):  # 500 Mbit/s each over [100, 110]
        r = Request(rid, 625_000_000, 100.0, 110.0, 5e8, "a")
        lg.commit(lg.quote(r, now=0.0)[0].request.id, now=0.0)
    lg.store.close()
    # m = 10 %: 900 Mbit/s carries one 500 Mbit/s plan, not two; the first committed stays
    again = ledger(tmp_path, margin=0.1, now=1.0)
    assert again.broken_at_start == {"a": ["y"]}
    assert again.get("y", now=1.0).state == "broken"
    assert again.get("x", now=1.0).state == "committed"
    # and the capacity y left is free again
    assert (
        again.quote(Request("z", 250_000_000, 100.0, 110.0, 2e8, "a"), now=2.0)[0].state == "held"
    )
