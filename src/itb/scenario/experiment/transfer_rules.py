"""What a transfer's rate, profile, deadline and protocol must satisfy against the path
it crosses (`itb.scenario.experiment.timeline.resolve` calls these while it resolves a
`[[transfer]]` or a paced `[[command]]`; `fail` raises the ScenarioError naming the
field)."""

from __future__ import annotations

from pathlib import Path

from itb.errors import ScenarioError
from itb.scenario.experiment import profile as profiles
from itb.scenario.experiment.sections import UDT_NATIVE
from itb.scenario.testbed.model import Topology
from itb.scenario.units import UnitError, format_rate


def event_profile(t, where: str, source: str | None) -> tuple[profiles.Step, ...] | None:
    """A transfer's or a command's profile steps: inline, or read from the file it names
    (relative to the scenario file)."""
    if t.profile is None:
        return None
    if getattr(t, "rate", None) is not None:
        raise ScenarioError(
            source, f"{where}.profile", "a transfer has a rate or a profile, not both"
        )
    if not isinstance(t.profile, str):
        return t.profile
    path = Path(t.profile)
    if not path.is_absolute() and source and source != "<command line>":
        path = Path(source).resolve().parent / path
    try:
        return profiles.read_file(path)
    except UnitError as e:
        raise ScenarioError(source, f"{where}.profile", str(e)) from None


def within_path(steps, path_bps: int | None, src: str, dst: str, field: str, fail) -> None:
    """Every step's rate at most the slowest rate on the path. (A step's rate counts
    payload and the path's counts frames: a step at the path's rate is still more than
    the path carries; the profile model says what to ask for, `itb profile predict`.)"""
    if path_bps is None:
        return
    for k, (_at, rate) in enumerate(steps):
        if rate > path_bps:
            fail(
                f"{field}[{k}]",
                f"{format_rate(rate)} exceeds the path's {format_rate(path_bps)} ({src} → {dst})",
            )


def within_deadline(t, steps, path_bps: int | None, field: str, fail) -> None:
    """A transfer with a deadline must be able to make it: along its profile, at its
    rate, or at the path's slowest rate (on the wire: its payload needs longer still)."""
    if steps is not None:
        needs, how = profiles.time_to_send_us(steps, t.volume), "along its profile"
    elif t.rate is not None or path_bps is not None:
        rate = min(r for r in (t.rate, path_bps) if r)
        needs, how = t.volume * 8e6 / rate, f"at {format_rate(rate)}"
    else:
        return
    if needs > t.deadline:
        fail(
            field,
            f"{t.volume} bytes need {needs / 1e6:.4g} s {how}: they cannot arrive by the "
            f"deadline, {t.deadline / 1e6:g} s after the start",
        )


def udt_profile(t, steps, topo: Topology, where: str, fail) -> tuple[profiles.Step, ...] | None:
    """A UDT transfer (itb-udt) sends at a rate ITB's controller keeps: a `profile`, or
    a `rate` as a one-step profile; with cc = "udt", UDT4's own congestion control with
    `rate` as its cap (no profile: None). One stream over IPv4, memory to memory."""
    given = t.model_fields_set
    native = "cc" in given and t.cc == UDT_NATIVE
    if "cc" in given and not native:
        fail(
            f"{where}.cc",
            'a UDT transfer takes cc = "udt" (UDT4\'s own congestion control, `rate` its cap) '
            "or no cc (ITB's fixed-rate controller along its rate or profile)",
        )
    if t.enforce != "pacing":
        fail(
            f"{where}.enforce",
            "UDT keeps its rate by its controller's packet period; "
            f'enforce = "{t.enforce}" is for TCP',
        )
    if t.socket_buffer is not None:
        fail(f"{where}.socket_buffer", "itb-udt sizes its own buffers: socket_buffer is for TCP")
    if t.streams != 1 or t.source_file or t.sink_file:
        fail(f"{where}.protocol", "a UDT transfer is one stream, memory to memory")
    if "ipv4" not in topo.families:
        fail(f"{where}.protocol", "itb-udt speaks IPv4: the testbed has no IPv4 addresses")
    if native:
        if steps is not None:
            fail(
                f"{where}.profile",
                'UDT\'s own congestion control (cc = "udt") sets its rate: a profile needs '
                "ITB's fixed-rate controller (leave cc out)",
            )
        return None
    if steps is not None and any(r == 0 for _, r in steps):
        fail(f"{where}.profile", "itb-udt's controller cannot pause (a rate of 0): TCP can")
    if steps is None:
        if t.rate is None:
            fail(
                f"{where}.rate",
                "a UDT transfer needs a rate or a profile (its controller sends at a set rate)",
            )
        steps = ((0, t.rate),)
    return steps
