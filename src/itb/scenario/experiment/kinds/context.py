"""What resolving one event kind's sections needs from the scenario: the testbed's hosts
and links, the timeline's end, the ids already given, and the checks every kind makes
(a host of the testbed, a date before the end, an id used once), each failing as a
`ScenarioError` naming the file and the field."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NoReturn

from itb.errors import ScenarioError
from itb.scenario.experiment.sections import ExperimentSection
from itb.scenario.testbed.model import Link, Node, Topology

FASTEST_BPS = 100_000_000_000  # no path of a testbed here carries more (an unlimited one)


@dataclass
class Context:
    exp: ExperimentSection
    topo: Topology
    source: str | None
    hosts: dict[str, Node] = field(init=False)
    links: dict[str, Link] = field(init=False)
    ids: set[str] = field(default_factory=set)
    top_rate_bps: int = field(init=False)  # the fastest any path may be

    def __post_init__(self) -> None:
        self.hosts = {n.name: n for n in self.topo.hosts()}
        self.links = {lk.name: lk for lk in self.topo.links}
        rates = [d.rate_bps for lk in self.topo.links for d in (lk.forward, lk.reverse)]
        limited = [r for r in rates if r]
        self.top_rate_bps = max(limited) if limited and len(limited) == len(rates) else FASTEST_BPS

    def fail(self, field: str, reason: str) -> NoReturn:
        raise ScenarioError(self.source, field, reason)

    def host(self, name: str, field: str) -> str:
        if name not in self.hosts:
            self.fail(
                field,
                f"unknown host {name!r}; hosts of this testbed: {', '.join(sorted(self.hosts))}",
            )
        return name

    def date(self, at: int, field: str) -> int:
        if at >= self.exp.duration:
            self.fail(
                field,
                f"date {at / 1e6:g} s is not before the end of the timeline "
                f"(experiment.duration = {self.exp.duration / 1e6:g} s)",
            )
        return at

    def new_id(self, given: str | None, default: str, field: str) -> str:
        name = given or default
        if name in self.ids:
            self.fail(field, f"event id {name!r} is used twice")
        self.ids.add(name)
        return name

    def direction(self, src: str, dst: str) -> str:
        a, b = self.hosts[src].side, self.hosts[dst].side
        return "reverse" if (a, b) == ("right", "left") else "forward"

    def pair(self, src: str, dst: str, where: str) -> tuple[str, str]:
        """A source and a destination, both hosts of the testbed and not the same."""
        src, dst = self.host(src, f"{where}.src"), self.host(dst, f"{where}.dst")
        if src == dst:
            self.fail(f"{where}.dst", f"source and destination are the same host {src!r}")
        return src, dst
