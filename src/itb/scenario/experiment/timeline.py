"""A scenario's timeline: the validated sections resolved against the testbed into an
`Experiment` (the concrete events of one repetition are `background`'s).

`resolve` gives every event an id and an absolute date and fails, naming the field,
on anything that would fail at run time for a reason visible in the file (unknown host,
date beyond the end, a group of mismatched sizes, a size distribution without a finite
mean), before anything runs. Each event kind is resolved by its own module
(`itb.scenario.experiment.kinds`); what holds across kinds is checked here.
"""

from __future__ import annotations

from itb.errors import ScenarioError
from itb.scenario.experiment.events import Experiment
from itb.scenario.experiment.kinds import KINDS, Context
from itb.scenario.experiment.sections import ScenarioSections
from itb.scenario.testbed.model import Topology

MAX_EVENTS = 1_000  # timeline events after groups are expanded: the engine dates each one


def resolve(sections: ScenarioSections, topo: Topology, source: str | None) -> Experiment:
    """Check every event against the testbed and give each an id and absolute date."""
    exp = sections.experiment
    ctx = Context(exp, topo, source)
    events: list = []
    for field, resolve_kind in KINDS:
        events += resolve_kind(getattr(sections, field), ctx)
    if len(events) > MAX_EVENTS:
        raise ScenarioError(
            source,
            "(file)",
            f"{len(events)} timeline events (groups expanded): at most "
            f"{MAX_EVENTS}; use [[tcp_background]] for many short flows",
        )
    if not events:
        raise ScenarioError(
            source,
            "(file)",
            "the timeline is empty: add at least one [[transfer]], [[pingpong]], "
            "[[udp]], [[tcp_background]] or [[command]]",
        )
    events.sort(key=lambda e: (e.at_us, e.id))
    if exp.start_jitter and events[-1].at_us + exp.start_jitter >= exp.duration:
        raise ScenarioError(
            source,
            "experiment.start_jitter",
            f"{exp.start_jitter / 1e6:g} s after the last event ({events[-1].at_us / 1e6:g} s) "
            f"reaches the timeline's end ({exp.duration / 1e6:g} s)",
        )
    return Experiment(
        name=exp.name or topo.name,
        repetitions=exp.repetitions,
        seed=exp.seed,
        duration_us=exp.duration,
        interval_us=exp.interval,
        events=tuple(events),
        start_jitter_us=exp.start_jitter,
    )
