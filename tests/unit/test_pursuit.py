"""Profile calibration: the sweep's plan, and the samples read from a run's tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import tomli_w

from itb.errors import ScenarioError
from itb.scenario.scenario import load_scenario
from itb.study.profile_calibration.analysis import calibration_samples
from itb.study.profile_calibration.args import CalibrationArgs
from itb.study.profile_calibration.plan import cell_doc, sweep_of
from itb.study.pursuit import gap_s

ARGS = CalibrationArgs(
    cc="nocc",
    enforce="pacing",
    rtts_ms=(0.0, 100.0),
    inputs=(100_000_000, 500_000_000, 900_000_000),
    seconds=8.0,
    capacity=1_000_000_000,
    linear_max=0.9,
    repeat=2,
    seed=1,
)


def test_one_cell_per_rtt_with_one_constant_profile_per_input(tmp_path):
    sw = sweep_of(ARGS, tmp_path / "cal")
    assert [c.name for c in sw.cells] == ["rtt0ms", "rtt100ms"]
    doc, inputs = cell_doc(ARGS, 100.0)
    assert inputs == {"x1": 100_000_000, "x2": 500_000_000, "x3": 900_000_000}
    path = tmp_path / "c.toml"
    path.write_text(tomli_w.dumps(doc))
    sc = load_scenario(path)  # the generated scenario is valid
    ev = sorted(sc.experiment.events, key=lambda e: e.at_us)
    assert [e.profile for e in ev] == [((0, x),) for x in ARGS.inputs_bps]
    assert [e.volume for e in ev] == [x * 8 // 8 for x in ARGS.inputs_bps]  # 8 s at X
    assert all(e.cc == "nocc" and e.enforce == "pacing" for e in ev)
    # starts gap_s apart: each transfer has half again its time, 1 s and 5 RTTs to end
    assert np.diff([e.at_us for e in ev]).tolist() == [round(gap_s(8.0, 100.0) * 1e6)] * 2
    assert gap_s(8.0, 100.0) == pytest.approx(12 + 1 + 0.5)
    assert sc.experiment.repetitions == 2 and sc.topology.links[0].forward.delay_us == 50_000


def test_inputs_above_the_capacity_are_refused():
    bad = ARGS.model_copy(update={"inputs": (2_000_000_000,)})
    with pytest.raises(ScenarioError, match="--inputs"):
        cell_doc(bad, 10.0)


def frames():
    """Two back-to-back transfers of repetition 1, one of repetition 2 that failed, and a
    1 ms bottleneck log: 100 Mbit/s during x1 with one 300 Mbit/s ms, 500 during x2."""
    s = 1_000_000_000
    tr = pd.DataFrame(
        {
            "repetition": [1, 1, 2],
            "transfer": ["x1", "x2", "x1"],
            "ok": [True, True, False],
            "start_ns": [s, 3 * s, s],
            "end_ns": [2 * s, 4 * s, np.nan],
            "completion_s": [1.0, 1.0, np.nan],
            "bytes": [12_000_000, 60_000_000, 0],
        }
    )
    t = np.arange(1, 5001) * 1_000_000  # 1 ms rows from 1 ms to 5 s
    rate = np.where((t > s) & (t <= 2 * s), 100e6, np.where((t > 3 * s) & (t <= 4 * s), 500e6, 0.0))
    rate[1500] = 300e6
    b = pd.DataFrame(
        {
            "repetition": 1,
            "link": "rl-rr",
            "direction": "forward",
            "t_ns": t,
            "interval_s": 0.001,
            "bytes": rate * 0.001 / 8,
        }
    )
    return tr, b


def test_samples_from_a_runs_tables_by_hand():
    tr, b = frames()
    m = calibration_samples(tr, b, "rl-rr", 10.0, {"x1": 100e6, "x2": 500e6})
    assert m.failed == 1 and m.overlapped == 0 and len(m.samples) == 2
    x1, x2 = sorted(m.samples, key=lambda s: s.input_bps)
    assert x1.goodput_bps == pytest.approx(96e6) and x2.goodput_bps == pytest.approx(480e6)
    assert x1.throughput_bps == pytest.approx(100.2e6)  # one ms at 300 in a second at 100
    assert x1.throughput_max_bps == pytest.approx(300e6)
    assert x2.throughput_bps == pytest.approx(500e6) and x1.rtt_ms == 10.0


def test_a_transfer_still_running_when_the_next_starts_is_left_out():
    tr, b = frames()
    tr.loc[0, "end_ns"] = 3.5e9
    m = calibration_samples(tr, b, "rl-rr", 10.0, {"x1": 100e6, "x2": 500e6})
    assert m.overlapped == 2 and m.samples == []


def test_the_calibration_report_shows_lines_counts_and_figures(tmp_path):
    from itb.analysis.profile_model import Sample, fit
    from itb.study.profile_calibration.report import build
    from itb.study.profile_calibration.results import CalibrationResults

    samples = [
        Sample(
            rtt_ms=rtt,
            input_bps=x,
            goodput_bps=0.95 * x - rtt * 1e4,
            throughput_bps=x * 1.04,
            throughput_max_bps=x * 1.1,
        )
        for rtt in (0.0, 10.0, 100.0)
        for x in (1e8, 3e8, 5e8, 7e8, 9e8)
    ]
    res = CalibrationResults(
        mechanism="nocc-pacing",
        capacity_bps=1_000_000_000,
        samples=samples,
        failed=1,
        overlapped=2,
        model=fit(samples, "nocc-pacing", 9e8),
    )
    args = CalibrationArgs(
        rtts_ms=(0.0, 10.0, 100.0), inputs=(100_000_000, 900_000_000), capacity=1_000_000_000
    )
    state = {
        "digest": "abc",
        "status": "complete",
        "created": "now",
        "cells": [],
        "args": args.key(),
    }
    html = build(tmp_path, state, args, res).read_text()
    assert html.count("<img") == 3  # rates, peaks, coefficients
    assert "0.9500" in html and "1 transfer(s) failed" in html and ">2</span> overlapped" in html
    assert (tmp_path / "report" / "coefficients.svg").exists()


def test_a_udt_calibration_plans_udt_transfers(tmp_path):
    a = CalibrationArgs(
        cc="udt",
        rtts_ms=(10.0,),
        inputs=(100_000_000, 500_000_000),
        seconds=4.0,
        capacity=1_000_000_000,
    )
    assert a.mechanism.name == "udt"
    doc, _ = cell_doc(a, 10.0)
    path = tmp_path / "u.toml"
    path.write_text(tomli_w.dumps(doc))
    ev = load_scenario(path).experiment.events
    assert {e.protocol for e in ev} == {"udt"} and {e.cc for e in ev} == {"udt"}


def test_the_key_names_what_the_calibration_measures_as_it_always_did():
    # the same fields and values as ITB wrote before its arguments were a model, so that a
    # calibration begun then resumes in the same directory (runs/profile-calibration-HASH)
    assert ARGS.key() == {
        "cc": "nocc",
        "enforce": "pacing",
        "rtts_ms": [0.0, 100.0],
        "inputs_bps": [100_000_000, 500_000_000, 900_000_000],
        "seconds": 8.0,
        "capacity_bps": 1_000_000_000,
        "linear_max": 0.9,
        "repeat": 2,
        "seed": 1,
        "open_window": True,
    }
    # no --inputs: 5 %, 15 %, … 95 % of C; from the options' texts as the command gives them
    a = CalibrationArgs(rtts_ms="10ms", capacity="1Gbit")
    assert a.inputs_bps == (
        50_000_000,
        150_000_000,
        250_000_000,
        350_000_000,
        450_000_000,
        550_000_000,
        650_000_000,
        750_000_000,
        850_000_000,
        950_000_000,
    )
    with pytest.raises(ScenarioError, match="UDT keeps its rate by its own controller"):
        CalibrationArgs(cc="udt", enforce="application", capacity="1Gbit")
