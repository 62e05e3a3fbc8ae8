"""`itb study rtt-sweep` and `itb study incremental` end to end on small sweeps (the
documents' sweeps take an hour: docs/rtt-sweep.md, docs/incremental.md): paced flows
below C each get their C_a, and the reports render with their figures."""

from __future__ import annotations

import json

import pytest

from itb.report.browser import check_page

from .conftest import itb
from .test_engine import no_namespaces_left


def test_rtt_sweep_gives_each_flow_its_c_a_without_congestion(engine_env, isolated):
    out = isolated / "rtt"
    res = itb(
        "study", "rtt-sweep", "--cc", "reno", "--rtt", "20ms", "--flows", "2,12",
        "--seconds", "5", "--warmup", "1", "--repeat", "1", "--capacity", "200Mbit",
        "--out", str(out), env=engine_env, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr + res.stdout
    points = {p["flows"]: p for p in json.loads((out / "results.json").read_text())["points"]}
    # 2 flows paced at 20 Mbit/s on 200 Mbit/s: each gets its pacing rate, shared equally
    assert points[2]["mean_share"] == pytest.approx(1.0, abs=0.01)
    assert points[2]["jain"] == pytest.approx(1.0, abs=0.001)
    # 12 flows offer 1.2 C: the link is full (payload ≈ 0.957 of the wire) and below C_a each
    assert 0.9 < points[12]["utilisation"] < 0.96 and points[12]["mean_share"] < 0.8
    assert no_namespaces_left()
    page = check_page(out / "report" / "report.html")
    assert page.console == [] and page.figures == 2 and page.broken == 0


def test_incremental_steps_follow_the_fair_ideal_below_c(engine_env, isolated):
    out = isolated / "inc"
    res = itb(
        "study", "incremental", "--cc", "cubic", "--rtt", "11ms", "--flows", "3",
        "--period", "2", "--repeat", "1", "--capacity", "200Mbit",
        "--out", str(out), env=engine_env, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr + res.stdout
    (cell,) = json.loads((out / "results.json").read_text())["cells"]
    # k flows paced at C/10: utilisation k/10 of C, each newest flow at its C_a
    for k, step in enumerate(cell["steps"], start=1):
        assert step["ideal"] == pytest.approx(k / 10)
        assert step["utilisation"] == pytest.approx(k / 10, abs=0.005)
        assert step["newest_share"] == pytest.approx(1.0, abs=0.02)
    assert len(cell["series"]) == 1 and max(cell["series"][0]["t_s"]) == pytest.approx(6.0)
    assert no_namespaces_left()
    page = check_page(out / "report" / "report.html")
    assert page.console == [] and page.figures == 2 and page.broken == 0
