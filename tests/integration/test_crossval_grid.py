"""`itb study crossval --grid tiny` end to end: each point of the grid on the testbed and
in ns-3, compared with the verdicts' tests named (docs/simulation.md; the simulated
side alone: tests/sim/test_crossval_grid.py)."""

from __future__ import annotations

import json

import pytest

from .conftest import itb
from .test_engine import no_namespaces_left


def test_crossval_on_the_tiny_grid_compares_each_point_emulated_and_simulated(engine_env, isolated):
    pytest.importorskip("ns3", reason="simulation needs the ns3 package (make setup)")
    out = isolated / "grid"
    res = itb(
        "study", "crossval", "--grid", "tiny", "--cc", "reno", "--models", "none",
        "--repeat", "2", "--seconds", "1", "--out", str(out), env=engine_env, timeout=600,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr + res.stdout
    r = json.loads((out / "results.json").read_text())
    got = {(c["scenario"], c["measure"]): c for c in r["comparisons"]}
    assert {s for s, _ in got} == {"tiny-cap", "tiny-stagger"}
    # two capped flows (5 Mbit/s each on 20 Mbit/s) never meet: both sides ~1 s each,
    # within T_mean's ±10 % by the equivalence test, their spreads both under 1 %
    cap = got["tiny-cap", "t_mean_s"]
    assert cap["within"] and cap["interval"] is not None and cap["untested"] is None
    assert got["tiny-cap", "cov"]["within"]
    assert 0.95 < cap["emulated"]["mean"] < 1.05 and 0.95 < cap["simulated"]["mean"] < 1.05
    assert cap["overlap_test"]  # what the intervals' overlap tests, named
    assert no_namespaces_left()
    assert (out / "report" / "report.html").exists()
