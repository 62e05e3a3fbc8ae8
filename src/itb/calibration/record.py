"""calibration.json: the calibration as `itb calibrate` builds and writes it
(`Calibration`: its checks, figures and warnings), and as a typed, versioned record (what
`itb calibrate --json` and a run's quick calibration write) with its one reader for
whoever uses a calibration: the benchmark's scale (the calibrated rate), a run's
preflight (the emulator's CPU).

`format` is 1; a calibration written before the field has the same fields and reads as 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from itb.calibration.verdict import Check
from itb.rundir.records import Record, read_record

CALIBRATION_FORMAT = 1
# where `make calibrate` (`itb calibrate --json-file`) writes the default testbed's: what
# the benchmark scales from and what a sweep copies beside its results
DEFAULT_CALIBRATION = Path("runs/calibration.json")


@dataclass
class Calibration:
    testbed: dict
    path: dict
    checks: list[Check] = field(default_factory=list)
    inventory: dict = field(default_factory=dict)
    emulator: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    udp_mtu: dict = field(default_factory=dict)  # the figures of the MTU-size UDP test

    @property
    def ok(self) -> bool:
        return all(c.ok is not False for c in self.checks)

    def to_json(self) -> dict:
        return {
            "format": CALIBRATION_FORMAT,
            "testbed": self.testbed,
            "path": self.path,
            "ok": self.ok,
            "checks": [c.to_json() for c in self.checks],
            "inventory": self.inventory,
            "emulator": self.emulator,
            "warnings": self.warnings,
            "udp_mtu": self.udp_mtu,
        }


class CalibratedPath(Record):
    src: str | None = None
    dst: str | None = None
    rtt_ms: float | None = None
    rate_bps: int | None = None
    loss: float = 0.0
    queue_delay_ms: float | None = None
    bdp_bytes: int | None = None


class CheckRecord(Record):
    quantity: str
    configured: float | None = None
    measured: float | None = None
    unit: str = ""
    tolerance_pct: float | None = None
    detail: str = ""
    ok: bool | None = None
    error_pct: float | None = None
    cause: str | None = None


class EmulatorFigures(Record):
    cpu_pct_during_tcp: float | None = None


class CalibrationRecord(Record):
    WHAT: ClassVar[str] = "a calibration (calibration.json)"
    VERSION_FIELD: ClassVar[str | None] = "format"
    VERSION: ClassVar[int] = CALIBRATION_FORMAT
    VERSION_MISSING: ClassVar[int | None] = CALIBRATION_FORMAT
    format: int = CALIBRATION_FORMAT
    testbed: dict = {}

    @classmethod
    def other_version_hint(cls, data: dict) -> str:
        return "run `itb calibrate` again to write one this ITB reads"

    path: CalibratedPath
    ok: bool | None = None
    checks: list[CheckRecord] = []
    inventory: dict = {}
    emulator: EmulatorFigures = EmulatorFigures()
    warnings: list[str] = []
    udp_mtu: dict = {}

    def checks_off(self) -> list[str]:
        return [c.quantity for c in self.checks if c.ok is False]


def read_calibration(path: Path) -> CalibrationRecord:
    """FileNotFoundError when there is none; RunDirError (exit 2) naming the file and
    field when it is not a calibration this ITB reads."""
    return read_record(path, CalibrationRecord)
