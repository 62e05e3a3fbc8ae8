"""Bandwidth profiles: the rate a transfer may send at, as steps over time.

A profile is a list of (date, rate) steps, dates relative to the transfer's start (the
moment its connections are up and it begins to send), the first at 0, strictly
increasing; each rate holds until the next date, the last one until the transfer ends; a
rate of 0 is a pause (never the first or last step)
(Guillier, Soudan, Primet, "UDT and TCP without congestion control for profile
pursuit", INRIA RR-6874, 2009, §2). Rates are payload bit/s, what the sender's pacing
or its application-level cap counts.

Written inline in a scenario, `profile = [[0, "100Mbit"], [10, "600Mbit"]]` (a date is
seconds as a number or a duration with its unit, a rate has its unit), or in a file the
scenario names: CSV with the header `t_s,rate_bps` and plain numbers (what a planner
writes), or TOML holding the same `profile = [...]` array.
"""

from __future__ import annotations

import csv
import math
import re
import tomllib
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from itb import files
from itb.errors import ScenarioError
from itb.scenario.units import UnitError, format_rate, parse_duration, parse_rate

MAX_STEPS = 10_000
# The latest date of a step: the longest timeline (sections.MAX_DURATION_US, 24 h); the
# sender's own limit (flow: dates in u64 nanoseconds after a monotonic start) is far above
MAX_DATE_US = 24 * 3600 * 1_000_000
RATE_LO = 1_000  # 1 kbit/s, as any traffic rate
RATE_HI = 100_000_000_000
CSV_HEADER = ["t_s", "rate_bps"]

Step = tuple[int, int]  # (µs after the transfer's start, payload bit/s)


def _date_us(v: object) -> int:
    """Seconds as a bare number (or a string of one: a command line's), or a duration
    with its unit."""
    if isinstance(v, bool):
        raise UnitError(f'a date is seconds or a duration such as "1.5s" (got {v!r})')
    if isinstance(v, str) and re.fullmatch(r"\s*[0-9]+(\.[0-9]+)?\s*", v):
        v = float(v)
    if isinstance(v, (int, float)):
        if not math.isfinite(v) or v < 0:
            raise UnitError(f"a date must be 0 or more seconds (got {v!r})")
        return round(Decimal(str(v)) * 1_000_000)
    return parse_duration(v)


def _rate(v: object) -> int:
    """A rate with its unit, or 0 (a pause: 0, "0" or "0bit")."""
    if (isinstance(v, int) and not isinstance(v, bool) and v == 0) or (
        isinstance(v, str) and v.strip() in ("0", "0bit")
    ):
        return 0
    r = parse_rate(v, lo=RATE_LO, hi=RATE_HI)
    if r is None:
        raise UnitError("a profile's rate must be finite")
    return r


def parse_steps(value: object) -> tuple[Step, ...]:
    """An inline profile: [[date, rate], ...]. UnitError names the step."""
    if not isinstance(value, (list, tuple)) or not value:
        raise UnitError(
            'a profile is a list of [date, rate] steps such as [[0, "100Mbit"], [10, "600Mbit"]]'
        )
    steps = []
    for k, step in enumerate(value):
        if not isinstance(step, (list, tuple)) or len(step) != 2:
            raise UnitError(f"step {k}: expected [date, rate], got {step!r}")
        try:
            steps.append((_date_us(step[0]), _rate(step[1])))
        except UnitError as e:
            raise UnitError(f"step {k}: {e}") from None
    return check(tuple(steps))


def check(steps: tuple[Step, ...]) -> tuple[Step, ...]:
    """Steps that start at 0, with strictly increasing dates, at most MAX_STEPS."""
    if not steps:
        raise UnitError("a profile needs at least one step")
    if len(steps) > MAX_STEPS:
        raise UnitError(f"{len(steps)} steps: at most {MAX_STEPS}")
    if steps[0][0] != 0:
        raise UnitError(f"step 0: a profile starts at date 0 (got {steps[0][0] / 1e6:g} s)")
    if steps[0][1] == 0 or steps[-1][1] == 0:
        k = 0 if steps[0][1] == 0 else len(steps) - 1
        raise UnitError(
            f"step {k}: a rate of 0 is a pause, between steps that send: a profile's first "
            "and last rates are above 0"
        )
    late = next((k for k, (at, _) in enumerate(steps) if at > MAX_DATE_US), None)
    if late is not None:
        raise UnitError(
            f"step {late}: date {steps[late][0] / 1e6:g} s is after "
            f"{MAX_DATE_US / 1e6:g} s (24 h, the longest timeline)"
        )
    for k in range(1, len(steps)):
        if steps[k][0] <= steps[k - 1][0]:
            raise UnitError(
                f"step {k}: date {steps[k][0] / 1e6:g} s is not after the "
                f"previous step's {steps[k - 1][0] / 1e6:g} s"
            )
    return steps


