"""Units of the scenario files: rates, durations, sizes, loss probabilities, buffers.

Every parser takes what the user typed (a TOML string, sometimes a number) and returns
an exact integer in the base unit (bit/s, µs, bytes) or raises UnitError whose text is
the reason, written for a human. Decimal arithmetic keeps "2.5Gbit" exact.

Rules shared by all quantities: a non-zero value needs a unit; zero may be written
bare (0 or "0"); negative numbers, NaN, exponents ("1e3ms") and leading dots are errors.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Literal


class UnitError(ValueError):
    """A quantity could not be parsed or is out of range; str(error) is the reason."""


RATE_MIN = 10_000_000  # 10 Mbit/s: the smallest link capacity ITB supports
RATE_MAX = 40_000_000_000  # 40 Gbit/s: the largest a scenario may ask for (calibration says
# whether the testbed keeps it: docs/calibration.md)

_NUMBER = re.compile(r"(?P<num>[0-9]+(?:\.[0-9]+)?)\s*(?P<unit>\S*)")


def _split(value: object, what: str, example: str) -> tuple[Decimal, str]:
    """Split "2.5Gbit" into (Decimal("2.5"), "Gbit"); bare zero gives (0, "")."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise UnitError(f"expected a {what} like {example!r}, got {value!r}")
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise UnitError(f"{value!r} is not a {what}; write e.g. {example!r}")
        if value < 0:
            raise UnitError(f"a {what} must not be negative (got {value!r})")
        if value == 0:
            return Decimal(0), ""
        raise UnitError(f"{value!r} has no unit; write a {what} like {example!r} (in quotes)")
    text = value.strip()
    if text.startswith("-"):
        raise UnitError(f"a {what} must not be negative (got {value!r})")
    m = _NUMBER.fullmatch(text)
    if m is None:
        raise UnitError(f"{value!r} is not a {what}; write e.g. {example!r}")
    num, unit = Decimal(m["num"]), m["unit"]
    if unit == "" and num != 0:
        raise UnitError(f"{value!r} has no unit; write a {what} like {example!r}")
    return num, unit


def _to_int(d: Decimal) -> int:
    return int(d.to_integral_value(rounding=ROUND_HALF_EVEN))


def _plain(d: Decimal) -> str:
    """Decimal without exponent or trailing zeros: 2.50 → "2.5", 1E+2 → "100"."""
    text = format(d.normalize(), "f")
    return text


# --- rates (bit/s, decimal SI) -------------------------------------------------------

# Prefix letter (any case: tc writes "mbit") followed by bit, bps or b/s. "bps" means
# bits per second here, as in network specs (unlike tc, where it means bytes).
_RATE_UNIT = re.compile(r"(?P<prefix>[kKmMgG]?)(?:bit|bps|b/s)")
_RATE_PREFIX = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}
_BYTE_RATE = re.compile(r"[kKmMgGtT]?(?:B|B/s|Bps|byte|bytes)")
_RATE_UNITS_HELP = "bit, kbit, Mbit, Gbit (or kbps/Mbps/Gbps, kb/s/Mb/s/Gb/s)"


def parse_rate(
    value: object, *, lo: int | None = RATE_MIN, hi: int | None = RATE_MAX
) -> int | None:
    """ "100Mbit" → 100_000_000 bit/s; "unlimited" → None. Range [lo, hi] inclusive."""
    if isinstance(value, str) and value.strip().lower() == "unlimited":
        return None
    num, unit = _split(value, "rate", "100Mbit")
    if unit == "":
        raise UnitError("a rate must be positive; write e.g. '100Mbit', or 'unlimited'")
    m = _RATE_UNIT.fullmatch(unit)
    if m is None:
        if _BYTE_RATE.fullmatch(unit):
            raise UnitError(
                f"rates are in bits per second and {unit!r} is bytes; "
                f"write e.g. '800Mbit' for 100 MB/s (got {value!r})"
            )
        raise UnitError(
            f"unknown rate unit {unit!r} in {value!r}; use {_RATE_UNITS_HELP} or 'unlimited'"
        )
    bps = _to_int(num * _RATE_PREFIX[m["prefix"].lower()])
    if bps <= 0:
        raise UnitError(f"a rate must be positive (got {value!r})")
    if (lo is not None and bps < lo) or (hi is not None and bps > hi):
        low = format_rate(lo) if lo is not None else "0"
        high = format_rate(hi) if hi is not None else "any"
        raise UnitError(
            f"rate {value!r} is outside the supported range {low} to {high} (or 'unlimited')"
        )
    return bps


