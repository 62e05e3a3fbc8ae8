"""calibration.json read back through its typed record: what `itb calibrate` writes
reads as written, one from before the format field reads as format 1, a newer format is
refused, named; the run's CPU-headroom warning reads the emulator's figure from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from itb.calibration.record import Calibration, read_calibration
from itb.calibration.verdict import Check
from itb.engine.checks import cpu_headroom_warnings
from itb.rundir.records import RunDirError
from itb.scenario.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]


def written(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(data))
    return path


def a_calibration() -> Calibration:
    cal = Calibration(
        testbed={"name": "dumbbell"},
        path={
            "src": "l1",
            "dst": "r1",
            "rtt_ms": 20.0,
            "rate_bps": 1_000_000_000,
            "loss": 0.0,
            "queue_delay_ms": 20.0,
            "bdp_bytes": 2_500_000,
        },
    )
    cal.checks.append(Check("idle RTT", 20.0, 20.1, "ms", 1.0, ok=True))
    cal.checks.append(Check("TCP goodput, 1 flow", 1000, 850, "Mbit/s", 10.0, ok=False))
    cal.emulator["cpu_pct_during_tcp"] = 45.0
    return cal


def test_what_itb_calibrate_writes_reads_back_typed(tmp_path):
    rec = read_calibration(written(tmp_path, a_calibration().to_json()))
    assert rec.format == 1 and rec.path.rate_bps == 1_000_000_000 and rec.ok is False
    assert rec.checks_off() == ["TCP goodput, 1 flow"]
    assert rec.emulator.cpu_pct_during_tcp == 45.0


def test_a_calibration_from_before_the_format_field_reads_as_format_1(tmp_path):
    data = a_calibration().to_json()
    del data["format"]
    assert read_calibration(written(tmp_path, data)).format == 1


def test_a_calibration_of_a_newer_format_is_refused_naming_it(tmp_path):
    path = written(tmp_path, {**a_calibration().to_json(), "format": 7})
    with pytest.raises(RunDirError, match="field format: 7 is not a format this ITB reads"):
        read_calibration(path)


def test_the_emulators_cpu_scales_with_the_testbeds_fastest_emulated_link(tmp_path):
    # 45 % of a core at 1 Gbit/s; the dumbbell's bottleneck is 1 Gbit/s too: 45 %, no
    # warning. At 2.5 Gbit/s it would need 112 % (> 90 %): warned.
    sc = load_scenario(ROOT / "scenarios" / "nxe" / "fair-share-4x50M.toml")
    rate = max(lk.forward.rate_bps for lk in sc.topology.links if lk.emulated)
    data = a_calibration().to_json()
    data["path"]["rate_bps"] = rate  # calibrated at the scenario's own rate: 45 %
    assert cpu_headroom_warnings(sc, written(tmp_path, data)) == []
    data["path"]["rate_bps"] = int(rate / 2.5)  # 45 % at 1/2.5 of it: 112 % needed
    warning = cpu_headroom_warnings(sc, written(tmp_path, data))
    assert len(warning) == 1 and "about 112 % of a core" in warning[0]
