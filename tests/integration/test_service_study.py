"""`itb study service` end to end on a short sweep (the acceptance sweep, 10 repetitions of
the paper's example and a 20-request workload at 100 ms, takes an hour: docs/service.md):
ITB's plans, pauses included, kept by TCP without congestion control, paced with headroom,
meet every deadline. (TS1's transfers are plain ones; its analysis:
tests/unit/test_service_analysis.py.)"""

from __future__ import annotations

import json

from itb.report.browser import check_page

from .conftest import itb
from .test_engine import no_namespaces_left


def test_planned_transfers_meet_their_deadlines(engine_env, isolated):
    out = isolated / "svc"
    res = itb(
        "study", "service", "--workloads", "random", "--policies", "ITB",
        "--rtt", "20ms", "--capacity", "500Mbit", "--requests", "8", "--load", "0.7",
        "--horizon", "10", "--workload-seed", "10", "--guard-rtts", "6", "--repeat", "1",
        "--out", str(out),
        env=engine_env, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr + res.stdout
    cells = {c["name"]: c for c in json.loads((out / "results.json").read_text())["cells"]}
    assert set(cells) == {"random-ITB-nocc"}
    c = cells["random-ITB-nocc"]
    assert c["failed"] == 0 and c["transfers"] == c["admitted"] == 8, c
    assert '"0bit"' in (out / "scenarios" / "random-ITB-nocc.toml").read_text()  # a pause
    # every planned transfer ends before its deadline, within the guard of its plan
    assert c["misses"] == 0 and c["late_max_s"] < 0, c
    assert c["plan_late_p99_s"] < 6 * 0.020, c
    assert no_namespaces_left()
    page = check_page(out / "report" / "report.html")
    assert page.console == [] and page.figures == 1 and page.broken == 0