def format_rate(bps: int | None) -> str:
    """Inverse of parse_rate: 2_500_000_000 → "2.5Gbit", None → "unlimited"."""
    if bps is None:
        return "unlimited"
    for unit, factor in (("Gbit", 10**9), ("Mbit", 10**6), ("kbit", 10**3)):
        if bps >= factor:
            return _plain(Decimal(bps) / factor) + unit
    return f"{bps}bit"


# --- durations (µs) ------------------------------------------------------------------

_DURATION_UNITS = {"us": 1, "µs": 1, "μs": 1, "ms": 1_000, "s": 1_000_000}


def parse_duration(value: object) -> int:
    """ "20ms" → 20_000 µs; "1.5ms" → 1_500; "0" → 0. Rounded to whole microseconds."""
    num, unit = _split(value, "duration", "20ms")
    if unit == "":
        return 0
    factor = _DURATION_UNITS.get(unit)
    if factor is None:
        raise UnitError(f"unknown duration unit {unit!r} in {value!r}; use us, ms or s")
    return _to_int(num * factor)


def format_duration(us: int) -> str:
    """Inverse of parse_duration: 20_000 → "20ms", 1_500_000 → "1.5s", 0 → "0ms"."""
    if us == 0:
        return "0ms"
    for unit, factor in (("s", 1_000_000), ("ms", 1_000)):
        if us >= factor:
            return _plain(Decimal(us) / factor) + unit
    return f"{us}us"


# --- sizes (bytes) -------------------------------------------------------------------

_SIZE_UNITS = {
    "B": 1,
    "kB": 10**3, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
    "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40,
}  # fmt: skip


def parse_size(value: object) -> int:
    """ "50MB" → 50_000_000 bytes; "64KiB" → 65_536. Lowercase b (bits) is refused."""
    num, unit = _split(value, "size", "50MB")
    if unit == "":
        return 0
    factor = _SIZE_UNITS.get(unit)
    if factor is None:
        if unit.lower() in {u.lower() for u in _SIZE_UNITS} or unit.endswith("b"):
            raise UnitError(
                f"{unit!r} in {value!r}: sizes are bytes, written with a capital B (e.g. '50MB', '64KiB')"
            )
        raise UnitError(
            f"unknown size unit {unit!r} in {value!r}; use B, kB, MB, GB, KiB, MiB or GiB"
        )
    return _to_int(num * factor)


def format_size(nbytes: int) -> str:
    """Inverse of parse_size in decimal units: 2_500_000 → "2.5MB", 1500 → "1.5kB"."""
    for unit, factor in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if nbytes >= factor:
            return _plain(Decimal(nbytes) / factor) + unit
    return f"{nbytes}B"


# --- loss probability ----------------------------------------------------------------


