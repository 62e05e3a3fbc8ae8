"""The service's planner on workloads small enough to schedule by hand (docs/service.md).

Rates are bit/s and volumes bytes: with a capacity of 8 bit/s a link carries one byte a
second, so the expected dates below are byte counts.
"""

from __future__ import annotations

import pytest

from itb.service import check, exact, greedy, metrics, workload
from itb.service.model import Plan, Request
from itb.service.network import Links, Load
from itb.service.usage import Usage

BYTE_PER_S = 8.0


def req(rid: str, vol: int, rt: float, dt: float, max_rate: float = BYTE_PER_S) -> Request:
    return Request(rid, vol, rt, dt, max_rate)


def test_the_papers_example_as_written_is_refused_by_every_planner_but_ts1():
    """2 × 500 GB by 60 s at 1 Gbit/s needs 8 000 s of the link."""
    big = [Request(f"r{k}", 500_000_000_000, 0.0, 60.0, 1e9) for k in (1, 2)]
    assert not exact.feasible(big, 1e9)
    out, optimum = exact.plan(big, 1e9)
    assert out.plans == {} and optimum.admitted == 0 and optimum.proven
    assert greedy.ts2(big, 1e9).plans == {}
    assert len(greedy.ts1(big, 1e9).plans) == 2  # TS1 takes everything, and misses
    assert metrics.measure(greedy.ts1(big, 1e9), big, 1e9).misses == 2


def test_the_feasible_example_ts2_serialises_and_ts1_shares():
    """2 × 3.4 GB in 60 s at 1 Gbit/s with m = 2.5 %: C = 975 Mbit/s; one alone takes
    3.4e9 · 8 / 975e6 = 27.897 s."""
    two = [Request(f"r{k}", 3_400_000_000, 0.0, 60.0, 1e9) for k in (1, 2)]
    cap = 975e6
    ts2 = greedy.ts2(two, cap)
    assert ts2.plans["r1"].segments[0] == pytest.approx((0.0, 27.8974359, cap))
    assert ts2.plans["r2"].start == pytest.approx(27.8974359)
    assert ts2.plans["r2"].finish == pytest.approx(55.7948718)
    ts1 = greedy.ts1(two, cap)
    assert ts1.plans["r1"].segments[0] == pytest.approx((0.0, 55.7948718, cap / 2))
    m2, m1 = metrics.measure(ts2, two, 1e9), metrics.measure(ts1, two, 1e9)
    assert m2.f1_s == pytest.approx(27.8974359) and m1.f1_s == pytest.approx(55.7948718)
    # the same bytes over the same span: f2 = 6.8e9 · 8 / (1e9 · 55.795) = 0.975 for both
    assert m2.f2 == pytest.approx(0.975) and m1.f2 == pytest.approx(0.975)


def test_edf_beats_ts2_when_a_long_request_comes_first():
    """a fills [0, 10] alone; b and c need [0, 5] and [5, 10]: TS2 (release order) takes a
    and refuses both, EDF takes b then c and refuses a. The optimum is 2."""
    reqs = [req("a", 10, 0, 10), req("b", 5, 0, 5), req("c", 5, 5, 10)]
    assert set(greedy.ts2(reqs, BYTE_PER_S).plans) == {"a"}
    assert set(greedy.edf(reqs, BYTE_PER_S).plans) == {"b", "c"}
    out, optimum = exact.plan(reqs, BYTE_PER_S)
    assert len(out.plans) == 2 and optimum.admitted == 2 and optimum.proven


def test_the_exact_planner_beats_every_greedy_one_where_the_earliest_deadline_blocks():
    """x (10 bytes by 10 s) has the earliest deadline and fills the link; y and z (5 bytes
    each by 11 s) fit together. EDF, ALAP and TS2 take x (1); the MILP takes y and z (2)."""
    reqs = [req("x", 10, 0, 10), req("y", 5, 0, 11), req("z", 5, 0, 11)]
    for policy in (greedy.edf, greedy.alap, greedy.ts2):
        assert set(policy(reqs, BYTE_PER_S).plans) == {"x"}
    out, optimum = exact.plan(reqs, BYTE_PER_S)
    assert set(out.plans) == {"y", "z"} and optimum.admitted == 2
    assert check.violations({r.id: r for r in reqs}, out.plans, BYTE_PER_S) == []


def busy_link(segments) -> Load:
    """One link of BYTE_PER_S that a plan already uses."""
    load = Load(Links.of(BYTE_PER_S))
    load.add(req("busy", 1, 0, 100), segments)
    return load


def test_alap_places_a_request_against_its_deadline():
    load = busy_link(((8.0, 10.0, 4.0),))
    # 3 bytes by 10 s at most 8 bit/s: [8, 10] has 4 bit/s left (1 byte), then [6, 8] full
    segs = load.fill_late(req("n", 3, 0, 10), 0.0, 10.0)
    assert segs == ((6.0, 8.0, 8.0), (8.0, 10.0, 4.0))
    u = Usage([Plan("busy", ((8.0, 10.0, 4.0),))])  # the service's single-link fill
    early = u.fill_early(BYTE_PER_S, 0.0, 10.0, BYTE_PER_S, 24.0)
    assert early == ((0.0, 3.0, 8.0),)
    assert load.fill_early(req("n", 3, 0, 10), 0.0, 10.0) == early


