"""`itb serve` as a monitor: every request listed whatever became of it, the schedule page
with its axes, the present and the time zone, and the API's documentation offline —
both pages in headless Chromium without a console error."""

from __future__ import annotations

import re
import subprocess
import time

import httpx

from itb.report.browser import browser


def quote(c: httpx.Client, rid: str, volume="1GB", link="access", start=5.0) -> dict:
    now = time.time()
    body = {"id": rid, "link": link, "volume": volume, "release": now + start,
            "deadline": now + start + 60, "max_rate": "1Gbit"}  # fmt: skip
    r = c.post("/v1/requests", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def chromium(url: str) -> tuple[str, list[str]]:
    """The page's DOM once its scripts ran, and its console messages."""
    res = subprocess.run(
        [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
         "--v=0", "--virtual-time-budget=5000", "--dump-dom", url],
        capture_output=True, text=True, timeout=90,
    )  # fmt: skip
    console = re.findall(r":CONSOLE[^\]]*\]\s*(.*)", res.stderr)
    return res.stdout, console


def test_every_request_is_listed_refused_and_cancelled_ones_included_by_state_and_link(server):
    s = server("--link", "backup=1Gbit")
    with httpx.Client(base_url=s.url) as c:
        assert quote(c, "a")["state"] == "held"
        assert quote(c, "b", volume="100GB")["state"] == "refused"  # 800 s of the link in 60
        assert quote(c, "c")["state"] == "held"
        assert quote(c, "d", link="backup")["state"] == "held"
        c.post("/v1/requests/a/commit")
        c.delete("/v1/requests/c")
        every = c.get("/v1/requests").json()
        assert [(r["id"], r["state"]) for r in every["requests"]] == [
            ("a", "committed"), ("b", "refused"), ("c", "cancelled"), ("d", "held"),
        ]  # fmt: skip
        assert every["next"] is None
        assert every["requests"][1]["reason"].startswith("the volume needs")
        by = lambda q: [r["id"] for r in c.get("/v1/requests", params=q).json()["requests"]]  # noqa: E731
        assert by({"state": "refused"}) == ["b"] and by({"state": "cancelled"}) == ["c"]
        assert by({"link": "backup"}) == ["d"] and by({"link": "access", "state": "held"}) == []
        first = c.get("/v1/requests", params={"limit": 2}).json()
        assert [r["id"] for r in first["requests"]] == ["a", "b"] and first["next"] is not None
        rest = c.get("/v1/requests", params={"limit": 2, "after": first["next"]}).json()
        assert [r["id"] for r in rest["requests"]] == ["c", "d"]
        assert c.get("/v1/requests", params={"state": "lost"}).status_code == 422


def test_the_page_draws_axes_the_present_and_says_utc_without_a_console_error(server):
    s = server()
    with httpx.Client(base_url=s.url) as c:
        for k in range(4):
            quote(c, f"p{k}", volume="2GB", start=5 + 10 * k)
        c.post("/v1/requests/p0/commit")
    dom, console = chromium(s.url + "/")
    assert 'data-loaded="yes"' in dom, dom[-500:]
    assert console == [], console
    assert len(re.findall(r'data-tick="x"[^>]*>\d\d:\d\d:\d\d<', dom)) >= 3  # the time axis
    assert ">1.00 Gbit/s<" in dom and ">0.0 Mbit/s<" in dom  # the rate axis, 0 to B_in
    assert re.search(r'<text[^>]*class="now"[^>]*>now</text>', dom)
    assert "time (UTC) from" in dom and "all times in UTC" in dom
    assert '<g class="committed" data-request="p0">' in dom


def test_the_api_documentation_loads_with_no_network_beyond_the_service(server):
    s = server()
    html = httpx.get(s.url + "/docs").text
    assert re.findall(r'(?:src|href)="(https?:[^"]*)"', html) == []  # nothing from elsewhere
    assert httpx.get(s.url + "/static/swagger/swagger-ui-bundle.js").status_code == 200
    dom, console = chromium(s.url + "/docs")
    assert "/v1/requests" in dom and "swagger-ui" in dom, dom[-500:]
    assert [m for m in console if "rror" in m] == [], console
