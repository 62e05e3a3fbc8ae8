"""The texts the studies' options take, parsed: `(text, flag) → value`, a `ScenarioError`
naming the flag otherwise (exit 2). They are the `parse` of the fields' `Option`s
(itb.study.args); what they return is the field's value."""

from __future__ import annotations

import math
from collections.abc import Callable

from itb.errors import ScenarioError
from itb.scenario.options import csv_option, parse_capacity, parse_ccs
from itb.scenario.units import UnitError, parse_buffer, parse_duration, parse_rate, parse_size

SYMMETRIC = "sym"  # a reverse level: as many reverse as forward sources


def ccs(text: str, flag: str) -> tuple[str, ...]:
    """Known congestion controls, comma-separated (errors name --cc, as `parse_ccs`)."""
    return tuple(parse_ccs(text))


def one_cc(text: str, flag: str) -> str:
    """One known congestion control."""
    refs = parse_ccs(text)
    if len(refs) != 1:
        raise ScenarioError(None, flag, f"{text!r}: give one congestion control")
    return refs[0]


def texts(text: str, flag: str) -> tuple[str, ...]:
    """A comma list of distinct items."""
    return tuple(csv_option(text, flag))


def choices(allowed: tuple[str, ...], what: str) -> Callable[[str, str], tuple[str, ...]]:
    """A comma list of distinct items, each one of `allowed` (errors name the first other)."""

    def parse(text: str, flag: str) -> tuple[str, ...]:
        chosen = texts(text, flag)
        bad = [x for x in chosen if x not in allowed]
        if bad:
            raise ScenarioError(None, flag, f"unknown {what} {bad[0]!r}; give {', '.join(allowed)}")
        return chosen

    return parse


def levels(text: str, flag: str, allow_sym: bool = False) -> tuple:
    """Levels of 0–10, comma-separated and distinct ("sym" among them if allowed)."""
    out: list = []
    for part in (p.strip() for p in text.split(",")):
        if allow_sym and part.lower() in (SYMMETRIC, "symmetric"):
            out.append(SYMMETRIC)
            continue
        try:
            v = float(part)
        except ValueError:
            raise ScenarioError(
                None, flag, f"{part!r} is not a number" + (" or 'sym'" if allow_sym else "")
            ) from None
        if not (0 <= v <= 10):
            raise ScenarioError(None, flag, f"{part} is outside 0–10")
        out.append(v)
    if len(set(out)) != len(out):
        raise ScenarioError(None, flag, f"a level is repeated in {text!r}")
    return tuple(out)


def sym_levels(text: str, flag: str) -> tuple:
    """Levels, "sym" among them allowed."""
    return levels(text, flag, allow_sym=True)


def optional_sym_levels(text: str, flag: str) -> tuple:
    """Levels, "sym" allowed; '' for none."""
    return sym_levels(text, flag) if text.strip() else ()


def level_range(text: str, flag: str) -> tuple[float, float]:
    """LO,HI: two increasing levels."""
    lo_hi = levels(text, flag)
    if len(lo_hi) != 2 or lo_hi[0] >= lo_hi[1]:
        raise ScenarioError(None, flag, "give two increasing levels, e.g. 1,2")
    return lo_hi[0], lo_hi[1]


def once(values: tuple, flag: str, show) -> tuple:
    """The values, refused when one is given twice (two cells would be one)."""
    seen = set()
    for v in values:
        if v in seen:
            raise ScenarioError(None, flag, f"{show(v)} is given twice")
        seen.add(v)
    return values


def rtt_ms(text: str, flag: str) -> float:
    """One duration, in ms."""
    try:
        return parse_duration(text) / 1000
    except ValueError as e:
        raise ScenarioError(None, flag, str(e)) from None


def durations_ms(text: str, flag: str) -> tuple[float, ...]:
    """Durations, comma-separated, in ms."""
    try:
        return tuple(parse_duration(x) / 1000 for x in csv_option(text, flag))
    except ValueError as e:
        raise ScenarioError(None, flag, str(e)) from None


def distinct_ms(text: str, flag: str) -> tuple[float, ...]:
    """Durations in ms, none given twice ("20ms,0.02s" is one twice)."""
    return once(durations_ms(text, flag), flag, lambda v: f"{v:g} ms")


MAX_PATH_RTT_MS = 2000.0  # one emulated link: at most 1 s each way


def path_rtts_ms(text: str, flag: str) -> tuple[float, ...]:
    """RTTs in ms, none given twice, each above 0 and at most what one emulated link takes."""
    values = distinct_ms(text, flag)
    if any(not 0 < r <= MAX_PATH_RTT_MS for r in values):
        raise ScenarioError(None, flag, "each RTT above 0 and at most 2 s")
    return values


