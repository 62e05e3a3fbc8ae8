"""Committed plans run on a testbed as their dates come (`itb serve --execute`,
docs/service.md).

The testbed stays up for the whole service (an engine session, itb.engine.session). A
link of the service is a set of the testbed's host pairs (left host k → right host k;
with several links, link i takes pairs i, i + L, …), its requests launched on them in
turn. A committed request's transfer is submitted `LAUNCH_AHEAD_S` before its sender
starts, which is one RTT before the plan's start (its connection is up at t_s; see
itb.service.scenario): sent by TCP without congestion control, paced m / (1 − m) above
its plan, its writes keeping the plan. The ledger plans every request from
`lead_s` after now and `guard_s` (4 RTT) before its deadline, so that it can be
launched in time and its last byte arrives before the deadline.

What became of it goes to the store (`runs`): launched, then done with the last byte's
date and the bytes received, or failed with the reason; interrupted when the service
stops or its client cancels it while it runs; missed when its launch date had passed
(the service was not running then). Dates cross from the wall clock (the API's) to the
engine's monotonic one through one pair of readings taken when the service starts: a
step of the wall clock while it runs is not followed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from itb.analysis.fairshare import tcp_payload_share
from itb.engine.processes import prelude_seconds
from itb.engine.session import Job, JobResult, Session, wall_to_engine
from itb.errors import BackendError, ScenarioError
from itb.rundir.flow_summary import RecvSummary, SendSummary
from itb.rundir.layout import read_json
from itb.rundir.records import RunDirError, read_record
from itb.scenario.scenario import Scenario, timeline_on
from itb.scenario.testbed.model import Topology
from itb.scenario.testbed.pathspec import path_spec
from itb.service.intplan import ns_of, s_of
from itb.service.ledger import Ledger
from itb.service.scenario import planned_transfer
from itb.service.store import Record, Run

LAUNCH_AHEAD_S = 3.0  # a job is submitted this long before its sender starts
# its receiver's start, the ready barrier and the dispatch need this much at least
MIN_AHEAD_S = prelude_seconds(1) + 0.5
TICK_S = 0.2
GUARD_RTTS = 4
MECHANISM = "nocc-pacing"
TRANSFER = "transfer"  # the id of a job's one transfer (its files: nodes/<host>/transfer.*)


def routes(topo: Topology, links: list[str]) -> dict[str, list[tuple[str, str]]]:
    """Each link's host pairs (left k → right k; link i: pairs i, i + L, …)."""
    left = sorted(n.name for n in topo.hosts() if n.side == "left")
    right = sorted(n.name for n in topo.hosts() if n.side == "right")
    pairs = list(zip(left, right))
    if len(pairs) < len(links):
        raise ScenarioError(
            topo.source,
            "--execute",
            f"{len(links)} links need as many host pairs (left → right); the testbed has "
            f"{len(pairs)}",
        )
    return {name: pairs[i :: len(links)] for i, name in enumerate(links)}


def check_capacity(topo: Topology, by_link: dict[str, list], rates: dict[str, float]) -> float:
    """Refuses links the testbed cannot carry: every path's TCP payload rate must hold
    its link's capacity, and a bottleneck the sum of the links that cross it (their plans
    paced up to the capacity). Returns the largest RTT of the paths."""
    rtt_us = 0
    load: dict[str, tuple[float, set[str]]] = {}
    share = tcp_payload_share(min(lk.mtu for lk in topo.links))
    for name, pairs in by_link.items():
        for src, dst in pairs:
            p = path_spec(topo, src, dst)
            rtt_us = max(rtt_us, p.rtt_us)
            if p.rate_bps is None:
                continue
            payload = p.rate_bps * share
            key = p.bottleneck.name if p.bottleneck is not None else f"{src}-{dst}"
            cap, names = load.get(key, (payload, set()))
            load[key] = (min(cap, payload), names | {name})
    for key, (cap, names) in load.items():
        total = sum(rates[n] for n in names)
        if total > cap * (1 + 1e-9):
            raise ScenarioError(
                topo.source,
                "--link",
                f"{', '.join(sorted(names))}: {total:.0f} bit/s on the testbed's {key}, which "
                f"carries {cap:.0f} bit/s of TCP payload: give at most that",
            )
    return rtt_us / 1e6


def template(topo: Topology, by_link: dict[str, list]) -> Scenario:
    """The session's checks' scenario: one transfer on every pair a job may use."""
    pairs = sorted({p for ps in by_link.values() for p in ps})
    cc = MECHANISM.split("-")[0]
    transfers = [
        {"id": f"p{k}", "src": s, "dst": d, "at": "0s", "volume": "1B", "cc": cc}
        for k, (s, d) in enumerate(pairs)
    ]
    return timeline_on(topo, {"transfer": transfers}, "itb serve --execute")


