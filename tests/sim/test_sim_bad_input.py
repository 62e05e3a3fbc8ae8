"""The simulator under bad input, end to end: what cannot run is refused before anything
is written (no run or sweep directory), with a message that says why and the exit
status of docs/exit-codes.md; a simulator killed mid-run leaves a run that `itb report`
explains instead of failing on."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ns3", reason="simulation needs the ns3 package (make setup)")

from tests.sim.test_sim_run import SCENARIO  # noqa: E402


def itb(*args: str, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "itb.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def scenario(tmp_path: Path, text: str = SCENARIO) -> Path:
    sc = tmp_path / "s.toml"
    sc.write_text(text)
    return sc


def stand_in(tmp_path: Path, body: str) -> Path:
    """A program in itb-sim's place ($ITB_SIM): a shell script."""
    p = tmp_path / "itb-sim"
    p.write_text("#!/bin/sh\n" + body)
    p.chmod(0o755)
    return p


def test_a_model_ns3_has_not_is_refused_before_a_run_directory_is_made(tmp_path):
    sc = scenario(tmp_path, SCENARIO.replace('cc = "reno"', 'cc = "ns3:TcpDoesNotExist"'))
    run = tmp_path / "run"
    res = itb("run", str(sc), "--backend", "sim", "--out", str(run))
    assert res.returncode == 4, res.stderr + res.stdout
    assert "two: congestion control 'ns3:TcpDoesNotExist': ns-3 has no such model" in res.stderr
    assert "ns3:TcpCubic" in res.stderr  # (its models are listed)
    assert not run.exists()


def test_a_simulator_that_crashes_is_refused_with_its_signal_before_a_run_directory(tmp_path):
    crash = stand_in(tmp_path, "kill -SEGV $$\n")
    run = tmp_path / "run"
    res = itb("run", str(scenario(tmp_path)), "--backend", "sim", "--out", str(run),
              env={"ITB_SIM": str(crash)})  # fmt: skip
    assert res.returncode == 4, res.stderr + res.stdout
    assert f"$ITB_SIM {crash} does not run: killed by SIGSEGV (signal 11)" in res.stderr
    assert not run.exists()
    text = tmp_path / "not-a-program"
    text.write_text("hello")
    res = itb("run", str(scenario(tmp_path)), "--backend", "sim", "--out", str(run),
              env={"ITB_SIM": str(text)})  # fmt: skip
    assert res.returncode == 4 and "cannot be run: Permission denied" in res.stderr, res.stderr
    assert not run.exists()


def test_ns3_without_its_libraries_is_a_missing_prerequisite_not_a_crash(tmp_path):
    # an ns3 package with its headers and only its core library, found before the real one
    fake = tmp_path / "site" / "ns3"
    (fake / "include" / "ns3").mkdir(parents=True)
    (fake / "lib64").mkdir()
    (fake / "lib64" / "libns3.44-core.so").write_bytes(b"")
    (fake / "__init__.py").write_text("")
    path = os.pathsep.join(p for p in (str(tmp_path / "site"), os.environ.get("PYTHONPATH")) if p)
    env = {"PYTHONPATH": path, "ITB_SIM": ""}
    run = tmp_path / "run"
    res = itb("run", str(scenario(tmp_path)), "--backend", "sim", "--out", str(run), env=env)
    assert res.returncode == 4, res.stderr + res.stdout
    assert "ns-3 3.44 without its libraries libns3.44-network.so" in res.stderr
    assert not run.exists()


def test_an_absurd_scenario_is_refused_by_its_memory_estimate_before_anything_runs(tmp_path):
    # 40 Gbit/s, 2 s RTT, a 1 GB queue, 100 flows: ~60 GiB of packets in flight (ns-3
    # grew ~20 MB/s until bad_alloc); refused where the machine has less available
    from itb.backends.sim import memory

    if memory.available_bytes() > 60 * 2**30:
        pytest.skip("this machine has more than 60 GiB available")
    big = (
        '[testbed]\nname = "absurd"\ntopology = "dumbbell"\n[dumbbell]\npairs = 100\n'
        '[bottleneck]\nrate = "40Gbit"\nrtt = "2s"\nbuffer = "1GB"\n'
        '[experiment]\nduration = "60s"\n'
        + "".join(
            f'[[transfer]]\nsrc = "l{k}"\ndst = "r{k}"\nat = "0s"\nvolume = "100GB"\ncc = "cubic"\n'
            for k in range(1, 101)
        )
    )
    run = tmp_path / "run"
    t0 = time.monotonic()
    res = itb("run", str(scenario(tmp_path, big)), "--backend", "sim", "--out", str(run))
    assert res.returncode == 4, res.stderr + res.stdout
    assert "cannot be simulated: its simulation would need about 60.5 GiB" in res.stderr
    assert "twice what the links hold" in res.stderr and "link rl-rr forward" in res.stderr
    assert not run.exists() and time.monotonic() - t0 < 60


def test_a_simulator_killed_mid_run_fails_its_repetition_and_the_report_says_what_is_missing(
    tmp_path,
):
    # a stand-in answers as itb-sim, makes the logs itb-sim opens first, and is SIGKILLed
    killed = stand_in(
        tmp_path,
        'if [ $# -eq 0 ]; then echo "itb-sim: usage: itb-sim CONFIG OUTDIR" >&2; exit 2; fi\n'
        'mkdir -p "$2/nodes/l1" "$2/nodes/r1"\n'
        ': > "$2/nodes/l1/one.send.csv"; : > "$2/nodes/r1/one.recv.csv"\n'
        "kill -9 $$\n",
    )
    one = SCENARIO.split('[[transfer]]\nid = "two"')[0].replace(
        "repetitions = 2", "repetitions = 1"
    )
    run = tmp_path / "run"
    res = itb("run", str(scenario(tmp_path, one)), "--backend", "sim", "--out", str(run),
              env={"ITB_SIM": str(killed)})  # fmt: skip
    assert res.returncode == 1, res.stderr + res.stdout
    assert "itb-sim killed by SIGKILL (signal 9)" in res.stdout
    res = itb("report", str(run))
    assert res.returncode == 1, res.stderr
    assert "nothing to report: no repetition wrote a sample of its transfers" in res.stderr
    assert "repetition 1: itb-sim killed by SIGKILL (signal 9)" in res.stderr
    assert "rep-001/nodes/r1/one.recv.csv (0 bytes), rep-001/nodes/l1/one.send.csv (0 bytes)" in (
        res.stderr.replace("\n", " ")
    )


