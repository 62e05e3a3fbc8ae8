"""`enforce = "tbf"`: a transfer's rate kept by a token bucket on its source host, the
Linux token bucket filter (tbf) of the host's egress, instead of by the sender's pacing
(eWAN: Vicat-Blanc Primet et al., "Large Scale Gigabit Emulated Testbed for Grid
Transport Evaluation", PFLDnet 2006, §V.B: token bucket against PSPacer's pacing).

The bucket is the host's access link toward its router, shaped at the sum of the rates of
the host's tbf transfers: every one of them shares it, as flows from one machine share its
shaped interface. The backends shape that direction as they shape any access rate (a
burst of 1 ms at the rate, at least two frames; a 20 ms queue: docs/testbed.md); a link
rate counts frames, where a pacing rate counts payload."""

from __future__ import annotations

from itb.errors import ScenarioError
from itb.scenario.experiment.events import Experiment, Transfer
from itb.scenario.testbed.model import Topology
from itb.scenario.units import format_rate


def with_token_buckets(topo: Topology, exp: Experiment, source: str | None) -> Topology:
    """The topology with each source host of a tbf transfer shaped at the sum of their
    rates; refused (naming the host) where the host's access link already has a rate."""
    rates: dict[str, int] = {}
    for e in exp.events:
        if isinstance(e, Transfer) and e.enforce == "tbf" and e.rate_bps:
            rates[e.src] = rates.get(e.src, 0) + e.rate_bps
    if not rates:
        return topo
    links = list(topo.links)
    for host, rate in sorted(rates.items()):
        found = [i for i, lk in enumerate(links) if lk.kind == "access" and lk.a.node == host]
        if len(found) != 1:
            raise ScenarioError(
                source,
                "transfer.enforce",
                f'enforce = "tbf": host {host} has {len(found)} access links, not one',
            )
        lk = links[found[0]]
        if lk.forward.rate_bps is not None:
            raise ScenarioError(
                source,
                "transfer.enforce",
                f'enforce = "tbf" shapes host {host}\'s egress at {format_rate(rate)}, but its '
                f"access link already has a rate ({format_rate(lk.forward.rate_bps)}): leave "
                'the access rate out, or keep the rate by pacing (enforce = "pacing")',
            )
        fwd = lk.forward.model_copy(update={"rate_bps": rate})
        links[found[0]] = lk.model_copy(update={"forward": fwd})
    return topo.model_copy(update={"links": tuple(links)})