class Executor:
    def __init__(
        self,
        ledger: Ledger,
        session: Session,
        by_link: dict[str, list[tuple[str, str]]],
        say: Callable[[str], None] = lambda s: None,
        wall: Callable[[], float] = time.time,
    ):
        self.ledger, self.session, self.by_link = ledger, session, by_link
        topo = session.tb.topology
        self.rtt = {p: path_spec(topo, *p).rtt_us / 1e6 for ps in by_link.values() for p in ps}
        self.say, self.wall = say, wall
        self.pair = (time.time(), time.monotonic_ns())  # wall ↔ engine
        self.turn = dict.fromkeys(by_link, 0)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="executor", daemon=True)
        self.headroom = ledger.margin / (1 - ledger.margin)

    def start(self) -> None:
        self.ledger.on_cancel = self.session.cancel
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join()

    def _loop(self) -> None:
        while not self.stop.wait(TICK_S):
            self.tick(self.wall())

    def tick(self, now: float) -> None:
        until = now + LAUNCH_AHEAD_S + max(self.rtt.values())
        for rec in self.ledger.due(ns_of(until)):
            self._launch(rec, now)

    def _launch(self, rec: Record, now: float) -> None:
        assert rec.plan is not None
        r, plan = rec.request.as_float(), rec.plan.as_float()  # (the scenario's seconds)
        rid = r.id
        if not self.ledger.claim(rid):  # cancelled meanwhile
            return
        pairs = self.by_link[r.link]
        src, dst = pairs[self.turn[r.link] % len(pairs)]
        rtt_s = self.rtt[src, dst]
        zero = plan.start - rtt_s  # the sender's start: its connection is up at t_s
        if zero - now < MIN_AHEAD_S:
            why = (
                f"its transfer had to be launched by {zero - MIN_AHEAD_S:.3f} (epoch s); "
                f"the service came {now - zero + MIN_AHEAD_S:.1f} s later"
            )
            self.ledger.ran(rid, Run("missed", reason=why), now)
            self.say(f"request {rid}: missed ({why})")
            return
        self.turn[r.link] += 1
        # dated from the job's zero (the sender's start): `at` is 0
        t = planned_transfer(r, plan, src, dst, -zero, rtt_s, self.headroom, MECHANISM)
        t["id"], t["at"] = TRANSFER, "0s"
        try:
            events = timeline_on(self.session.tb.topology, {"transfer": [t]}, f"request {rid}")
            end = r.deadline_s + max(30.0, r.deadline_s - plan.start)  # lateness still measured
            job = Job(
                rid,
                list(events.experiment.events),
                wall_to_engine(zero, self.pair),
                wall_to_engine(end, self.pair),
            )
            rd = self.session.submit(job)
        except (BackendError, ScenarioError, OSError) as e:
            self.ledger.ran(rid, Run("failed", reason=f"not launched: {e}"), now)
            self.say(f"request {rid}: not launched: {e}")
            return
        self.ledger.ran(rid, Run("launched", launched_s=now, dir=str(rd)), now)
        self.say(f"request {rid}: launched on {src} → {dst}, starts at {plan.start:.3f}")

    def done(self, res: JobResult) -> None:
        """The session's report of a job: what became of the request, in the store."""
        rid = res.name
        rec = self.ledger.get(rid, ns_of(self.wall()))
        run = outcome_run(rec, res, self.pair)
        self.ledger.ran(rid, run, self.wall())
        deadline_s = s_of(rec.request.deadline_ns)
        late = "" if run.finish_s is None else f", {run.finish_s - deadline_s:+.3f} s"
        self.say(f"request {rid}: {run.state}{late}" + (f" ({run.reason})" if run.reason else ""))


def outcome_run(rec: Record, res: JobResult, pair: tuple[float, int]) -> Run:
    """A finished job as a run: its last byte's date (on the wall clock) and bytes."""
    launched = rec.run.launched_s if rec.run else None
    out, rd = res.outcome, res.dir
    ev = _event(res)
    recv = _summary(rd / "nodes" / ev[1] / f"{TRANSFER}.recv.json", RecvSummary)
    send = _summary(rd / "nodes" / ev[0] / f"{TRANSFER}.send.json", SendSummary)
    got = recv.bytes if recv else None
    finish = None
    if recv is not None and recv.last_byte_ns is not None:
        offset = (out.clock.get(ev[1]) or {}).get("offset_ns") or 0
        finish = pair[0] + (recv.last_byte_ns - offset - pair[1]) / 1e9
    whole = got == rec.request.volume_bytes and bool(recv and recv.ok)
    if out.status == "ok" and whole:
        return Run("done", launched, finish, got, None, str(rd))
    reason = out.reason or (recv and recv.error) or (send and send.error)
    reason = reason or f"received {got} of {rec.request.volume_bytes} bytes"
    state = "interrupted" if out.status == "interrupted" else "failed"
    return Run(state, launched, finish if whole else None, got, reason, str(rd))


def _event(res: JobResult) -> tuple[str, str]:
    e = read_json(res.dir / "events.json")[0]
    return e["src"], e["dst"]


def _summary(path: Path, model):
    try:
        return read_record(path, model)
    except (OSError, RunDirError):  # (missing: the job failed before; the reason says why)
        return None
