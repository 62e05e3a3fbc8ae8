"""What `itb` reads on a user's word is bounded, and what the sender cannot do is refused
at load: each case runs the real command and measures its wall time and peak memory.

- `/dev/zero` or `/dev/urandom` as a transfer's profile, or as a profile model, was read
  whole: `itb run` grew to 13.5 GB in 18 s. Refused now in under 1 s, under 200 MB.
- A profile step at 10^12 s passed the load checks, built the testbed, and failed the
  repetition in flow ("date too large"). Refused at load now (exit 2), nothing built.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCENARIO = """
[testbed]
topology = "dumbbell"
[experiment]
duration = "10s"
[[transfer]]
src = "l1"
dst = "r1"
volume = "1MB"
profile = "{profile}"
"""


# Linux keeps a process's peak RSS across exec, and a child forked (or vforked) from this
# test process starts with this process's pages: measured directly, `itb` would carry
# pytest's own hundreds of MB. A fresh small Python forks it instead and reports the
# child's own rusage.
_MEASURE = """
import json, os, sys, time
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, "-m", "itb.cli", *sys.argv[1:]])
_, status, usage = os.wait4(pid, 0)
print(json.dumps({"rc": os.waitstatus_to_exitcode(status), "wall_s": time.monotonic() - t0,
                  "maxrss_kib": usage.ru_maxrss}))
"""


def run_measured(args: list[str], env: dict) -> tuple[int, str, float, int]:
    """exit code, stderr, wall time (s) and peak RSS (bytes) of `itb ARGS`."""
    res = subprocess.run(
        [sys.executable, "-c", _MEASURE, *args], env=env, capture_output=True, text=True, timeout=60
    )
    m = json.loads(res.stdout.strip().splitlines()[-1])
    return m["rc"], res.stderr, m["wall_s"], m["maxrss_kib"] * 1024


@pytest.fixture
def env(tmp_path):
    e = os.environ.copy()
    e.update({"ITB_PREFIX": "itbb", "ITB_STATE_DIR": str(tmp_path / "state")})
    return e


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_a_transfer_profile_is_refused_in_a_second_and_little_memory(
    tmp_path, env, device
):
    sc = tmp_path / "s.toml"
    sc.write_text(SCENARIO.format(profile=device))
    rc, err, wall, rss = run_measured(["run", str(sc), "--out", str(tmp_path / "run")], env)
    assert rc == 2, err
    assert f"transfer[0].profile: {device}: is a character device" in err
    assert wall < 1.0 and rss < 200e6, (wall, rss)
    assert not (tmp_path / "run").exists() and not (tmp_path / "state").exists()


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_a_profile_model_is_refused_in_a_second_and_little_memory(
    tmp_path, env, device
):
    rc, err, wall, rss = run_measured(
        ["profile", "predict", "0:100Mbit", "--volume", "1GB", "--rtt", "10ms", "--model", device],
        env,
    )
    assert rc == 2, err
    assert f"{device}: --model: is a character device, not a model file" in err
    assert wall < 1.0 and rss < 200e6, (wall, rss)


def test_a_file_that_is_not_a_model_is_bad_input(tmp_path, env):
    rc, err, _, _ = run_measured(
        [
            "profile",
            "predict",
            "0:100Mbit",
            "--volume",
            "1GB",
            "--rtt",
            "10ms",
            "--model",
            "/etc/passwd",
        ],
        env,
    )
    assert rc == 2, err
    assert "/etc/passwd: cannot read the profile model: not valid JSON" in err
    assert "internal error" not in err


def test_a_profile_date_of_a_trillion_seconds_is_refused_at_load(tmp_path, env):
    (tmp_path / "far.csv").write_text("t_s,rate_bps\n0,100000000\n1000000000000,200000000\n")
    sc = tmp_path / "s.toml"
    sc.write_text(SCENARIO.format(profile="far.csv"))
    rc, err, wall, _ = run_measured(["run", str(sc), "--out", str(tmp_path / "run")], env)
    assert rc == 2, err
    assert "step 1: date 1e+12 s is after 86400 s (24 h, the longest timeline)" in err
    assert not (tmp_path / "run").exists()  # no testbed, no run directory
    assert not Path(env["ITB_STATE_DIR"]).exists()