def parse_loss(value: object) -> float:
    """Loss probability in [0, 1]: "1%" → 0.01, or a bare TOML float such as 0.01.

    A bare integer other than 0 is refused: `loss = 1` is too easily meant as 1 %.
    """
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise UnitError(
            f"expected a percentage like '1%' or a probability like 0.01, got {value!r}"
        )
    if isinstance(value, int):
        if value == 0:
            return 0.0
        raise UnitError(
            f"ambiguous loss {value!r}; write a percentage like '{value}%' or a probability like 0.01"
        )
    if isinstance(value, float):
        if not math.isfinite(value):
            raise UnitError(f"{value!r} is not a probability")
        if value < 0:
            raise UnitError(f"a loss probability must not be negative (got {value!r})")
        if value > 1:
            raise UnitError(
                f"a loss probability is at most 1.0 (got {value!r}); for percentages write e.g. '1%'"
            )
        return value
    text = value.strip()
    if text.startswith("-"):
        raise UnitError(f"a loss must not be negative (got {value!r})")
    m = _NUMBER.fullmatch(text)
    if m is None or m["unit"] != "%":
        raise UnitError(
            f"{value!r} is not a percentage; write e.g. '1%' or '0.5%' (a file may also give a "
            "bare probability, loss = 0.01)"
        )
    pct = Decimal(m["num"])
    if pct > 100:
        raise UnitError(f"a loss is at most 100% (got {value!r})")
    return float(pct / 100)


# --- buffers -------------------------------------------------------------------------

_BDP = re.compile(r"(?i)(?P<num>[0-9]+(?:\.[0-9]+)?)\s*bdp")
_PACKETS = re.compile(r"(?i)(?P<num>[0-9]+(?:\.[0-9]+)?)\s*(?:p|pkt|pkts|packet|packets)")


@dataclass(frozen=True)
class BufferSpec:
    """A queue limit as written: bytes, packets, or a multiple of the bandwidth-delay product."""

    kind: Literal["bytes", "packets", "bdp"]
    amount: int | float

    def __str__(self) -> str:
        if self.kind == "bytes":
            return format_size(int(self.amount))
        suffix = "pkt" if self.kind == "packets" else "bdp"
        return _plain(Decimal(str(self.amount))) + suffix

    def resolve(self, rate_bps: int | None, rtt_us: int, mtu: int) -> tuple[int | None, int | None]:
        """(queue_bytes, queue_packets) for a link direction; at least one MTU.

        A BDP multiple on an unlimited link has no meaning (no queue builds): unlimited.
        """
        if self.kind == "packets":
            if self.amount < 1:
                raise UnitError(f"buffer {self} is below one packet (one MTU, {mtu} B)")
            return None, int(self.amount)
        if self.kind == "bytes":
            nbytes = int(self.amount)
            detail = ""
        else:
            if rate_bps is None:
                return None, None
            nbytes = _to_int(Decimal(str(self.amount)) * rate_bps * rtt_us / 8_000_000)
            detail = (
                f" ({self} of {format_rate(rate_bps)} × {format_duration(rtt_us)} = {nbytes} B)"
            )
        if nbytes < mtu:
            raise UnitError(
                f"buffer {self}{detail} is below one MTU ({mtu} B); "
                "give a larger size, a packet count or a larger BDP multiple"
            )
        return nbytes, None


def parse_buffer(value: object) -> BufferSpec:
    """ "2MB" / "1500000B" (bytes), "100pkt" / "100p" (packets), "1bdp" / "0.5bdp"."""
    if isinstance(value, BufferSpec):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("-"):
            raise UnitError(f"a buffer must not be negative (got {value!r})")
        if m := _BDP.fullmatch(text):
            return BufferSpec("bdp", float(m["num"]))
        if m := _PACKETS.fullmatch(text):
            if "." in m["num"]:
                raise UnitError(f"a packet count must be a whole number (got {value!r})")
            return BufferSpec("packets", int(m["num"]))
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value != 0:
        raise UnitError(
            f"{value!r} has no unit; give bytes ('2MB'), packets ('100pkt') or a BDP multiple ('1bdp')"
        )
    try:
        return BufferSpec("bytes", parse_size(value))
    except UnitError as e:
        raise UnitError(
            f"{e}; a buffer may also be packets ('100pkt') or a BDP multiple ('1bdp')"
        ) from None
