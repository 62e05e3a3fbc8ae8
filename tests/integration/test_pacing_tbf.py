"""`enforce = "tbf"` and `itb study pacing-vs-tbf` end to end on a small sweep (the
paper's sweep takes half an hour: docs/studies.md): two flows from one host limited
to R in all, by a token bucket on its egress or by pacing, both near the fair ideal."""

from __future__ import annotations

import json

from itb.report.browser import check_page

from .conftest import itb
from .test_engine import no_namespaces_left


def test_a_token_bucket_and_pacing_both_hold_a_hosts_two_flows_to_its_limit(engine_env, isolated):
    out = isolated / "ptbf"
    res = itb(
        "study", "pacing-vs-tbf", "--cc", "reno", "--rtt", "10ms", "--patterns",
        "2flows-1host", "--socket-buffer", "4MB", "--capacity", "200Mbit", "--limit",
        "100Mbit", "--transfer-time", "2", "--repeat", "1", "--out", str(out),
        env=engine_env, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr + res.stdout
    cells = {c["mechanism"]: c for c in json.loads((out / "results.json").read_text())["cells"]}
    # ideal: 25 MB each at 50 Mbit/s of frames (4.18 s); unlimited, the two flows would
    # share the 200 Mbit/s bottleneck and take half that (slowdown 0.5): the limit binds
    # them. Paced, each is held to its 50 Mbit/s. With the bucket they share 100 Mbit/s as
    # their windows decide, and one that gets ahead ends early, the other then has all of
    # it: at the extreme one after the other, (2.09 + 4.18) / 2 / 4.18 = 0.75 of the ideal.
    for mech, low in (("tbf", 0.75), ("pacing", 0.9)):
        c = cells[mech]
        assert c["failed"] == 0 and c["repetitions"] == 1
        assert low < c["slowdown"] < 1.15, (mech, c["slowdown"])
        assert c["jain"] > 0.9, (mech, c["jain"])
    # the bucket's host: its egress shaped at 100 Mbit/s, the senders not paced
    resolved = json.loads(
        (
            out / "cells" / "reno-rtt10-buf4000000-2flows-1host-tbf" / "scenario.resolved.json"
        ).read_text()
    )
    (l1,) = [
        lk
        for lk in resolved["topology"]["links"]
        if lk["kind"] == "access" and lk["a"]["node"] == "l1"
    ]
    assert l1["forward"]["rate_bps"] == 100_000_000
    assert no_namespaces_left()
    page = check_page(out / "report" / "report.html")
    assert page.console == [] and page.figures == 2 and page.broken == 0
