"""metrics.json of a run: run_metrics on the run's tables, in the testbed's context, plus
the fair-share comparison stated against C itself and the engine's dispatch error."""

from __future__ import annotations

import pandas as pd

from itb.analysis.fairshare import compare_to_ideal, ideal_completion_times, tcp_payload_share
from itb.analysis.metrics import run_metrics
from itb.calibration.path import path_spec
from itb.scenario.model import Topology


def context_of(topo: Topology, transfers: pd.DataFrame) -> dict:
    """C, its link and the reverse capacity: the bottleneck on the path of the forward
    transfers (the first one's path when several links are emulated)."""
    ctx = {"capacity_bps": None, "reverse_capacity_bps": None, "mtu": topo.mtu, "link": None}
    fwd = transfers[transfers["direction"] == "forward"] if len(transfers) else transfers
    if len(fwd):
        first = fwd.iloc[0]
        spec = path_spec(topo, first["src"], first["dst"])
        if spec.bottleneck is not None:
            ctx["link"] = spec.bottleneck.name
            # the shared link's own rate: an access link may be slower (C_a < C)
            ctx["capacity_bps"] = spec.forward.rate_bps
            rev = spec.bottleneck.reverse if spec.direction == "ab" else spec.bottleneck.forward
            ctx["reverse_capacity_bps"] = rev.rate_bps
    return ctx


def fair_share_vs_c(transfers: pd.DataFrame, capacity_bps: float | None, mtu: int) -> dict | None:
    """Measured mean completion time of the forward bulk transfers against the fluid
    max-min ideal computed from C on the wire (headers count against the transfers) and,
    for reference, from C's TCP payload share."""
    fwd = transfers[(transfers["direction"] == "forward")]
    if fwd.empty or (fwd["kind"] != "transfer").any():
        return None
    measured, wire, payload = [], [], []
    share = tcp_payload_share(mtu)
    for _, rep in fwd.groupby("repetition"):
        caps = [None if pd.isna(c) else float(c) for c in rep["access_rate_bps"]]
        if capacity_bps is None and any(c is None for c in caps):
            return None
        starts = ((rep["start_ns"] - rep["rep_start_ns"]) / 1e9).tolist()
        vols = rep["bytes_expected"].tolist()
        wire += ideal_completion_times(starts, vols, caps, capacity_bps)
        payload += ideal_completion_times(starts, vols, caps, capacity_bps, payload_share=share)
        measured += [t if ok else None for t, ok in zip(rep["completion_s"], rep["ok"])]
    on_wire, on_payload = compare_to_ideal(measured, wire), compare_to_ideal(measured, payload)
    return {"n_compared": on_wire["n_compared"], "measured_mean_s": on_wire["measured_mean_s"],
            "ideal_mean_s": on_wire["compared_ideal_mean_s"],
            "difference_pct": on_wire["difference_pct"],
            "payload_share": share,
            "payload_ideal_mean_s": on_payload["compared_ideal_mean_s"],
            "payload_difference_pct": on_payload["difference_pct"],
            # the model knows only the forward bulk transfers: say what else shared the path
            "ignores": sorted(set(transfers.loc[transfers["direction"] != "forward", "kind"]))}


def scenario_metrics(tables: dict[str, pd.DataFrame], topo: Topology,
                     dispatch: dict | None = None) -> dict:
    ctx = context_of(topo, tables["transfers"])
    metrics = run_metrics(tables["transfers"], tables["samples"], tables["bottleneck"], ctx)
    transfers = tables["transfers"]
    metrics["fair_share"] = (fair_share_vs_c(transfers, ctx["capacity_bps"], topo.mtu)
                             if len(transfers) else None)
    metrics["context"] = ctx
    metrics["dispatch"] = dispatch
    return metrics
