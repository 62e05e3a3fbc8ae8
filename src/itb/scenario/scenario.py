"""A whole scenario file: the testbed it runs on and the experiment (timeline) on it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from itb.errors import ScenarioError
from itb.scenario.buckets import with_token_buckets
from itb.scenario.experiment.events import Experiment
from itb.scenario.experiment.sections import SECTIONS, validate_sections
from itb.scenario.experiment.timeline import resolve
from itb.scenario.testbed import load as testbed_load
from itb.scenario.testbed.load import load_testbed_data, read_toml
from itb.scenario.testbed.model import Topology
from itb.scenario.testbed.schema import TestbedFile


@dataclass(frozen=True)
class Scenario:
    topology: Topology
    experiment: Experiment
    source: str | None

    def content_hash(self) -> str:
        import hashlib

        both = self.topology.canonical_json() + self.experiment.canonical_json()
        return hashlib.sha256(both.encode()).hexdigest()


def load_testbed(path: str | Path | None, overrides: dict | None = None) -> Topology:
    """The resolved Topology of a testbed file or of a scenario file's testbed (its
    experiment sections left aside); None means the default dumbbell."""
    return testbed_load.load_testbed(path, overrides, ignore=frozenset(SECTIONS))


def timeline_on(topo: Topology, data: dict, source: str) -> Scenario:
    """A timeline's tables (`transfer`, `experiment`, …) resolved on a testbed already
    built (no token bucket is added: a session's topology is fixed)."""
    for key in data:
        if key not in SECTIONS:
            raise ScenarioError(source, key, f"not a timeline section; allowed: {sorted(SECTIONS)}")
    exp = resolve(validate_sections(data, source), topo, source)
    for e in exp.events:
        if getattr(e, "enforce", None) == "tbf":
            raise ScenarioError(
                source, f"transfer.{e.id}.enforce", "tbf changes the testbed: not on one built"
            )
    return Scenario(topo, exp, source)


def load_scenario(path: str | Path, overrides: dict | None = None) -> Scenario:
    """Read, validate and resolve a scenario file; every error names file, field, reason."""
    return scenario_from_data(read_toml(Path(path)), str(path), overrides)


def scenario_from_data(data: dict, source: str, overrides: dict | None = None) -> Scenario:
    """A scenario's tables (as TOML gives them) validated and resolved; `source` names
    them in errors (a file, or what generated them)."""
    known = set(TestbedFile.model_fields) | set(SECTIONS)
    for key in data:
        if key not in known:
            raise ScenarioError(
                source, key, f"unknown section {key!r}; allowed: {', '.join(sorted(known))}"
            )
    timeline = {k: v for k, v in data.items() if k in SECTIONS}
    testbed = {k: v for k, v in data.items() if k not in SECTIONS}
    topo = load_testbed_data(testbed, source, overrides)
    sections = validate_sections(timeline, source)
    exp = resolve(sections, topo, source)
    return Scenario(with_token_buckets(topo, exp, source), exp, source)
