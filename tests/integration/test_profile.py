"""Profile pursuit through the emulated WAN: a transfer that follows a three-step rate
profile, measured where it matters, at the bottleneck (the link emulator's 1 ms log)."""

from __future__ import annotations

import pandas as pd
import pytest

from .conftest import itb

SCENARIO = """
[testbed]
name = "profile-test"
[dumbbell]
pairs = 1
[bottleneck]
rate = "500Mbit"
rtt = "20ms"

[experiment]
duration = "30s"

[[transfer]]
id = "p"
src = "l1"
dst = "r1"
volume = "{volume}"
{how}
profile = [[0, "100Mbit"], [3, "400Mbit"], [6, "200Mbit"]]
"""
# 3 s at 100 Mbit/s, 3 s at 400 and 2 s at 200: 237.5 MB, 8 s at the profile's rates.
VOLUME = 237_500_000
STEPS = [(0.0, 100e6), (3.0, 400e6), (6.0, 200e6)]
# a full segment's payload as an Ethernet frame: TCP with timestamps 1448 in 1514, UDT
# 1456 in 1514 (IPv4 + UDP + UDT headers)
FRAME = {"tcp": 1514 / 1448, "udt": 1514 / 1456}


def step_rates(run, frame: float, end_s: float = 8.0) -> list[tuple[float, float]]:
    """(profile rate, wire rate at the bottleneck / the profile's wire rate) per step,
    from 1 s after the step's date to the next one."""
    tr = pd.read_parquet(run / "transfers.parquet")
    assert tr["ok"].all(), tr["error"].tolist()
    start = int(tr["start_ns"].iloc[0])
    b = pd.read_parquet(run / "bottleneck.parquet")
    fwd = b[(b["link"] == "rl-rr") & (b["direction"] == "forward")]
    t = (fwd["t_ns"] - start) / 1e9
    out = []
    for k, (at, rate) in enumerate(STEPS):
        hi = STEPS[k + 1][0] if k + 1 < len(STEPS) else end_s - 0.5
        rows = fwd[(t > at + 1.0) & (t <= hi)]
        got = rows["bytes"].sum() * 8 / rows["interval_s"].sum()
        out.append((rate, got / (rate * frame)))
    return out


MECHANISMS = {"nocc-pacing": 'cc = "nocc"\nenforce = "pacing"',
              "reno-application": 'cc = "reno"\nenforce = "application"',
              "udt": 'protocol = "udt"'}


@pytest.mark.parametrize("mechanism, tolerance", [("nocc-pacing", 0.03), ("reno-application", 0.05),
                                                  ("udt", 0.08)])
def test_a_transfer_follows_its_profile_at_the_bottleneck(engine_env, isolated, mechanism,
                                                          tolerance):
    sc = isolated / "profile.toml"
    sc.write_text(SCENARIO.format(volume=VOLUME, how=MECHANISMS[mechanism]))
    run = isolated / "run"
    res = itb("run", str(sc), "--out", str(run), env=engine_env, timeout=300)
    assert res.returncode == 0, res.stderr + res.stdout
    for rate, ratio in step_rates(run, FRAME["udt" if mechanism == "udt" else "tcp"]):
        assert abs(ratio - 1) <= tolerance, f"{mechanism}: step {rate / 1e6:g} Mbit/s at {ratio:.4f}"
    tr = pd.read_parquet(run / "transfers.parquet")
    assert tr["profile_s"].iloc[0] == pytest.approx(8.0)
    # Completion measured from the first write to the last byte read: late only by what
    # a transfer cannot avoid (the path's one-way delay, the step-ups' cost).
    assert 0 < tr["lateness_s"].iloc[0] < 0.3, tr[["completion_s", "lateness_s"]]
