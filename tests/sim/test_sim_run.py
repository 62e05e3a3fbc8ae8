"""`itb run --backend sim` end to end on a small dumbbell: the scenario simulated in
ns-3 (itb-sim built against the installed ns3 package), the run directory written as an
emulated run's, its tables and report built from it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("ns3", reason="simulation needs the ns3 package (make setup)")

SCENARIO = """
[testbed]
name = "sim-small"
topology = "dumbbell"

[dumbbell]
pairs = 2

[bottleneck]
rate = "10Mbit"
rtt = "20ms"
buffer = "2MB"

[experiment]
repetitions = 2
duration = "20s"

[[transfer]]
id = "one"
src = "l1"
dst = "r1"
at = "0s"
volume = "1MB"
cc = "cubic"

[[transfer]]
id = "two"
src = "l2"
dst = "r2"
at = "2s"
volume = "2MB"
cc = "reno"
"""


def itb(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "itb.cli", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


def simulated(tmp_path, scenario: str) -> Path:
    """The scenario's run simulated (`itb run --backend sim`), ended well: its directory."""
    sc = tmp_path / "s.toml"
    sc.write_text(scenario)
    run = tmp_path / "run"
    res = itb("run", str(sc), "--backend", "sim", "--out", str(run))
    assert res.returncode == 0, res.stderr + res.stdout
    return run


def test_a_simulated_run_writes_the_run_directory_an_emulated_one_does(tmp_path):
    run = simulated(tmp_path, SCENARIO)
    meta = json.loads((run / "meta.json").read_text())
    assert meta["backend"] == "sim" and meta["status"] == "complete"
    # Linux's own tcp_cubic.c and tcp_cong.c's Reno, run by ns-3's TCP
    assert {c["kernel_name"] for c in meta["congestion_controls"]} == {"linux:cubic", "linux:reno"}
    t = pd.read_parquet(run / "transfers.parquet")
    assert len(t) == 4 and t["ok"].all()
    # alone on 10 Mbit/s of 1514-byte frames (a queue that loses nothing), 1 MB of payload
    # takes 8e6 / (1e7 · 1448 / 1514) = 0.836 s from the first byte sent, plus the last
    # byte's one-way delay (10 ms) and the first round trip's idle share (10 of the 17
    # segments the path holds: 8 ms)
    one = t[t["transfer"] == "one"]["completion_s"]
    assert ((0.850 < one) & (one < 0.860)).all(), one.tolist()
    two = t[t["transfer"] == "two"]["completion_s"]  # 2 MB: 1.673 s + the same 18 ms
    assert ((1.686 < two) & (two < 1.696)).all(), two.tolist()
    assert (t["bytes_retrans"] == 0).all()
    # the bottleneck's log: the forward direction carried the payload in full frames
    b = pd.read_parquet(run / "bottleneck.parquet")
    fwd = b[(b["direction"] == "forward") & (b["repetition"] == 1)]
    frames = 3_000_000 / 1448 * 1514  # the payload's frames, ±1 % (handshakes, partial)
    assert abs(fwd["bytes"].sum() - frames) / frames < 0.01
    # never above the link's rate in any 1 ms interval (a 1514-byte frame takes 1.2112 ms)
    assert (fwd["bytes"] <= 2 * 1514).all()
    rep = run / "rep-001"
    recv = json.loads((rep / "nodes" / "r1" / "one.recv.json").read_text())
    rows = pd.read_csv(rep / "nodes" / "r1" / "one.recv.csv")
    assert recv["bytes"] == 1_000_000 and rows["bytes"].sum() == 1_000_000
    res = itb("report", str(run))
    assert res.returncode == 0, res.stderr
    assert (run / "report" / "report.html").exists()


