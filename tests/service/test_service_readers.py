"""A link with thousands of plans and clients reading its schedule in a loop: the
schedule's answer is bounded (the first 200 plans by start, with the total), and quotes
keep being answered while it is read (issue 42: at 14–20 k plans five readers made the
quotes' p50 6.4 s; bench/service_readers.py measures 20 000)."""

from __future__ import annotations

import asyncio
import statistics

import httpx

from tests.service import readers


def test_the_schedule_of_three_thousand_plans_is_bounded_and_readers_do_not_stall_quotes(
    server, tmp_path
):
    db = tmp_path / "service.db"
    readers.fill(db, 3000)
    s = server(db=db, rate="10Gbit")
    sched = httpx.get(s.url + "/v1/links/access/schedule", timeout=30).json()
    assert len(sched["requests"]) == 200 and sched["truncated"], sched["total"]
    assert 2900 <= sched["total"] <= 3000  # (a few refused when the link was full)
    starts = [r["start"] for r in sched["requests"]]
    assert starts == sorted(starts) and len(sched["usage"]) <= 4 * 200 + 2
    page = httpx.get(s.url + "/v1/links/access/schedule", params={"limit": 5000}, timeout=30)
    assert len(page.json()["requests"]) == sched["total"]
    quotes, reads = asyncio.run(readers.measure(s.url, 3, 60))
    assert reads >= 10
    assert statistics.median(quotes) < 0.25, sorted(quotes)[::10]