def test_ts2_starts_where_its_constant_rate_fits_all_the_way():
    load = busy_link(((2.0, 4.0, 6.0),))
    # 4 bit/s for 2 s: [0, 2] fits, [2, 4] has 2 bit/s left, so the first fit starts at 0
    assert load.fit_constant(req("n", 1, 0.0, 10.0), 4.0) == ((0.0, 2.0, 4.0),)
    # 4 bit/s for 4 s (2 bytes): starting at 0 runs into [2, 4]; the next start is 4
    assert load.fit_constant(req("n", 2, 0.0, 10.0), 4.0) == ((4.0, 8.0, 4.0),)
    assert load.fit_constant(req("n", 2, 0.0, 6.0), 4.0) is None


def test_fair_shares_give_a_capped_flow_its_cap_and_split_the_rest():
    assert greedy.fair_shares([1.0, 4.0, 4.0], 6.0) == [1.0, 2.5, 2.5]


def test_the_checker_names_each_broken_promise():
    r = {"a": req("a", 5, 0, 10, 4.0), "b": req("b", 5, 0, 10)}
    over = {"a": Plan("a", ((0.0, 10.0, 4.0),)), "b": Plan("b", ((0.0, 5.0, 8.0),))}
    assert [v.split(":")[0] for v in check.violations(r, over, BYTE_PER_S)] == ["capacity"]
    late = {"b": Plan("b", ((6.0, 11.0, 8.0),))}
    assert "after its deadline" in check.violations(r, late, BYTE_PER_S)[0]
    fast = {"a": Plan("a", ((0.0, 5.0, 8.0),))}
    assert "above max-rate" in check.violations(r, fast, BYTE_PER_S)[0]
    short = {"b": Plan("b", ((0.0, 4.0, 8.0),))}
    assert "delivers 4 of 5 bytes" in check.violations(r, short, BYTE_PER_S)[0]


def test_every_policys_plans_on_a_random_workload_pass_the_checker():
    b_in, m = 1e9, 0.025
    reqs = workload.random(7, 40, 1.2, b_in, m)
    by_id = {r.id: r for r in reqs}
    counts = {}
    for name in ("TS2", "EDF", "ALAP"):
        out = greedy.POLICIES[name](reqs, b_in * (1 - m))
        assert check.violations(by_id, out.plans, b_in * (1 - m)) == []
        counts[name] = len(out.plans)
    out, optimum = exact.plan(reqs, b_in * (1 - m))
    assert check.violations(by_id, out.plans, b_in * (1 - m)) == []
    assert len(out.plans) >= max(counts.values()) and len(out.plans) == optimum.admitted


def test_a_profile_reads_back_as_the_plan_it_came_from():
    p = Plan("a", ((0.0, 2.0, 8.0), (3.0, 4.0, 4.0)))
    assert p.profile() == [(0.0, 8.0), (2.0, 0.0), (3.0, 4.0), (4.0, 0.0)]
    assert Plan.of_profile("a", p.profile()) == p


def test_a_shared_bottleneck_limits_requests_on_different_access_links():
    """a and b each fill their own 8 bit/s access link for 10 s; a 12 bit/s bottleneck
    behind both carries one of them, a 16 bit/s one both."""
    from itb.service.network import Links

    reqs = [
        Request("a", 10, 0.0, 10.0, BYTE_PER_S, "site-a"),
        Request("b", 10, 0.0, 10.0, BYTE_PER_S, "site-b"),
    ]
    narrow = Links({"site-a": BYTE_PER_S, "site-b": BYTE_PER_S}, shared=12.0)
    wide = Links({"site-a": BYTE_PER_S, "site-b": BYTE_PER_S}, shared=16.0)
    assert not exact.feasible(reqs, narrow) and exact.feasible(reqs, wide)
    out, optimum = exact.plan(reqs, narrow)
    assert len(out.plans) == 1 and optimum.admitted == 1
    by_id = {r.id: r for r in reqs}
    assert check.violations(by_id, out.plans, narrow) == []
    both = {r.id: Plan(r.id, ((0.0, 10.0, BYTE_PER_S),)) for r in reqs}
    assert check.violations(by_id, both, narrow) == [
        "capacity: 16 bit/s on (shared) at 0.000000 > 12"
    ]
    # EDF on the bottleneck: a (by 5 s) first at the full 8 bit/s, then b after it
    edf_reqs = [
        Request("a", 5, 0.0, 5.0, BYTE_PER_S, "site-a"),
        Request("b", 5, 0.0, 10.0, BYTE_PER_S, "site-b"),
    ]
    plans = greedy.edf(edf_reqs, Links({"site-a": 8.0, "site-b": 8.0}, shared=8.0)).plans
    assert plans["a"].segments == ((0.0, 5.0, 8.0),) and plans["b"].segments == ((5.0, 10.0, 8.0),)


def test_max_min_shares_fill_the_access_link_first_then_the_bottleneck():
    """Two flows on a (8 bit/s), one on b (8 bit/s), all through a 20 bit/s bottleneck:
    all grow to 4, a is full; the b flow grows on to its max-rate 8 (the bottleneck then
    carries 16). With a 12 bit/s bottleneck all three stop at 4."""
    from itb.service.network import SHARED, Links, max_min

    routes = [("a", SHARED), ("a", SHARED), ("b", SHARED)]
    assert max_min(routes, [8.0] * 3, Links({"a": 8.0, "b": 8.0}, shared=20.0)) == [4.0, 4.0, 8.0]
    assert max_min(routes, [8.0] * 3, Links({"a": 8.0, "b": 8.0}, shared=12.0)) == [4.0, 4.0, 4.0]