def test_ns3s_own_model_runs_when_named_and_only_in_simulation(tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text(SCENARIO.replace('cc = "reno"', 'cc = "ns3:TcpNewReno"'))
    run = tmp_path / "run"
    res = itb("run", str(sc), "--backend", "sim", "--repeat", "1", "--out", str(run))
    assert res.returncode == 0, res.stderr + res.stdout
    send = json.loads((run / "rep-001" / "nodes" / "l2" / "two.send.json").read_text())
    assert send["cc_in_use"] == "ns3::TcpNewReno" and send["ok"]
    # the local testbed (its own prefix: refused before anything of it is touched)
    env = {**os.environ, "ITB_PREFIX": "itbs", "ITB_STATE_DIR": str(tmp_path / "state")}
    res = itb("run", str(sc), "--out", str(tmp_path / "local"), env=env)
    assert res.returncode == 4
    assert "two: ns3:TcpNewReno is ns-3's model, run only in simulation" in res.stderr
    assert not (tmp_path / "local").exists()


def test_what_a_simulator_cannot_run_is_refused_before_anything_runs(tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text(SCENARIO + '\n[[command]]\nid = "c"\nhost = "l1"\nat = "0s"\nargv = ["true"]\n')
    run = tmp_path / "run"
    res = itb("run", str(sc), "--backend", "sim", "--out", str(run))
    assert res.returncode == 4, res.stderr
    assert "cannot be simulated: c: a command runs a program on a host" in res.stderr
    assert not run.exists()


def test_the_simulator_runs_under_the_normal_scheduler_not_the_engines_real_time_one(tmp_path):
    # a simulator busy at SCHED_FIFO would keep every other program off its core: a stand-in
    # for itb-sim (ITB_SIM) records the policy it was started with, then fails the run
    probe = tmp_path / "probe"
    probe.write_text(
        f"#!{sys.executable}\nimport os, sys\n"
        # (run without arguments, as itb-sim is before a run: its usage)
        "if len(sys.argv) == 1: print('itb-sim: usage: itb-sim CONFIG OUTDIR', "
        "file=sys.stderr) or sys.exit(2)\n"
        f"open({str(tmp_path / 'policy')!r}, 'w').write(str(os.sched_getscheduler(0)))\n"
        "sys.exit(3)\n"
    )
    probe.chmod(0o755)
    sc = tmp_path / "s.toml"
    sc.write_text(SCENARIO)
    env = {**os.environ, "ITB_SIM": str(probe)}
    res = itb("run", str(sc), "--backend", "sim", "--repeat", "1", "--out", str(tmp_path / "r"),
              env=env)  # fmt: skip
    assert res.returncode == 1 and "itb-sim exited 3" in res.stdout, res.stderr + res.stdout
    # the policy it was started with: this test's own (make test runs it SCHED_IDLE)
    assert int((tmp_path / "policy").read_text()) == os.sched_getscheduler(0)
    assert os.sched_getscheduler(0) not in (os.SCHED_FIFO, os.SCHED_RR)


SLOW = SCENARIO.replace('rate = "10Mbit"', 'rate = "1Gbit"').replace(
    'buffer = "2MB"', 'buffer = "1bdp"'
)
SLOW = SLOW.replace('volume = "1MB"', 'volume = "400MB"').replace('cc = "cubic"', 'cc = "reno"')


def simulating(tmp_path) -> tuple[subprocess.Popen, Path, Path]:
    """`itb run SLOW --backend sim` in a session of its own, once its simulator has run
    for a second: (the engine, the run directory, the simulator's configuration)."""
    sc = tmp_path / "s.toml"
    sc.write_text(SLOW)
    run = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "itb.cli", "run", str(sc), "--backend", "sim", "--repeat", "1",
         "--out", str(run)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    conf = run / "rep-001" / "sim.conf"
    for _ in range(3000):  # (make test runs it SCHED_IDLE, beside the integration tests)
        if conf.exists():
            break
        time.sleep(0.1)
    time.sleep(1.0)
    return proc, run, conf


def test_ctrl_c_during_a_simulation_stops_it_and_resume_runs_that_repetition_again(tmp_path):
    # one reno flow at 1 Gbit/s (its slow start's losses take ns-3 minutes to recover):
    # Ctrl-C (SIGINT to the whole group, the simulator too) leaves the repetition
    # interrupted — not failed, which a resume would keep — and no simulator behind
    proc, run, _ = simulating(tmp_path)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    res = run / "rep-001" / "result.json"
    assert not res.exists() or json.loads(res.read_text())["status"] == "interrupted", err
    assert subprocess.run(["pgrep", "-f", str(run)], capture_output=True).returncode == 1
    from itb import rundir

    assert rundir.repetitions_done(run, 1) == set()  # resume runs it again


def test_a_simulator_dies_with_the_engine_that_runs_it(tmp_path):
    # SIGKILL to the engine alone (not its group): its simulator does not go on alone
    proc, _, conf = simulating(tmp_path)
    try:
        sims = subprocess.run(["pgrep", "-f", str(conf)], capture_output=True, text=True)
        assert sims.stdout.split(), "no simulator ran"
    finally:
        proc.kill()
        proc.communicate()
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        if subprocess.run(["pgrep", "-f", str(conf)], capture_output=True).returncode == 1:
            break
        time.sleep(0.05)
    assert subprocess.run(["pgrep", "-f", str(conf)], capture_output=True).returncode == 1


PINGPONG = (
    SCENARIO.split("[[transfer]]")[0].replace("repetitions = 2", "repetitions = 1")
    + """
[[pingpong]]
id = "pa"
src = "l1"
dst = "r1"
at = "1s"
count = 20
size = "1448B"
reply_size = "2896B"
cc = "cubic"
"""
)


def test_a_ping_pong_answers_each_message_before_the_next_one_is_written(tmp_path):
    run = simulated(tmp_path, PINGPONG)
    # one segment out, two back, on 10 Mbit/s of 1514-byte frames (1.2112 ms each) and a
    # 20 ms round trip: at least 20 + 1.2112 + 2 · 1.2112 = 23.634 ms a message, and at
    # most one more frame ahead of it (the ACK of the answer, 66 bytes: 0.0528 ms)
    rows = pd.read_csv(run / "rep-001" / "nodes" / "l1" / "pa.send.csv")
    assert list(rows["msg"]) == list(range(20))
    rtt_ms = (rows["t_recv_ns"] - rows["t_send_ns"]) / 1e6
    later = rtt_ms.iloc[1:]  # (the first follows the handshake's last ACK)
    assert ((23.634 < later) & (later <= 23.687)).all() and rtt_ms[0] < 23.75, rtt_ms.tolist()
    assert (rows["t_send_ns"].iloc[1:].values == rows["t_recv_ns"].iloc[:-1].values).all()
    send = json.loads((run / "rep-001" / "nodes" / "l1" / "pa.send.json").read_text())
    assert send["messages"] == 20 and send["ok"] and send["bytes"] == 20 * 1448
    assert 23.634e6 < send["rtt_ns"]["min"] <= send["rtt_ns"]["max"] < 23.75e6
    recv = json.loads((run / "rep-001" / "nodes" / "r1" / "pa.recv.json").read_text())
    assert recv["messages"] == 20 and recv["bytes"] == 20 * 1448 and recv["ok"]
    # the run's table: the ping-pong's 20 round trips from its first write (≥ 0.4727 s)
    t = pd.read_parquet(run / "transfers.parquet")
    (pa,) = t.itertuples()
    assert pa.kind == "pingpong" and pa.ok, pa
    assert abs(pa.completion_s - rtt_ms.sum() / 1e3) < 1e-4 and pa.completion_s > 0.4727, pa


def test_a_simulated_transfer_behind_its_profile_sends_its_backlog_before_a_step_down(tmp_path):
    # the emulated test's scenario and hand-computed bound (tests/integration/test_profile.py):
    # 19 MB behind at the step down, sent at the pacing in force, ends with its plan at 4 s
    from tests.integration.test_profile import BEHIND

    run = simulated(tmp_path, BEHIND)
    tr = pd.read_parquet(run / "transfers.parquet")
    assert tr["ok"].all() and tr["profile_s"].iloc[0] == pytest.approx(4.0)
    assert tr["lateness_s"].iloc[0] < 0.5, tr[["completion_s", "lateness_s"]]
    send = json.loads(next((run / "rep-001").rglob("p.send.json")).read_text())
    ((at_ns, rate),) = send["rate_changes"]
    assert rate == 10_500_000 and (at_ns - send["start_ns"]) / 1e9 > 2.5  # after its backlog


def test_a_transfer_the_timeline_cuts_short_fails_its_repetition_as_an_emulated_one_does(
    tmp_path,
):
    # 2 MB on 10 Mbit/s take 1.7 s; the timeline ends at 1 s. An emulated repetition fails
    # then ("the timeline ended (1 s) with 2 process(es) still running: cut.recv,
    # cut.send", itb.engine.execute); a simulated one was "ok" with the transfer's row
    # failed, and studies averaged the transfers that ended (issue 42's grid: a flow that
    # never finished left out of T_mean)
    sc = tmp_path / "s.toml"
    sc.write_text(
        SCENARIO.replace("repetitions = 2", "repetitions = 1")
        .replace('duration = "20s"', 'duration = "1s"')
        .replace('id = "one"', 'id = "cut"')
        .replace('volume = "1MB"', 'volume = "2MB"')
        .replace('at = "2s"', 'at = "0s"')
    )
    run = tmp_path / "run"
    res = itb("run", str(sc), "--backend", "sim", "--out", str(run))
    assert res.returncode == 1, res.stderr + res.stdout
    rec = json.loads((run / "rep-001" / "result.json").read_text())
    assert rec["status"] == "failed"
    assert rec["reason"] == (
        "the timeline ended (1 s) with 4 process(es) still running: "
        "cut.recv, cut.send, two.recv, two.send"
    )
    t = pd.read_parquet(run / "transfers.parquet")
    assert not t["ok"].any()
