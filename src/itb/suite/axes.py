"""RR-6244 Table 5's axes that change a class (docs/benchmark.md): the aggregation level
K of the data-centre classes (`--k 1|10`), the RTT (`--rtt`: one value for every path,
or a mix of modes, one per group of host pairs) and the nominal access rate C_a
(`--access`: what the class is scaled from). Each returns what it sets, checked, or
raises a ScenarioError naming its option."""

from __future__ import annotations

from dataclasses import replace

from itb.errors import ScenarioError
from itb.scenario.units import format_duration, parse_duration, parse_rate
from itb.suite.classes import DATA_CENTRE_K, ItbClass
from itb.suite.scaling import MAX_RTT_MS

K_CHOICES = (1, DATA_CENTRE_K)  # Table 3: the data-centre classes' "K = 1 or 10"
# Table 5's RTT values (LAN, metropolitan, transcontinental); `--rtt mix` uses them all
TABLE5_RTTS_MS = (1.0, 20.0, 200.0)
MAX_RTT_MODES = 8  # one per host pair of the generated dumbbell at most
MIN_ACCESS_BPS, MAX_ACCESS_BPS = 1_000_000, 100_000_000_000


def check_k(k: int) -> int:
    if k not in K_CHOICES:
        raise ScenarioError(
            None,
            "--k",
            f"{k}: the data-centre classes take K = 1 or 10 (RR-6244 Table 3); "
            "the Internet classes keep K = 1000",
        )
    return k


def parse_rtt(text: str | None) -> tuple[float, ...]:
    """--rtt: "" / None (each class's own), one RTT ("1ms"), "mix" (Table 5's 1, 20 and
    200 ms) or modes ("20ms,200ms"), in ms, increasing, without repeats."""
    if text is None or not text.strip():
        return ()
    if text.strip().lower() == "mix":
        return TABLE5_RTTS_MS
    modes = []
    for part in (p.strip() for p in text.split(",")):
        try:
            us = parse_duration(part)
        except ValueError as e:
            raise ScenarioError(None, "--rtt", f"{part!r}: {e}") from None
        if not 0 < us <= MAX_RTT_MS * 1000:
            raise ScenarioError(
                None,
                "--rtt",
                f"{part!r}: an emulated path takes round trips above 0 and up to "
                f"{format_duration(int(MAX_RTT_MS * 1000))}",
            )
        modes.append(us / 1000)
    if len(set(modes)) != len(modes):
        raise ScenarioError(None, "--rtt", f"{text!r} repeats an RTT")
    if len(modes) > MAX_RTT_MODES:
        raise ScenarioError(None, "--rtt", f"at most {MAX_RTT_MODES} modes, one per host pair")
    return tuple(sorted(modes))


def rtt_text(modes: tuple[float, ...]) -> str:
    """The RTT axis as the key and the table write it: "20ms", "1ms,20ms,200ms"."""
    return ",".join(format_duration(int(round(m * 1000))) for m in modes)


def parse_access(text: str | None) -> int | None:
    """--access: the documents' hosts' C_a (100Mbit, 1Gbit, 10Gbit); None: 1 Gbit/s."""
    if text is None:
        return None
    try:
        bps = parse_rate(text)
    except ValueError as e:
        raise ScenarioError(None, "--access", str(e)) from None
    if bps is None or not MIN_ACCESS_BPS <= bps <= MAX_ACCESS_BPS:
        raise ScenarioError(None, "--access", f"{text!r}: give 1 Mbit/s to 100 Gbit/s")
    return bps


def with_axes(cls: ItbClass, k: int = DATA_CENTRE_K, rtt_modes: tuple[float, ...] = ()) -> ItbClass:
    """The class with --k (data-centre classes only) and --rtt applied. With a mix the
    class's RTT is its longest mode (what durations and windows are bounded by) and the
    modes are kept for the generator that spreads them over the host pairs."""
    out = cls
    if k != DATA_CENTRE_K and cls.k == DATA_CENTRE_K:
        out = replace(out, k=k)
    if rtt_modes:
        out = replace(out, rtt_ms=max(rtt_modes), rtt_modes_ms=rtt_modes)
    return out