def test_bench_refuses_a_congestion_control_the_simulator_has_not_before_any_cell_runs(tmp_path):
    out = tmp_path / "bench"
    res = itb(
        "bench", "--backend", "sim", "--app", "BU", "--class", "B", "--cc", "cubic,bbr",
        "--capacity", "10Mbit", "--transfer-time", "1", "--repeat", "1", "--out", str(out),
        timeout=120,
    )  # fmt: skip
    assert res.returncode == 4, res.stderr + res.stdout
    assert "congestion control 'bbr': its Linux code does not run in the simulator" in res.stderr
    assert not out.exists()


def test_crossval_refuses_a_congestion_control_the_simulator_has_not_before_writing(tmp_path):
    out = tmp_path / "x"
    res = itb("study", "crossval", "--cc", "bbr", "--models", "none", "--capacity", "50Mbit",
              "--repeat", "2", "--out", str(out), timeout=120)  # fmt: skip
    assert res.returncode in (2, 4), res.stderr + res.stdout
    assert "congestion control 'bbr': its Linux code does not run in the simulator" in res.stderr
    assert not out.exists()


def test_an_unreachable_dask_scheduler_is_refused_at_once_before_anything_is_written(tmp_path):
    out = tmp_path / "bench"
    t0 = time.monotonic()
    res = itb(
        "bench", "--backend", "sim", "--app", "BU", "--class", "B", "--cc", "reno",
        "--capacity", "10Mbit", "--transfer-time", "1", "--repeat", "1", "--out", str(out),
        "--dask", "tcp://nowhere.invalid:8786", timeout=120,
    )  # fmt: skip
    assert res.returncode == 3, res.stderr + res.stdout
    assert "--dask: no Dask scheduler answers at tcp://nowhere.invalid:8786" in res.stderr
    assert not out.exists() and time.monotonic() - t0 < 30


def test_building_the_simulator_is_said_only_when_it_is_built(tmp_path):
    sc = scenario(tmp_path, SCENARIO.replace("repetitions = 2", "repetitions = 1"))
    itb("run", str(sc), "--backend", "sim", "--out", str(tmp_path / "first"))  # (built if stale)
    res = itb("run", str(sc), "--backend", "sim", "--out", str(tmp_path / "second"))
    assert res.returncode == 0, res.stderr + res.stdout
    assert "building itb-sim" not in res.stderr and "stage: preflight" in res.stderr


def test_a_simulation_past_its_memory_limit_fails_saying_it_ran_out_of_memory(
    tmp_path, monkeypatch
):
    # the estimate let through (as if it were wrong), the address space limited to 64 MiB:
    # a UDP stream of 400 Mbit/s into 100 Mbit/s fills a 50 MB queue (~79 MiB measured)
    from itb import cc
    from itb.backends import open_testbed
    from itb.backends.sim import memory, testbed
    from itb.scenario.scenario import scenario_from_data

    doc = {
        "testbed": {"name": "oom", "topology": "dumbbell"},
        "dumbbell": {"pairs": 1},
        "bottleneck": {"rate": "100Mbit", "rtt": "20ms", "buffer": "50MB"},
        "experiment": {"duration": "3.5s"},
        "udp": [{"id": "u", "src": "l1", "dst": "r1", "at": "0s", "rate": "400Mbit",
                 "duration": "3s", "size": 1472}],
    }  # fmt: skip
    sc = scenario_from_data(doc, "t")
    monkeypatch.setattr(memory, "refusal", lambda *a, **k: None)
    monkeypatch.setattr(memory, "available_bytes", lambda: 0)
    monkeypatch.setattr(testbed, "ADDRESS_SLACK", 64 * 2**20)
    tb = open_testbed(sc.topology, cc.support(), simulate=True)
    tb.preflight(sc)
    rep = tmp_path / "rep-001"
    rep.mkdir()
    res = tb.simulate(list(sc.experiment.events), rep, sc.experiment.duration_us, 100_000, 1)
    assert res["status"] == "failed", res
    assert res["reason"].startswith("itb-sim ran out of memory after "), res["reason"]
    assert (
        "its limit 0.1 GiB" in res["reason"] and "(its messages: rep-001/sim.err)" in res["reason"]
    )


def test_a_dask_address_where_something_else_answers_is_refused_as_no_scheduler():
    # a server that answers in HTTP (a proxy did, here): "HTTP/1.1" read as a Dask frame's
    # length made distributed ask numpy for 3.07 EiB (a MemoryError, exit 70)
    import socket
    import threading

    from itb.errors import BackendError
    from itb.sweep.parallel import check_dask

    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]

    def answer() -> None:
        conn, _ = srv.accept()
        with conn:
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            time.sleep(6)

    threading.Thread(target=answer, daemon=True).start()
    try:
        with pytest.raises(
            BackendError, match=f"no Dask scheduler answers at tcp://127.0.0.1:{port}"
        ):
            check_dask(f"tcp://127.0.0.1:{port}")
    finally:
        srv.close()
