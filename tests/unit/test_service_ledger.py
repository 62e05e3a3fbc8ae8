"""The service's ledger on a store in a temporary directory, its clock given by each call
(integer nanoseconds): holds that expire, retries, refusals that say why, and restarts
that re-plan."""

from __future__ import annotations

import pytest

from itb.service import intplan
from itb.service.intplan import IntRequest
from itb.service.ledger import Conflict, Ledger, LinkSpec
from itb.service.store import Store

GBIT = 10**9
S = 10**9  # ns per second


def ledger(tmp_path, rate=GBIT, margin=0.0, now=0) -> Ledger:
    return Ledger(Store(tmp_path / "s.db"), [LinkSpec("a", rate)], margin, 60.0, now)


def big(rid: str, rt=100) -> IntRequest:
    """1.25 GB in a 10 s window at up to 1 Gbit/s: the whole link for the whole window."""
    return IntRequest(rid, "a", 1_250_000_000, rt * S, (rt + 10) * S, GBIT)


def test_a_hold_keeps_its_capacity_until_it_expires(tmp_path):
    lg = ledger(tmp_path)
    first, new = lg.quote(big("x"), now=0)
    assert new and first.state == "held" and first.expires_ns == 60 * S
    assert first.plan.segments == ((100 * S, 110 * S, GBIT),)
    assert lg.quote(big("y"), now=30 * S)[0].state == "refused"
    # at 60 s x's hold has expired: z gets the window
    assert lg.quote(big("z"), now=60 * S)[0].state == "held"
    assert lg.get("x", now=61 * S).state == "expired"
    with pytest.raises(Conflict):
        lg.commit("x", now=61 * S)


def test_a_retry_gets_the_first_answer_and_another_request_under_its_id_a_conflict(tmp_path):
    lg = ledger(tmp_path)
    rec, _ = lg.quote(big("x"), now=0)
    again, new = lg.quote(big("x"), now=5 * S)
    assert not new and again == rec
    with pytest.raises(Conflict):
        lg.quote(big("x", rt=200), now=5 * S)


def test_a_refusal_says_what_the_window_or_the_link_leaves(tmp_path):
    lg = ledger(tmp_path)
    short = IntRequest("s", "a", 2_500_000_000, 0, 10 * S, GBIT)  # 20 s at 1 Gbit/s
    assert "needs 20.000 s" in lg.quote(short, now=0)[0].reason
    lg.commit(lg.quote(big("x"), now=0)[0].request.id, now=1 * S)
    half = IntRequest("h", "a", 1_250_000_000, 105 * S, 115 * S, GBIT)  # 5 s of it taken by x
    assert "carries 625000000 of the 1250000000 bytes" in lg.quote(half, now=2 * S)[0].reason
    passed = IntRequest("p", "a", 1000, 0, 1 * S, GBIT)
    assert lg.quote(passed, now=2 * S)[0].reason == "the deadline has passed"


def test_a_restart_with_a_larger_margin_replans_and_breaks_what_no_longer_fits(tmp_path):
    lg = ledger(tmp_path)
    for rid in ("x", "y"):  # 500 Mbit/s each over [100, 110]
        r = IntRequest(rid, "a", 625_000_000, 100 * S, 110 * S, 5 * 10**8)
        lg.commit(lg.quote(r, now=0)[0].request.id, now=0)
    lg.store.close()
    # m = 10 %: 900 Mbit/s carries one 500 Mbit/s plan, not two; the first committed stays
    again = ledger(tmp_path, margin=0.1, now=1 * S)
    assert again.broken_at_start == {"a": ["y"]}
    assert again.get("y", now=1 * S).state == "broken"
    assert again.get("x", now=1 * S).state == "committed"
    # and the capacity y left is free again
    z = IntRequest("z", "a", 250_000_000, 100 * S, 110 * S, 2 * 10**8)
    assert again.quote(z, now=2 * S)[0].state == "held"


def test_a_quote_whose_clock_reading_is_older_than_the_last_one_does_not_book_the_past(tmp_path):
    """Requests read the clock before taking the ledger's lock: one may come with a now
    older than the previous one's. x fills the link over [10, 20] s; a quote at 15 s
    forgets the past; then one that read its clock at 12 s must not be planned in
    [12, 15] (taken by x, forgotten by the usage): it is planned from 20 s."""
    lg = ledger(tmp_path)
    lg.commit(
        lg.quote(IntRequest("x", "a", 1_250_000_000, 10 * S, 20 * S, GBIT), 0)[0].request.id, 0
    )
    lg.tick(15 * S)
    late, _ = lg.quote(IntRequest("y", "a", 125_000_000, 10 * S, 30 * S, GBIT), now=12 * S)
    assert late.plan.segments == ((20 * S, 21 * S, GBIT),)
    active = lg.store.active()
    plans = {r.request.id: r.plan for r in active}
    assert intplan.violations({r.request.id: r.request for r in active}, plans, GBIT) == []
