"""`itb serve` as clients meet it: a real uvicorn process on loopback, real HTTP clients
(httpx) under load, its SQLite store read back and re-checked by the planner's checker,
a SIGKILL in the middle, and its page in headless Chromium."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import httpx

from itb.service import intplan
from itb.service.store import Store
from tests.service.server import GBIT, ITB, MARGIN


def body(rid: str, rng: random.Random, now: float) -> dict:
    release = now + rng.uniform(1, 3600)  # an hour's capacity: about half of it admitted
    return {
        "id": rid, "link": "access", "volume": int(rng.uniform(50e6, 2e9)),
        "release": release, "deadline": release + rng.uniform(20, 120),
        "max_rate": rng.choice(["1Gbit", "500Mbit", 250e6]),
    }  # fmt: skip


async def load(
    url: str, clients: int, per_client: int, seed: int, answers: dict, stop_after: int | None = None
):
    """`clients` concurrent clients, each submitting `per_client` requests, committing 60 %
    of what is held and cancelling one commitment in ten. `answers[id]` is the last answer
    the client got for it (state, profile)."""
    now = time.time()
    done = {"commits": 0}

    async def client(k: int) -> None:
        rng = random.Random(seed * 1000 + k)
        async with httpx.AsyncClient(base_url=url, timeout=30) as c:
            for j in range(per_client):
                rid = f"c{k:02d}-{j:03d}"
                try:
                    r = await c.post("/v1/requests", json=body(rid, rng, now))
                    assert r.status_code == 201, r.text
                    answers[rid] = r.json()
                    if r.json()["state"] == "held" and rng.random() < 0.6:
                        r = await c.post(f"/v1/requests/{rid}/commit")
                        assert r.status_code == 200, r.text
                        answers[rid] = r.json()
                        done["commits"] += 1
                        if rng.random() < 0.1:
                            answers[rid] = {**answers[rid], "cancel_sent": True}
                            r = await c.delete(f"/v1/requests/{rid}")
                            assert r.status_code == 200 and r.json()["state"] == "cancelled"
                            answers[rid] = r.json()
                except httpx.TransportError:
                    if stop_after is None:
                        raise
                    return  # the server was killed

    await asyncio.gather(*(client(k) for k in range(clients)))


def rows(db: Path) -> list[tuple]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        return c.execute("SELECT * FROM requests ORDER BY id").fetchall()


def checked_store(db: Path, rate_bps: int = GBIT) -> list:
    """Every held and committed plan in the store, re-verified by the (exact) checker."""
    store = Store(db)
    try:
        active = store.active()
        reqs = {r.request.id: r.request for r in active}
        plans = {r.request.id: r.plan for r in active}
        assert all(p is not None for p in plans.values())
        assert intplan.violations(reqs, plans, intplan.planning_cap(rate_bps, MARGIN)) == []
        return store.all()
    finally:
        store.close()


def test_fifty_clients_submitting_a_thousand_requests_never_double_book_the_link(server, tmp_path):
    s = server()
    answers: dict = {}
    t0 = time.monotonic()
    asyncio.run(load(s.url, 50, 20, 1, answers))
    took = time.monotonic() - t0
    assert len(answers) == 1000
    # every answer is what the service now says about the request
    with httpx.Client(base_url=s.url) as c:
        for rid, ans in answers.items():
            now = c.get(f"/v1/requests/{rid}").json()
            assert (now["state"], now["profile"]) == (ans["state"], ans["profile"]), rid
    assert not any(a.get("cancel_sent") and a["state"] != "cancelled" for a in answers.values())
    states = {a["state"] for a in answers.values()}
    assert {"refused", "held", "committed", "cancelled"} <= states  # the load exercised them all
    s.stop()
    records = checked_store(s.db)
    assert len(records) == 1000
    print(f"1000 requests from 50 clients in {took:.1f} s; states {sorted(states)}")


def test_a_service_killed_mid_load_loses_no_commitment_and_shows_nothing_half_written(server):
    s = server()
    answers: dict = {}

    async def kill_when_loaded():
        task = asyncio.create_task(load(s.url, 50, 40, 2, answers, stop_after=0))
        until = time.monotonic() + 60
        while sum(a["state"] == "committed" for a in list(answers.values())) < 150:
            assert time.monotonic() < until and not task.done(), (
                "the load did not reach 150 commits"
            )
            await asyncio.sleep(0.02)
        s.proc.send_signal(signal.SIGKILL)
        await task

    asyncio.run(kill_when_loaded())
    s.stop(signal.SIGKILL)
    committed = {rid: a for rid, a in answers.items() if a["state"] == "committed"}
    assert len(committed) >= 150
    again = server()
    with httpx.Client(base_url=again.url) as c:
        for rid, ans in committed.items():
            now = c.get(f"/v1/requests/{rid}").json()
            # a cancel sent when the service died may or may not have been done
            states = {"committed", "cancelled"} if ans.get("cancel_sent") else {"committed"}
            assert now["state"] in states and now["profile"] == ans["profile"], rid
    again.stop()
    for rec in checked_store(again.db):  # every row reads back whole
        assert (rec.plan is not None) == (rec.state not in ("refused",)), rec


def test_bad_requests_are_answered_422_naming_the_field_and_change_nothing(server):
    s = server()
    now = time.time()
    good = {
        "id": "ok",
        "link": "access",
        "volume": "1GB",
        "release": now + 5,
        "deadline": now + 60,
        "max_rate": "1Gbit",
    }
    with httpx.Client(base_url=s.url) as c:
        assert c.post("/v1/requests", json=good).status_code == 201
        before = rows(s.db)
        bad = {
            "volume": {**good, "id": "b1", "volume": "3.5Gb"},
            "max_rate": {**good, "id": "b2", "max_rate": "100MB"},
            "deadline": {**good, "id": "b3", "deadline": now},
            "link": {**good, "id": "b4", "link": "elsewhere"},
            "id": {**good, "id": "../x"},
            "release": {**good, "id": "b5", "release": "tomorrow"},
            "colour": {**good, "id": "b6", "colour": "red"},
        }
        for field, b in bad.items():
            r = c.post("/v1/requests", json=b)
            assert r.status_code == 422, (field, r.text)
            assert field in json.dumps(r.json()["detail"]), (field, r.text)
        missing = {k: v for k, v in good.items() if k != "volume"} | {"id": "b7"}
        r = c.post("/v1/requests", json=missing)
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "volume"]
        assert rows(s.db) == before
        # the same id again: the same answer; with another body: a conflict
        first = c.get("/v1/requests/ok").json()
        r = c.post("/v1/requests", json=good)
        assert r.status_code == 200 and r.json() == first
        assert c.post("/v1/requests", json={**good, "volume": "2GB"}).status_code == 409
        assert c.post("/v1/requests/nope/commit").status_code == 404
        assert rows(s.db) == before


def test_a_lower_capacity_after_a_restart_replans_and_names_the_commitments_it_breaks(server):
    s = server()
    now = time.time()
    with httpx.Client(base_url=s.url) as c:
        for k in range(3):  # each needs 300 Mbit/s over its whole 100 s window
            b = {"id": f"r{k}", "link": "access", "volume": 3_750_000_000, "release": now + 10,
                 "deadline": now + 110, "max_rate": "300Mbit"}  # fmt: skip
            assert c.post("/v1/requests", json=b).json()["state"] == "held"
            assert c.post(f"/v1/requests/r{k}/commit").json()["state"] == "committed"
    s.stop()
    # 1 Gbit/s → 900 Mbit/s: C = 877.5 Mbit/s carries two of the three 300 Mbit/s plans;
    # then 500 Mbit/s (C = 487.5) one
    again = server(rate="900Mbit")
    with httpx.Client(base_url=again.url) as c:
        assert c.get("/v1/links").json()["broken_at_start"] == {"access": ["r2"]}
        assert c.get("/v1/requests/r2").json()["state"] == "broken"
        assert c.get("/v1/requests/r0").json()["state"] == "committed"
        r = c.put("/v1/links/access", json={"rate": "500Mbit"})
        assert r.json()["broken"] == ["r1"]
    again.stop()
    checked_store(again.db, 500 * 10**6)


def test_a_service_bound_beyond_loopback_needs_a_token_and_checks_it(server, tmp_path):
    res = subprocess.run(
        [str(ITB), "serve", "--db", str(tmp_path / "x.db"), "--link", "a=1Gbit", "--host", "0.0.0.0"],
        capture_output=True, text=True, env={k: v for k, v in os.environ.items() if k != "ITB_SERVICE_TOKEN"},
    )  # fmt: skip
    assert res.returncode == 2 and "--token" in res.stderr
    assert not (tmp_path / "x.db").exists()
    s = server("--token", "sesame")
    assert httpx.get(s.url + "/v1/links").status_code == 401
    ok = httpx.get(s.url + "/v1/links", headers={"Authorization": "Bearer sesame"})
    assert ok.status_code == 200


def test_the_schedule_page_shows_every_committed_request_in_chromium(server):
    from itb.report.browser import browser

    s = server()
    now = time.time()
    with httpx.Client(base_url=s.url) as c:
        for k in range(6):
            b = {"id": f"p{k}", "link": "access", "volume": "1GB", "release": now + 5 * k,
                 "deadline": now + 5 * k + 60, "max_rate": "1Gbit"}  # fmt: skip
            assert c.post("/v1/requests", json=b).json()["state"] == "held"
            if k % 2 == 0:
                c.post(f"/v1/requests/p{k}/commit")
    res = subprocess.run(
        [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=4000",
         "--dump-dom", s.url + "/"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    dom = res.stdout
    assert 'data-loaded="yes"' in dom, res.stderr[-2000:]
    for k in range(6):
        state = "committed" if k % 2 == 0 else "held"
        assert f'<g class="{state}" data-request="p{k}">' in dom
    assert dom.count("<rect") >= 12  # a window and at least one bar per request
