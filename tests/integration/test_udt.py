"""itb-udt, the UDT endpoint (UDT4 with ITB's fixed-rate controller), over loopback:
it follows a two-step profile, logs as flow does and refuses bad input."""

from __future__ import annotations

import json
import subprocess

import pytest

from itb import native
from itb.errors import PreflightError


@pytest.fixture
def udt():
    try:
        return native.binary("itb-udt")
    except PreflightError:
        pytest.skip("itb-udt not built (make native)")


def test_a_udt_transfer_follows_its_profile(tmp_path, udt):
    recv = subprocess.Popen(
        [
            udt,
            "recv",
            "--listen",
            "127.0.0.1:6011",
            "--bytes",
            "20000000",
            "--log",
            str(tmp_path / "r.csv"),
            "--summary",
            str(tmp_path / "r.json"),
        ],
        stdout=subprocess.PIPE,
    )
    assert recv.stdout.readline().strip() == b"ready"
    send = subprocess.run(
        [
            udt,
            "send",
            "--to",
            "127.0.0.1:6011",
            "--bytes",
            "20000000",
            "--profile",
            "0:40000000,1000000:160000000",
            "--log",
            str(tmp_path / "s.csv"),
            "--summary",
            str(tmp_path / "s.json"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert send.returncode == 0, send.stderr
    assert recv.wait(timeout=10) == 0
    s, r = (json.loads((tmp_path / f"{x}.json").read_text()) for x in ("s", "r"))
    assert (
        s["ok"]
        and r["ok"]
        and r["bytes"] == 20_000_000
        and s["profile"][1] == [1_000_000, 160_000_000]
    )
    # 1 s at 40 Mbit/s (5 MB), then 15 MB at 160 Mbit/s: 1.75 s
    t = (r["last_byte_ns"] - s["start_ns"]) / 1e9
    assert t == pytest.approx(1.75, rel=0.08), t
    at = (s["rate_changes"][0][0] - s["start_ns"]) / 1e9
    assert at == pytest.approx(1.0, abs=0.005)
    rows = [line.split(",") for line in (tmp_path / "r.csv").read_text().splitlines()[1:]]
    assert sum(int(x[1]) for x in rows) == 20_000_000  # the goodput log accounts every byte
    assert s["sent"]["segments"] >= 20_000_000 // 1456


def test_udts_own_congestion_control_keeps_under_its_cap(tmp_path, udt):
    """--cc native: UDT4's congestion control (what `itb bench --cc udt` runs), capped by
    UDT_MAXBW at 80 Mbit/s of payload: 20 MB take at least 2 s, and little more on an
    idle loopback (measured 2.11-2.20 s: UDT's start below the cap)."""
    recv = subprocess.Popen(
        [udt, "recv", "--listen", "127.0.0.1:6012", "--bytes", "20000000",
         "--log", str(tmp_path / "r.csv"), "--summary", str(tmp_path / "r.json")],
        stdout=subprocess.PIPE,
    )  # fmt: skip
    assert recv.stdout.readline().strip() == b"ready"
    send = subprocess.run(
        [udt, "send", "--to", "127.0.0.1:6012", "--bytes", "20000000", "--cc", "native",
         "--max-rate-bps", "80000000", "--log", str(tmp_path / "s.csv"),
         "--summary", str(tmp_path / "s.json")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert send.returncode == 0, send.stderr
    assert recv.wait(timeout=10) == 0
    s, r = (json.loads((tmp_path / f"{x}.json").read_text()) for x in ("s", "r"))
    assert s["ok"] and r["ok"] and r["bytes"] == 20_000_000
    assert (s["cc_in_use"], s["rate_bps"], s["profile"]) == ("udt-native", 80_000_000, None)
    t = (r["last_byte_ns"] - s["start_ns"]) / 1e9
    assert 1.97 < t < 2.5, t  # 20 MB at 80 Mbit/s: 2.0 s


def test_bad_arguments_are_usage_errors(tmp_path, udt):
    for args, words in (
        (
            [
                "send",
                "--to",
                "127.0.0.1:9",
                "--bytes",
                "1",
                "--profile",
                "5:100",
                "--log",
                "x",
                "--summary",
                "y",
            ],
            "first date is 0",
        ),
        (["recv", "--listen", "127.0.0.1:9", "--log", "x", "--summary", "y"], "--bytes"),
        (["send", "--frobnicate", "1"], "unknown option"),
        (
            [
                "send",
                "--to",
                "127.0.0.1:9",
                "--bytes",
                "1",
                "--cc",
                "native",
                "--profile",
                "0:100",
                "--log",
                "x",
                "--summary",
                "y",
            ],
            "--profile is for --cc fixed",
        ),  # fmt: skip
        (["bounce"], "unknown command"),
    ):
        res = subprocess.run([udt, *args], capture_output=True, text=True, timeout=10, cwd=tmp_path)
        assert res.returncode == 2 and words in res.stderr, (args, res.stderr)
