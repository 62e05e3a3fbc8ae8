"""`itb study rtt-sweep` and `itb study incremental` end to end on small sweeps (the
documents' sweeps take an hour: docs/studies.md): paced flows
below C each get their C_a, above it they fill the link and share it, and the reports
render with their figures."""

from __future__ import annotations

import json

import pytest

from itb.report.browser import check_page

from .conftest import itb
from .test_engine import no_namespaces_left


def test_rtt_sweep_fills_a_congested_link_and_shares_it(engine_env, isolated):
    out = isolated / "rtt"
    res = itb(
        "study", "rtt-sweep", "--cc", "reno", "--rtt", "20ms", "--flows", "12",
        "--seconds", "5", "--warmup", "1", "--spacing", "0", "--repeat", "1",
        "--capacity", "200Mbit", "--out", str(out), env=engine_env, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr + res.stdout
    (p,) = json.loads((out / "results.json").read_text())["points"]
    # 12 flows paced at 20 Mbit/s offer 1.2 C: the link is full (payload ≈ 0.957 of the
    # wire), each flow below its C_a, the share even
    assert p["c_g"] == pytest.approx(1.2) and len(p["repetitions"][0]["goodputs_bps"]) == 12
    assert 0.9 < p["utilisation"] < 0.96 and p["mean_share"] < 0.8 and p["jain"] > 0.9
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


def test_streams_nodes_of_parallel_streams_keep_their_c_a(engine_env, isolated):
    out = isolated / "streams"
    res = itb(
        "study", "streams", "--cc", "reno", "--streams", "4", "--nodes", "3",
        "--seconds", "5", "--warmup", "1", "--spacing", "0", "--repeat", "1",
        "--capacity", "200Mbit", "--out", str(out), env=engine_env, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr + res.stdout
    (p,) = json.loads((out / "results.json").read_text())["points"]
    # 3 nodes of 4 streams, each node paced at 20 Mbit/s of payload: 60 Mbit/s in all
    assert p["utilisation"] == pytest.approx(0.3, abs=0.005)
    assert p["stream_mean_bps"] == pytest.approx(5e6, rel=0.02) and p["jain"] > 0.999
    assert no_namespaces_left()
    assert (out / "report" / "streams.png").stat().st_size > 0  # (pages: the other studies')


def test_multiplexing_runs_each_k_on_the_same_link(engine_env, isolated):
    out = isolated / "mux"
    res = itb(
        "study", "multiplexing", "--cc", "reno", "--k", "1,2", "--cg", "2", "--r", "0",
        "--transfer-time", "2", "--repeat", "1", "--capacity", "100Mbit",
        "--out", str(out), env=engine_env, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr + res.stdout
    one, two = json.loads((out / "results.json").read_text())["points"]
    assert (one["forward_sources"], two["forward_sources"]) == (2, 4)
    # C_g 2: the sources' volumes (2 s each alone at C_a) need 4.18 s of the link's
    # payload (0.957 of C), so the last ends no sooner; the mean can be lower (one ends
    # early, the others then have more), not below half of it
    for p in (one, two):
        assert p["repetitions"] == 1 and p["failed"] == 0
        assert 3.1 < p["t_mean"] <= p["t_max"] < 6.0 and p["t_max"] > 4.1, p
        assert p["swing"] is not None and 0 < p["swing"] < 0.5  # (3 bins of 1 s: noisy)
    assert two["against_first"]["verdict"] == "inconclusive"  # one repetition: no interval
    assert no_namespaces_left()