def counts(hi: int, example: str) -> Callable[[str, str], tuple[int, ...]]:
    """A parser of whole numbers, comma-separated, 1 to `hi` each, none twice."""

    def parse(text: str, flag: str) -> tuple[int, ...]:
        try:
            values = tuple(int(p) for p in text.split(","))
        except ValueError:
            raise ScenarioError(
                None, flag, f"{text!r}: give whole numbers, e.g. {example}"
            ) from None
        if not values or any(not 1 <= n <= hi for n in values):
            raise ScenarioError(None, flag, f"{text!r}: each count 1 to {hi}")
        return once(values, flag, str)

    return parse


def one_ms(text: str, flag: str) -> float:
    """One duration of a list option, in ms."""
    values = distinct_ms(text, flag)
    if len(values) != 1:
        raise ScenarioError(None, flag, "give one RTT")
    return values[0]


def margins(text: str, flag: str) -> tuple[float, ...]:
    """ "0:10:0.5" (percent, from:to:step) or a comma list of percents → shares of C."""
    try:
        if ":" in text:
            lo, hi, step = (float(x) for x in text.split(":"))
            if step <= 0 or hi < lo:
                raise ValueError("FROM:TO:STEP needs TO ≥ FROM and STEP > 0")
            n = math.floor((hi - lo) / step + 1e-9)  # never past TO
            values = [lo + k * step for k in range(n + 1)]
        else:
            values = [float(x) for x in csv_option(text, flag)]
    except ValueError as e:
        raise ScenarioError(None, flag, f"{text!r}: {e}") from None
    if not values or any(not 0 <= v < 100 for v in values):
        raise ScenarioError(None, flag, "give percents of C in [0, 100)")
    shares = tuple(round(v / 100, 6) for v in values)
    return once(shares, flag, lambda v: f"{v * 100:g} %")


def rate(text: str, flag: str) -> int:
    """A finite rate of 1 kbit/s to 100 Gbit/s (bit/s)."""
    try:
        r = parse_rate(text, lo=1_000, hi=100_000_000_000)
    except ValueError as e:
        raise ScenarioError(None, flag, str(e)) from None
    if r is None:
        raise ScenarioError(None, flag, "give a finite rate")
    return r


def rates(text: str, flag: str) -> tuple[int, ...]:
    """Finite rates, comma-separated."""
    try:
        values = tuple(parse_rate(x, lo=1_000, hi=100_000_000_000) for x in csv_option(text, flag))
    except ValueError as e:
        raise ScenarioError(None, flag, str(e)) from None
    finite = tuple(r for r in values if r is not None)
    if len(finite) != len(values):
        raise ScenarioError(None, flag, "give finite rates, e.g. 100Mbit,200Mbit")
    return finite


def each_rate(text: str, flag: str) -> tuple[int, ...]:
    """Rates, comma-separated, each checked as `rate`."""
    return tuple(rate(x, flag) for x in csv_option(text, flag))


def distinct_rates(text: str, flag: str) -> tuple[int, ...]:
    """Rates, none given twice."""
    return once(each_rate(text, flag), flag, lambda v: f"{v / 1e6:g} Mbit/s")


def within(values: tuple[int, ...], capacity_bps: int, flag: str) -> None:
    """Every rate at most C."""
    from itb.scenario.units import format_rate

    for r in values:
        if r > capacity_bps:
            raise ScenarioError(
                None, flag, f"{format_rate(r)} is more than C ({capacity_bps / 1e6:g} Mbit/s)"
            )


def capacity(text: str, flag: str) -> int | None:
    """--capacity: a rate (checked against the testbed when the study's C is made)."""
    return parse_capacity(text)


def capacity_bps(given: int | None) -> int:
    """C: the one given, else the calibrated one (`make_scale`'s checks)."""
    from itb.suite.scaling import make_scale

    cap = make_scale(factor=None, capacity_bps=given, transfer_time_s=1.0).capacity_bps
    assert cap is not None  # a scale without a factor has a capacity
    return cap


def buffer(text: str, flag: str) -> str:
    """--buffer as a scenario's `buffer` (its unit checked here; against the path when
    the cells are made)."""
    try:
        parse_buffer(text)
    except (UnitError, ValueError) as e:
        raise ScenarioError(None, flag, str(e)) from None
    return text


def volume(text: str, flag: str) -> int:
    """A volume above 0 (bytes)."""
    try:
        v = parse_size(text)
    except ValueError as e:
        raise ScenarioError(None, flag, str(e)) from None
    if v <= 0:
        raise ScenarioError(None, flag, "give a volume above 0")
    return v


def loads(text: str, flag: str) -> tuple[float, ...]:
    """Offered loads C_g, comma-separated, each 0.1 to 10, none twice."""
    try:
        values = tuple(float(p) for p in text.split(","))
    except ValueError:
        raise ScenarioError(None, flag, f"{text!r}: give numbers, e.g. 0.8,2") from None
    if not values or any(not 0.1 <= v <= 10 for v in values):
        raise ScenarioError(None, flag, f"{text!r}: each C_g 0.1 to 10")
    return once(values, flag, str)
