"""Values given on the command line, checked as the library takes them: comma lists,
congestion-control names, a bottleneck capacity. A bad value is a `ScenarioError` naming
the option (exit 2)."""

from __future__ import annotations

from itb.errors import ScenarioError
from itb.scenario.experiment.algorithms import KNOWN_CCS
from itb.scenario.units import parse_rate


def csv_option(text: str, option: str, upper: bool = False) -> list[str]:
    items = [x.strip() for x in text.split(",")]
    if any(not x for x in items):
        raise ScenarioError(None, option, f"empty item in {text!r}")
    items = [x.upper() if upper else x for x in items]
    if len(set(items)) != len(items):
        raise ScenarioError(None, option, f"an item is repeated in {text!r}")
    return items


def parse_ccs(text: str, udt: bool = False) -> list[str]:
    """Known congestion controls, comma-separated; with `udt`, "udt" too (UDT4's own
    congestion control, for what runs UDT: `itb bench`)."""
    items = csv_option(text, "--cc")
    known = (*KNOWN_CCS, "udt") if udt else KNOWN_CCS
    for cc in items:
        if cc not in known:
            raise ScenarioError(
                None,
                "--cc",
                f"unknown congestion control {cc!r}; known: {', '.join(sorted(known))}",
            )
    return items


def parse_capacity(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return parse_rate(text)
    except ValueError as e:
        raise ScenarioError(None, "--capacity", str(e)) from None
