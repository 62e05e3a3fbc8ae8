"""Read a testbed file (or the default dumbbell), apply command-line overrides, compile.

Every failure is a ScenarioError naming the file (or "<command line>" and the option
for an override), the field path and a reason.
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

from itb import files
from itb.errors import ScenarioError
from itb.scenario.testbed.model import Topology
from itb.scenario.testbed.schema import validate_file
from itb.scenario.testbed.topologies import compile_testbed

# override key → (section, field) it replaces; all but mtu exist only for the dumbbell
OVERRIDES: dict[str, tuple[str, str]] = {
    "pairs": ("dumbbell", "pairs"),
    "access_rate": ("dumbbell", "access_rate"),
    "rate": ("bottleneck", "rate"),
    "rtt": ("bottleneck", "rtt"),
    "loss": ("bottleneck", "loss"),
    "buffer": ("bottleneck", "buffer"),
    "mtu": ("testbed", "mtu"),
}


def _option(key: str) -> str:
    return "--" + key.replace("_", "-")


def testbed_from_dict(data: dict, source: str | None = None) -> Topology:
    """Validate and compile an already parsed file (the TOML tables as dicts)."""
    return compile_testbed(validate_file(data, source), source)


def load_testbed(
    path: str | Path | None, overrides: dict | None = None, ignore: frozenset[str] = frozenset()
) -> Topology:
    """The resolved Topology of a testbed file; None means the default dumbbell. Tables
    named in `ignore` are not the testbed's (a scenario file's experiment sections:
    `itb.scenario.load_testbed` passes them)."""
    source = None if path is None else str(path)
    data = {} if path is None else read_toml(Path(path))
    data = {k: v for k, v in data.items() if k not in ignore}
    return load_testbed_data(data, source, overrides)


def load_testbed_data(data: dict, source: str | None, overrides: dict | None = None) -> Topology:
    """As load_testbed, for a file already read (a scenario's testbed sections)."""
    applied = _apply_overrides(data, overrides or {})
    try:
        return testbed_from_dict(data, source)
    except ScenarioError as e:
        # an error in a field the command line set is the command line's error
        for key, (section, field) in applied.items():
            dotted = f"{section}.{field}"
            if e.field == dotted or e.field.startswith(dotted + "."):
                raise ScenarioError(None, _option(key), e.reason) from None
        raise


def read_toml(path: Path) -> dict:
    text = files.read_text(path, "scenario")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(str(path), "(syntax)", f"not valid TOML: {e}") from None


def _apply_overrides(data: dict, overrides: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Write the overrides into `data` (in place); returns those applied, by key."""
    section = data.get("testbed", {})
    kind = section.get("topology", "dumbbell") if isinstance(section, dict) else "dumbbell"
    applied = {}
    for key, value in overrides.items():
        if value is None:
            continue  # an option the user did not give
        if key not in OVERRIDES:
            raise ScenarioError(
                None, _option(key), f"unknown override; known: {', '.join(map(_option, OVERRIDES))}"
            )
        section, field = OVERRIDES[key]
        if section != "testbed" and kind != "dumbbell":
            raise ScenarioError(
                None, _option(key), f"applies to the dumbbell only; this testbed is {kind!r}"
            )
        if key in ("pairs", "mtu") and isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        table = data.setdefault(section, {})
        if not isinstance(table, dict):
            continue  # the file's own error; validation reports it
        table[field] = copy.deepcopy(value)
        if key == "rtt":  # a given rtt replaces asymmetric delays rather than clashing with them
            table.pop("delay_forward", None)
            table.pop("delay_reverse", None)
        applied[key] = (section, field)
    return applied
