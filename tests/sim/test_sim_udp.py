"""UDP streams in simulation: `flow udp-send` and `udp-recv` as itb-sim runs them, their
departures the same as flow's (constant rate, and Poisson from the same seed), their
summaries and log in flow's formats."""

from __future__ import annotations

import json
import socket
import subprocess

import pandas as pd
import pytest

from itb import native
from tests.sim.test_sim_run import simulated

pytest.importorskip("ns3", reason="simulation needs the ns3 package (make setup)")

SCENARIO = """
[testbed]
name = "udp-sim"
topology = "dumbbell"
[dumbbell]
pairs = 3
[bottleneck]
rate = "100Mbit"
rtt = "20ms"
[experiment]
duration = "20s"
interval = "100ms"
[[udp]]
id = "cbr"
src = "l1"
dst = "r1"
at = "0.5s"
rate = "40Mbit"
duration = "2s"
[[udp]]
id = "poi"
src = "l2"
dst = "r2"
rate = "10Mbit"
duration = "2s"
size = 1000
arrivals = "poisson"
[[transfer]]
id = "bulk"
src = "l3"
dst = "r3"
volume = "20MB"
cc = "cubic"
"""


def summary(rep, node: str, name: str) -> dict:
    return json.loads((rep / "nodes" / node / name).read_text())


def flows_poisson_count(tmp_path, rate_bps: int, size: int, seconds: float, seed: int) -> int:
    """How many datagrams `flow udp-send --poisson` sends (on loopback, to a closed port:
    its departures do not depend on anyone receiving them)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = subprocess.run(
        [native.binary("flow"), "udp-send", "--to", f"127.0.0.1:{port}", "--rate-bps",
         str(rate_bps), "--size", str(size), "--duration-s", str(seconds), "--poisson",
         "--seed", str(seed), "--summary", str(tmp_path / "flow.json")],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    s = json.loads((tmp_path / "flow.json").read_text())
    return s["datagrams"] + s["send_errors"]  # (refused by the closed port: still departed)


def test_a_simulated_udp_stream_departs_as_flows_and_is_counted_as_flows(tmp_path):
    run = simulated(tmp_path, SCENARIO)
    rep = run / "rep-001"
    send, recv = summary(rep, "l1", "cbr.udp-send.json"), summary(rep, "r1", "cbr.udp-recv.json")
    # 40 Mbit/s of 1472-byte payloads: one every 294.4 µs; 2 s holds k = 0 … 6793
    assert send["datagrams"] == 6794 and send["bytes"] == 6794 * 1472
    assert (send["end_ns"] - send["start_ns"]) / 1e9 == pytest.approx(6793 * 294.4e-6, abs=1e-6)
    # every datagram arrives or is counted lost: some are dropped at the bottleneck's queue
    # (beside the cubic transfer), not the first nor the last here (one seed, one outcome)
    assert recv["datagrams"] + recv["lost"] == send["datagrams"] and recv["lost"] > 0
    assert recv["bytes"] == recv["datagrams"] * 1472
    log = pd.read_csv(rep / "nodes" / "r1" / "cbr.udp-recv.csv")
    assert list(log.columns) == ["t_ns", "bytes", "datagrams"]
    assert log["bytes"].sum() == recv["bytes"] and log["datagrams"].sum() == recv["datagrams"]
    # Poisson from the scenario's seed: as many departures as flow's own generator gives
    poi = summary(rep, "l2", "poi.udp-send.json")
    assert poi["poisson"] and poi["seed"] is not None
    assert poi["datagrams"] == flows_poisson_count(tmp_path, 10_000_000, 1000, 2.0, poi["seed"])
    assert abs(poi["datagrams"] - 2500) < 5 * 2500**0.5  # 10 Mbit/s of 1000 B for 2 s
    tr = pd.read_parquet(run / "transfers.parquet").set_index("transfer")
    assert tr.loc["cbr", "ok"] and tr.loc["cbr", "kind"] == "udp" and tr.loc["bulk", "ok"]
