"""`itb study … --backend sim`: a study's sweep simulated in ns-3 (another directory than
the testbed's), a study whose runs a simulator cannot run refused before anything is
written, and crossval, which runs its own simulated cells, refused the option."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

pytest.importorskip("ns3", reason="simulation needs the ns3 package (make setup)")


def itb(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "itb.cli", *args], capture_output=True, text=True, timeout=600
    )


def test_rtt_sweep_simulated_fills_the_link_and_shares_it(tmp_path):
    # its flows run until a `sleep` command ends the run: a timer in the simulation
    out = tmp_path / "rtt"
    res = itb(
        "study", "rtt-sweep", "--cc", "reno", "--rtt", "20ms", "--flows", "12",
        "--seconds", "5", "--warmup", "1", "--spacing", "0", "--repeat", "1",
        "--capacity", "50Mbit", "--backend", "sim", "--out", str(out),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr + res.stdout
    (p,) = json.loads((out / "results.json").read_text())["points"]
    # 12 flows paced at C/10 = 5 Mbit/s offer 1.2 C: the link is full (payload ≈
    # 1448/1514 = 0.956 of the wire), the share even
    assert p["c_g"] == pytest.approx(1.2) and len(p["repetitions"][0]["goodputs_bps"]) == 12
    assert 0.9 < p["utilisation"] < 0.96 and p["jain"] > 0.9
    (meta,) = out.glob("cells/*/meta.json")
    assert json.loads(meta.read_text())["backend"] == "sim"
    assert json.loads((out / "rtt-sweep.json").read_text())["args"]["backend"] == "sim"
    # the timer ended the run: the flows (wait = false) stopped once it was done
    t = pd.read_parquet(meta.parent / "transfers.parquet")
    assert len(t) == 12 and not t["ok"].any()
    assert set(t["error"]) == {"stopped once the awaited events were done (wait = false)"}
    # `itb report DIR` rebuilds the study from its raw logs: the same results
    before = json.loads((out / "results.json").read_text())
    again = itb("report", str(out))
    assert again.returncode == 0, again.stderr + again.stdout
    assert f"results: {out / 'results.json'}" in again.stdout
    assert json.loads((out / "results.json").read_text()) == before


def test_a_study_a_simulator_cannot_run_is_refused_before_anything_is_written(tmp_path):
    out = tmp_path / "udt"
    res = itb(
        "study", "profile", "transition", "--mechanisms", "udt", "--rtt", "10ms",
        "--heights", "500Mbit", "--repeat", "1", "--capacity", "1Gbit", "--backend", "sim",
        "--out", str(out),
    )  # fmt: skip
    assert res.returncode == 2, res.stderr + res.stdout
    assert (
        "--backend: profile-transition cell udt-rtt10ms cannot be simulated: h1: UDT is not "
        "simulated" in res.stderr
    )
    assert not out.exists()


def test_crossval_runs_its_simulated_cells_itself_and_refuses_the_option(tmp_path):
    res = itb("study", "crossval", "--capacity", "50Mbit", "--backend", "sim",
              "--out", str(tmp_path / "x"))  # fmt: skip
    assert res.returncode == 2 and "runs its simulated cells itself" in res.stderr