def read_file(path: Path) -> tuple[Step, ...]:
    """A profile file (.csv or .toml); UnitError names the file and the line or step."""
    try:
        text = files.read_text(path, "profile")
    except ScenarioError as e:
        raise UnitError(f"{path}: {e.reason}") from None
    if path.suffix == ".toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise UnitError(f"{path}: not valid TOML: {e}") from None
        if set(data) != {"profile"}:
            raise UnitError(f"{path}: expected exactly one key, profile = [[date, rate], ...]")
        try:
            return parse_steps(data["profile"])
        except UnitError as e:
            raise UnitError(f"{path}: {e}") from None
    if path.suffix != ".csv":
        raise UnitError(f"{path}: a profile file is .csv (t_s,rate_bps) or .toml")
    rows = list(csv.reader(text.splitlines()))
    if not rows or [c.strip() for c in rows[0]] != CSV_HEADER:
        raise UnitError(f"{path}: line 1 must be the header {','.join(CSV_HEADER)}")
    steps = []
    for line, row in enumerate(rows[1:], start=2):
        if not row or not "".join(row).strip():
            continue
        try:
            if len(row) != 2:
                raise UnitError(f"expected 2 fields, got {len(row)}")
            t, r = (Decimal(c.strip()) for c in row)
            if not t.is_finite() or t < 0 or not r.is_finite() or r != r.to_integral_value():
                raise UnitError("t_s must be 0 or more seconds and rate_bps a whole number")
            rate = int(r)
            if rate != 0 and not RATE_LO <= rate <= RATE_HI:
                raise UnitError(
                    f"rate_bps must be 0 (a pause) or {RATE_LO} to {RATE_HI} (got {rate})"
                )
            steps.append((round(t * 1_000_000), rate))
        except (InvalidOperation, UnitError) as e:
            raise UnitError(
                f"{path}, line {line}: {e if isinstance(e, UnitError) else 'not a number'}"
            ) from None
    try:
        return check(tuple(steps))
    except UnitError as e:
        raise UnitError(f"{path}: {e}") from None


NS_BITS_PER_BYTE = 8_000_000_000  # bit·ns in one byte at 1 bit/s: the integral's unit


@dataclass(frozen=True)
class Profile:
    """A checked profile, parsed once. Its integral is computed in integers exactly as the
    sender computes it (native/flow/src/profile.rs: bit·ns, a byte allowed once its 8
    bits are), so ITB's ideal completion time and the sender's pacing agree to the
    nanosecond; `flow profile-eval` lets a test hold the two equal."""

    steps: tuple[Step, ...]

    def __post_init__(self) -> None:
        check(self.steps)

    @classmethod
    def of(cls, steps) -> Profile:
        """From steps as a record holds them ([[µs, bit/s], ...])."""
        return cls(tuple((int(t), int(r)) for t, r in steps))

    def bytes_by_ns(self, elapsed_ns: int) -> int:
        """Payload bytes the profile allows in its first `elapsed_ns`."""
        bits_ns = 0
        for k, (at_us, rate) in enumerate(self.steps):
            at = at_us * 1000
            if elapsed_ns <= at:
                break
            end = (
                min(self.steps[k + 1][0] * 1000, elapsed_ns)
                if k + 1 < len(self.steps)
                else elapsed_ns
            )
            bits_ns += rate * (end - at)
        return bits_ns // NS_BITS_PER_BYTE

    def when_allowed_ns(self, volume_bytes: int) -> int:
        """The first date (ns after the start) by which `volume_bytes` are allowed: the
        completion time of a transfer that follows the profile exactly."""
        need = volume_bytes * NS_BITS_PER_BYTE
        for k, (at_us, rate) in enumerate(self.steps):
            if k + 1 < len(self.steps):
                room = rate * (self.steps[k + 1][0] - at_us) * 1000
                if need > room:
                    need -= room
                    continue
            return at_us * 1000 - (-need // rate)  # ceil(need / rate)
        raise AssertionError("the last step lasts forever")

    def flow_arg(self) -> str:
        """`flow send --profile` (T_US:BPS,...)."""
        return ",".join(f"{t}:{r}" for t, r in self.steps)

    def describe(self) -> str:
        return ", ".join(f"{at / 1e6:g} s: {format_rate(r)}" for at, r in self.steps)


def bits_by(steps: tuple[Step, ...], t_us: int) -> float:
    """Payload bits the profile allows from its start to t_us (whole bytes)."""
    return Profile.of(steps).bytes_by_ns(t_us * 1000) * 8.0


def time_to_send_us(steps: tuple[Step, ...], volume_bytes: int) -> float:
    """When the profile has allowed `volume_bytes` of payload: the completion time of a
    transfer that follows it exactly (µs after its start)."""
    return Profile.of(steps).when_allowed_ns(volume_bytes) / 1000


def describe(steps: tuple[Step, ...]) -> str:
    return Profile.of(steps).describe()
