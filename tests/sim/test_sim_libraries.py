"""itb-sim runs the wheel's ns-3 but for two costs, and the same bytes come out:
- its copy of the internet library differs from the wheel's by the one byte that skips an
  assertion's list comparison (itb.backends.sim.libraries): a repetition with losses
  writes byte for byte the logs the wheel's own library writes;
- its TcpTxBuffer::NextSeg skips ns-3's walk of the sent list when nothing is lost
  (native/sim/tx_buffer.cc): repetitions with and without losses write the same bytes
  as with ns-3's own NextSeg (ITB_SIM_NS3_NEXTSEG)."""

from __future__ import annotations

import filecmp
import os
import subprocess
import sys

import pytest

pytest.importorskip("ns3", reason="simulation needs the ns3 package (make setup)")

from itb.backends.sim import driver, libraries  # noqa: E402
from itb.cc import simlinux  # noqa: E402

# one reno flow through a one-BDP queue: its slow start overshoots, then recovers
LOSSY = """
[testbed]
name = "sim-lossy"
topology = "dumbbell"

[dumbbell]
pairs = 1

[bottleneck]
rate = "100Mbit"
rtt = "20ms"
buffer = "1bdp"

[experiment]
repetitions = 1
duration = "30s"

[[transfer]]
id = "one"
src = "l1"
dst = "r1"
at = "0s"
volume = "20MB"
cc = "reno"
"""


def simulated_once(tmp_path, scenario: str):
    """The scenario run by `itb run --backend sim`: its first repetition's directory."""
    sc = tmp_path / "s.toml"
    sc.write_text(scenario)
    run = tmp_path / "run"
    res = subprocess.run(
        [sys.executable, "-m", "itb.cli", "run", str(sc), "--backend", "sim", "--out", str(run)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr + res.stdout
    return run / "rep-001"


def assert_same_bytes_again(tmp_path, rep, env: dict) -> None:
    """itb-sim run again on the repetition's configuration with `env` writes every one of
    its files byte for byte."""
    again = tmp_path / "again"
    again.mkdir()
    prog = driver.program(simlinux.objects())  # (built already by the run)
    out = subprocess.run(
        [str(prog), str(rep / "sim.conf"), str(again)], capture_output=True, text=True,
        env={**os.environ, **env}, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    files = [p.relative_to(again) for p in again.rglob("*") if p.is_file()]
    assert len(files) >= 6
    for f in files:
        assert filecmp.cmp(again / f, rep / f, shallow=False), f


def test_the_copy_differs_by_the_one_jump():
    root = driver.ns3_root()
    v = driver.version(root)
    wheel = root / "lib64" / f"libns{v}-internet.so"
    ours = libraries.directory(root / "lib64", v) / wheel.name
    a, b = wheel.read_bytes(), ours.read_bytes()
    assert len(a) == len(b)
    diff = [k for k in range(len(a)) if a[k] != b[k]]
    k = a.index(libraries.COMPARISON) + libraries.JNE_AT
    assert diff == [k] and (a[k], b[k]) == (0x75, 0xEB)  # jne → jmp


def test_a_lossy_repetition_writes_the_same_bytes_with_the_wheels_own_library(tmp_path):
    rep = simulated_once(tmp_path, LOSSY)
    send = (rep / "nodes" / "l1" / "one.send.json").read_text()
    assert '"total_retrans": 0' not in send  # it lost segments and retransmitted them
    # the same configuration again, the wheel's own libraries first on the search path
    lib64 = driver.ns3_root() / "lib64"
    prog = driver.program(simlinux.objects())
    ldd = subprocess.run(["ldd", str(prog)], capture_output=True, text=True,
                         env={**os.environ, "LD_LIBRARY_PATH": str(lib64)}).stdout  # fmt: skip
    assert f"{lib64}/libns" in ldd and "internet" in ldd  # (the wheel's, not ITB's copy)
    assert str(libraries.directory(lib64, driver.version(driver.ns3_root()))) not in ldd
    assert_same_bytes_again(tmp_path, rep, {"LD_LIBRARY_PATH": str(lib64)})


MULTI = LOSSY.replace("pairs = 1", "pairs = 3").replace(
    'volume = "20MB"', 'volume = "8MB"'
) + "".join(
    f'\n[[transfer]]\nid = "f{k}"\nsrc = "l{k}"\ndst = "r{k}"\nat = "{k / 10}s"\n'
    f'volume = "6MB"\ncc = "cubic"\nrate = "30Mbit"\n'
    for k in (2, 3)
)


@pytest.mark.parametrize("scenario", [LOSSY, MULTI], ids=["one-lossy", "three-paced"])
def test_the_sent_lists_walk_skipped_when_nothing_is_lost_changes_no_byte(tmp_path, scenario):
    rep = simulated_once(tmp_path, scenario)
    prog = driver.program(simlinux.objects())
    nm = subprocess.run(["nm", "-D", str(prog)], capture_output=True, text=True).stdout
    assert " T _ZNK3ns311TcpTxBuffer7NextSeg" in nm  # itb-sim's own, exported
    assert_same_bytes_again(tmp_path, rep, {"ITB_SIM_NS3_NEXTSEG": "1"})


@pytest.mark.parametrize("scenario", [LOSSY, MULTI], ids=["one-lossy", "three-paced"])
def test_the_sent_lists_walks_itb_sim_shortens_change_no_byte(tmp_path, scenario):
    # IsRetransmittedDataAcked stopping at the first segment past the ACK
    rep = simulated_once(tmp_path, scenario)
    send = (rep / "nodes" / "l1" / "one.send.json").read_text()
    assert '"total_retrans": 0' not in send  # (the walk has retransmissions to find)
    assert_same_bytes_again(tmp_path, rep, {"ITB_SIM_NS3_WALKS": "1"})
