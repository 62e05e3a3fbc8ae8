"""The plan of `itb study service`: per workload, the policies' plans (pure, computed here)
and one cell per policy (and per congestion control for TS1), each a dumbbell with the
access link as bottleneck and one transfer per admitted request."""

from __future__ import annotations

from pathlib import Path

from itb.analysis.fairshare import tcp_payload_share
from itb.errors import ScenarioError
from itb.service import exact, greedy, workload
from itb.service.model import Request
from itb.service.scenario import PlanError, planned_transfer, planning_request, shared_transfer
from itb.study.pursuit import testbed_doc
from itb.study.service.args import ServiceArgs
from itb.study.service.cells import PlannedRequest, ServiceCell
from itb.suite.apps.parts import secs
from itb.sweep.index import SweepIndex
from itb.sweep.sweep import Sweep, SweepCell

# TCP payload (timestamps) in a full Ethernet frame at MTU 1500: 1448/1514
PAYLOAD_SHARE = tcp_payload_share()
LEAD_S = 1.0  # workload date 0 in the repetition, after a planned launch's RTT ahead


def requests_of(a: ServiceArgs, name: str, b_in: float) -> list[Request]:
    if name == "paper":
        return [Request(f"r{k}", a.paper_volume, 0.0, a.window_s, b_in) for k in (1, 2)]
    return workload.random(a.workload_seed, a.requests, a.load, b_in, a.margin, a.horizon_s)


def policy_cells(a: ServiceArgs, reqs: list[Request], b_in: float):
    """(policy, cc, planned requests, planning s, optimum) per cell."""
    cap = b_in * (1 - a.margin)
    guard = a.guard_rtts * a.rtt_ms / 1000
    seen = [planning_request(r, guard) for r in reqs]
    for policy in a.policies:
        if policy == "TS1":
            fluid = greedy.ts1(reqs, b_in)  # the transport's fair shares, no margin
            rows = [
                PlannedRequest(**_req(r), admitted=True, start_s=r.release_s,
                               finish_s=fluid.plans[r.id].finish)
                for r in reqs
            ]  # fmt: skip
            for cc in a.ccs:
                yield policy, cc, rows, fluid.planning_s, None, {}  # cc: TS1's "mechanism"
            continue
        if policy == "ITB":
            out, optimum = exact.plan(seen, cap)
            best = optimum.admitted if optimum.proven else None
        else:
            out, best = greedy.POLICIES[policy](seen, cap), None
        rows = [
            PlannedRequest(**_req(r), admitted=r.id in out.plans,
                           start_s=out.plans[r.id].start if r.id in out.plans else None,
                           finish_s=out.plans[r.id].finish if r.id in out.plans else None)
            for r in reqs
        ]  # fmt: skip
        for mech in a.mechanisms or ("nocc-pacing",):
            yield policy, mech, rows, out.planning_s, best, out.plans


def _req(r: Request) -> dict:
    return {
        "id": r.id,
        "volume_bytes": r.volume_bytes,
        "release_s": r.release_s,
        "deadline_s": r.deadline_s,
        "max_rate_bps": r.max_rate_bps,
    }


def lead_s(a: ServiceArgs) -> float:
    return LEAD_S + a.rtt_ms / 1000


def cell_doc(a: ServiceArgs, name: str, reqs: list[Request], mech: str, policy: str, plans) -> dict:
    doc = testbed_doc(
        f"svc-{name}",
        f"{policy} ({mech}) on {len(reqs)} requests, access link {a.capacity_bps / 1e6:g} Mbit/s, "
        f"RTT {a.rtt_ms:g} ms",
        a.hosts,
        a.capacity_bps,
        a.rtt_ms,
        True,
    )
    last = max(r.deadline_s for r in reqs)
    doc["experiment"] = {
        "name": f"svc-{name}",
        "duration": secs(lead_s(a) + 2 * last + 30),
        "repetitions": a.repeat,
        "seed": a.seed,
    }
    transfers = []
    for k, r in enumerate(reqs):
        src, dst = f"l{k % a.hosts + 1}", f"r{k % a.hosts + 1}"
        if policy == "TS1":
            transfers.append(
                shared_transfer(r, src, dst, lead_s(a), mech, a.capacity_bps * PAYLOAD_SHARE)
            )
        elif r.id in plans:
            transfers.append(
                _planned(
                    r,
                    plans[r.id],
                    src,
                    dst,
                    lead_s(a),
                    a.rtt_ms / 1000,
                    a.margin / (1 - a.margin),
                    mech,
                    PAYLOAD_SHARE,
                )  # fmt: skip
            )
    doc["transfer"] = transfers
    return doc


def _planned(*args) -> dict:
    try:
        return planned_transfer(*args)
    except PlanError as e:
        raise ScenarioError(None, "--mechanisms", str(e)) from None


def sweep_of(a: ServiceArgs, out: Path) -> Sweep[ServiceCell]:
    b_in = a.capacity_bps * PAYLOAD_SHARE
    cells = []
    for wl in a.workloads:
        reqs = requests_of(a, wl, b_in)
        for policy, mech, rows, planning_s, best, plans in policy_cells(a, reqs, b_in):
            cc = mech.split("-")[0]
            # nocc-pacing's cells keep the name they always had
            name = f"{wl}-{policy}-{cc if mech in ('nocc-pacing', cc) else mech}"
            cell = ServiceCell(
                name=name, workload=wl, policy=policy, cc=cc,
                mechanism=mech if policy != "TS1" else cc, b_in_bps=b_in, lead_s=lead_s(a),
                planning_s=planning_s, optimum=best, requests=rows,
            )  # fmt: skip
            if not any(r.admitted for r in rows):
                continue  # nothing to run (reported by the planner's figures)
            doc = cell_doc(a, name, reqs, mech, policy, plans)
            cells.append(SweepCell(cell, doc))
    return Sweep(out, "service", SweepIndex[ServiceCell], a.key(), cells, a.repeat, a.seed)
