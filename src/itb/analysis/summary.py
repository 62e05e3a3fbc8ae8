"""metrics.json of a run: run_metrics on the run's tables, in the testbed's context (which
link is the bottleneck, its capacity C, the MTU), plus the engine's dispatch error. The
fair-share comparison is run_metrics' own (`overall.fair_share`, one per repetition)."""

from __future__ import annotations

import pandas as pd

from itb.analysis.metrics import RunContext, run_metrics
from itb.analysis.run_results import Dispatch, RunMetrics
from itb.scenario.testbed.model import Topology
from itb.scenario.testbed.pathspec import path_spec


def context_of(topo: Topology, transfers: pd.DataFrame) -> RunContext:
    """C, its link and the reverse capacity: the bottleneck on the path of the forward
    transfers (the first one's path when several links are emulated)."""
    ctx: RunContext = {
        "capacity_bps": None,
        "reverse_capacity_bps": None,
        "mtu": topo.mtu,
        "link": None,
    }
    fwd = transfers[transfers["direction"] == "forward"] if len(transfers) else transfers
    if len(fwd):
        first = fwd.iloc[0]
        spec = path_spec(topo, first["src"], first["dst"])
        if spec.bottleneck is not None and spec.forward is not None:  # (found together)
            ctx["link"] = spec.bottleneck.name
            # the shared link's own rate: an access link may be slower (C_a < C)
            ctx["capacity_bps"] = spec.forward.rate_bps
            rev = spec.bottleneck.reverse if spec.direction == "ab" else spec.bottleneck.forward
            ctx["reverse_capacity_bps"] = rev.rate_bps
    return ctx


def scenario_metrics(
    tables: dict[str, pd.DataFrame], topo: Topology, dispatch: dict | None = None
) -> RunMetrics:
    """What metrics.json holds: `dispatch` is meta.json's (the engine's summary)."""
    ctx = context_of(topo, tables["transfers"])
    metrics = run_metrics(tables["transfers"], tables["samples"], tables["bottleneck"], ctx)
    metrics.dispatch = Dispatch.model_validate(dispatch) if dispatch is not None else None
    return metrics
