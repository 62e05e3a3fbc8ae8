"""Every congestion control ITB knows moves real bytes between namespaces, with the kernel
confirming the socket ran it; ITB's eBPF ones are registered for the run and gone after
it, after `itb clean` also when the run was killed; a refused program stops the run
before it starts. Registrations are removed by the `isolated` fixture, pass or fail."""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from itb.cc import ALGORITHMS

from .conftest import REPO, itb

BPF_BUILT = REPO / "build" / "bpf" / platform.release()
NAMES = list(ALGORITHMS)  # reno cubic bbr bic highspeed htcp scalable vegas nocc

HEAD = """
[testbed]
name = "cc-test"
[dumbbell]
pairs = 1
[bottleneck]
rate = "100Mbit"
rtt = "10ms"

[experiment]
duration = "{duration}"
"""
TRANSFER = """
[[transfer]]
id = "{cc}"
src = "l1"
dst = "r1"
at = "{at}s"
cc = "{cc}"
volume = "{volume}"
"""


@pytest.fixture
def cc_env(engine_env):
    if shutil.which("bpftool") is None or not (BPF_BUILT / "nocc.bpf.o").exists():
        pytest.skip("ITB's eBPF congestion controls are not built (make bpf)")
    return engine_env


def scenario(tmp: Path, ccs, volume="5MB", spacing_s=2, duration=None) -> Path:
    path = tmp / "scenario.toml"
    text = HEAD.format(duration=duration or f"{spacing_s * len(ccs) + 20}s")
    text += "".join(
        TRANSFER.format(cc=c, at=i * spacing_s, volume=volume) for i, c in enumerate(ccs)
    )
    path.write_text(text)
    return path


def ours_registered() -> list[str]:
    out = subprocess.run(
        ["bpftool", "-j", "struct_ops", "show"], capture_output=True, text=True, check=True
    ).stdout
    return sorted(e["name"] for e in json.loads(out) if e["name"].startswith("itb_"))


def test_every_algorithm_completes_a_transfer_and_the_kernel_confirms_it(cc_env, isolated):
    assert ours_registered() == []
    run = isolated / "run"
    # 5 MB at 100 Mbit/s take about 0.6 s: one a second, one after the other
    path = scenario(isolated, NAMES, spacing_s=1)
    res = itb("run", str(path), "--out", str(run), env=cc_env, timeout=300)
    assert res.returncode == 0, res.stderr + res.stdout
    meta = json.loads((run / "meta.json").read_text())
    used = {c["name"]: c for c in meta["congestion_controls"]}
    assert set(used) == set(NAMES)
    tr = pd.read_parquet(run / "transfers.parquet").set_index("transfer")
    for name in NAMES:
        row = tr.loc[name]
        assert row["ok"] and row["bytes"] == 5_000_000, (name, row["error"])
        # getsockopt(TCP_CONGESTION) on the connected socket: what the kernel ran
        assert row["cc_in_use"] == used[name]["kernel_name"], name
        if used[name]["source"] == "ours":
            assert used[name]["kernel_name"] == f"itb_{name}" and used[name]["loaded_now"]
    assert ours_registered() == []  # the run unregistered what it registered


def test_a_killed_run_leaves_registrations_that_itb_clean_removes(cc_env, isolated):
    run = isolated / "run"
    path = scenario(isolated, ["scalable", "nocc"], volume="500MB", duration="120s")
    p = subprocess.Popen(
        [sys.executable, "-m", "itb.cli", "run", str(path), "--out", str(run)],
        env=cc_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while ours_registered() != ["itb_nocc", "itb_scalable"] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert ours_registered() == ["itb_nocc", "itb_scalable"]
        time.sleep(2)  # transfers running on them
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    assert ours_registered() == ["itb_nocc", "itb_scalable"]  # nobody could unregister
    res = itb("clean", env=cc_env)
    assert res.returncode == 0, res.stderr
    assert "unregistered itb_nocc, itb_scalable" in res.stdout
    assert ours_registered() == []


def test_a_refused_program_names_the_algorithm_and_the_run_does_not_start(cc_env, isolated):
    if shutil.which("clang") is None:
        pytest.skip("clang not installed (make system-deps)")
    bad = isolated / "bpf"
    bad.mkdir()
    subprocess.run(
        [
            "clang",
            "-O2",
            "-g",
            "-target",
            "bpf",
            "-D__TARGET_ARCH_x86",
            f"-I{BPF_BUILT}",
            f"-I{REPO / 'bpf'}",
            "-c",
            str(Path(__file__).parent / "data" / "refused_cc.bpf.c"),
            "-o",
            str(bad / "bic.bpf.o"),
        ],
        check=True,
    )
    env = {**cc_env, "ITB_BPF_DIR": str(bad)}
    run = isolated / "run"
    res = itb("run", str(scenario(isolated, ["reno", "bic"])), "--out", str(run), env=env)
    assert res.returncode == 4, res.stderr + res.stdout
    assert (
        "congestion control 'bic' could not be loaded: verifier: no write support to "
        "tcp_sock at off"
    ) in " ".join(res.stderr.split())
    assert not run.exists()  # nothing was built or written
    assert ours_registered() == []


PACED = """
[testbed]
name = "cc-paced"
[dumbbell]
pairs = 5
[bottleneck]
rate = "1Gbit"
rtt = "20ms"

[experiment]
duration = "15s"
interval = "100ms"
"""


def test_a_paced_flow_keeps_its_window_with_each_of_ours(cc_env, isolated):
    """The kernel's rule through the real tcp_sock: a flow held back by pacing does not
    grow its window (the earlier eBPF versions reached ~255 000 segments in 15 s; each
    flow here is paced for 3 s, 56 MB at 150 Mbit/s, the five together on their own host
    pairs, 750 Mbit/s of the 1 Gbit/s bottleneck). The bound leaves room for the
    testbed's delay spikes (see docs/cc.md)."""
    ours = ["bic", "highspeed", "htcp", "scalable", "vegas"]
    path = isolated / "paced.toml"
    path.write_text(
        PACED
        + "".join(
            f'\n[[transfer]]\nid = "{c}"\nsrc = "l{i + 1}"\ndst = "r{i + 1}"\ncc = "{c}"\n'
            f'rate = "150Mbit"\nvolume = "56MB"\n'
            for i, c in enumerate(ours)
        )
    )
    run = isolated / "run"
    res = itb("run", str(path), "--out", str(run), env=cc_env, timeout=300)
    assert res.returncode == 0, res.stderr + res.stdout
    s = pd.read_parquet(run / "samples.parquet")
    s = s[s["series"] == "tcp_info"]
    paced_bdp = 150e6 * 0.020 / 8 / 1448  # 259 segments
    for c in ours:
        top = s[s["transfer"] == c]["cwnd"].max()
        assert 0 < top < 6 * paced_bdp, (c, top)
    tr = pd.read_parquet(run / "transfers.parquet")
    assert tr["ok"].all() and tr["corrupt_window"].isna().all()
