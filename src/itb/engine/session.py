"""A testbed kept up, taking jobs while it runs (what `itb serve --execute` runs on).

A run (itb.engine.runner) builds its testbed, plays one timeline from its zero and tears
the testbed down. A session builds it once, with a run's checks (preflight, the socket
buffers against the paths' BDP, the quick calibration, into `run_dir`), then takes
*jobs* as they come — each a few events (transfers) dated from its own zero on the
engine's clock — while earlier ones still run, on the same emulated links.

A job is a small repetition: its receivers start when it is submitted and must be
ready `READY_MARGIN_S` before its zero, its senders are dispatched at their dates; it
ends when its processes have exited, fails at the first one that fails or at its end
date (its other processes are then cancelled: a pending spawn never starts, a running
one gets SIGTERM), and is recorded like a repetition in `<run_dir>/jobs/<n>/`
(plan.json, events.json, the programs' logs, result.json written last). Its process ids
on the wire carry it (`j<n>/`), so the events of jobs running together are told apart;
each gets its own receiver ports. A node worker or an emulator that dies fails every
running job and the session (`broken`): a new job is then refused.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from itb import rundir
from itb.backends import owner
from itb.backends.testbed import Hosts, refuse_unsupported
from itb.engine import checks, processes
from itb.engine.execute import MONOTONIC, READY_MARGIN_S, Clock, spawn_cmd
from itb.engine.nodes import NodeEvent, Workers
from itb.engine.outcome import Outcome, Recorder
from itb.engine.processes import RepetitionPlan
from itb.errors import BackendError, ItbError
from itb.say import Say
from itb.scenario.scenario import Scenario

DRAIN_S = 5.0  # a cancelled job's exits are awaited this long
POLL_S = 0.1
PORTS = (20001, 60000)  # the receivers' ports, handed out in turn


@dataclass
class Job:
    name: str  # the caller's, in messages and in the job's records
    events: list  # resolved on the session's testbed (itb.scenario.scenario.timeline_on)
    zero_ns: int  # engine clock: what the events' dates count from
    end_ns: int  # still running then: cancelled and failed


@dataclass
class JobResult:
    name: str
    dir: Path
    outcome: Outcome


@dataclass
class _Live:
    job: Job
    prefix: str
    dir: Path
    plan: RepetitionPlan
    out: Outcome
    recorder: Recorder
    ready: set[str]
    awaited: set[str]
    state: str = "starting"  # starting → running → (stopping →) done
    stop_by: int = 0
    dispatched: set[str] = field(default_factory=set)


class Session:
    def __init__(
        self,
        sc: Scenario,
        tb: Hosts,
        run_dir: Path,
        on_done: Callable[[JobResult], None],
        say: Say = lambda s: None,
        clock: Clock = MONOTONIC,
    ):
        """`sc`: the testbed and every (source, destination) pair jobs will use (the
        checks' paths); `on_done` is called, from a thread of the session's, once per
        submitted job, after its records are written."""
        self.sc, self.tb, self.run_dir, self.on_done, self.say = sc, tb, run_dir, on_done, say
        self.clock = clock
        self.workers: Workers | None = None
        self.broken: str | None = None
        self._new: queue.Queue[_Live] = queue.Queue()
        self._cancels: queue.Queue[str] = queue.Queue()
        self._cancelled: set[str] = set()  # (a cancel may come before its job)
        self._live: dict[str, _Live] = {}
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None
        self._n = 0
        self._port = PORTS[0]
        self._lock = threading.Lock()
        self._stack = contextlib.ExitStack()
        self._clocks: dict[str, dict] = {}  # node → its clock against the engine's

    def open(self) -> dict:
        """The testbed built and checked; what the checks found (also in session.json)."""
        stack, tb, sc = self._stack, self.tb, self.sc
        stack.enter_context(owner.exclusive("a session (itb serve --execute)"))
        try:
            found: dict = {"testbed": sc.topology.content_hash(), "backend": tb.name}
            refuse_unsupported(tb, sc)
            found["warnings"] = checks.preflight(sc, tb) + tb.select(sorted(sc.experiment.ccs()))
            stack.callback(tb.release)
            self.run_dir.mkdir(parents=True, exist_ok=True)
            self.say("session: building the testbed")
            stack.callback(tb.down)
            tb.up(self.run_dir)
            found["sysctls"] = checks.deployment_check(sc, tb.host)
            self.workers = Workers(tb.hosts())
            stack.callback(self.workers.close)
            self._clocks = {n: c.to_json() for n, c in self.workers.sync_clocks().items()}
            self.say("session: calibrating (idle RTT of every pair)")
            found["calibration"] = checks.quick_calibration(sc, tb)
            rundir.write_json(self.run_dir / "session.json", found)
        except BaseException:
            stack.close()
            raise
        self._thread = threading.Thread(target=self._loop, name="session", daemon=True)
        self._thread.start()
        return found

    def submit(self, job: Job) -> Path:
        """Starts the job's receivers now; its directory. BackendError when the session
        is broken or closed."""
        if self.broken or self._closing.is_set() or self.workers is None:
            raise BackendError(f"the session cannot take jobs: {self.broken or 'it is closed'}")
        with self._lock:
            self._n += 1
            n = self._n
            first = self._port
            self._port += len(job.events)
            if self._port > PORTS[1]:
                self._port, first = PORTS[0] + len(job.events), PORTS[0]
        rd = self.run_dir / "jobs" / f"{n:06d}"
        rd.mkdir(parents=True, exist_ok=True)
        rundir.write_json(rd / "events.json", [e.model_dump(mode="json") for e in job.events])
        plan = processes.build(
            job.events,
            self.tb.topology,
            rd,
            self.sc.experiment.interval_us,
            self.tb.cc_names(),
            first_port=first,
        )
        rundir.write_json(rd / "plan.json", [asdict(p) for p in plan.procs])
        rundir.write_json(rd / "job.json", {"name": job.name, "zero_ns": job.zero_ns})
        self.tb.prepare(rd)
        prefix = f"j{n}/"
        out = Outcome(now_ns=self.clock.now_ns)
        out.start_ns, out.zero_ns, out.clock = self.clock.now_ns(), job.zero_ns, self._clocks
        stop = threading.Event()
        live = _Live(
            job,
            prefix,
            rd,
            plan,
            out,
            Recorder(out, plan.procs, prefix, stop, self._where),
            {p.id for p in plan.listeners()},
            {p.id for p in plan.procs if p.wait},
        )
        self._new.put(live)  # before its first event can come
        for p in plan.listeners():
            self.workers[p.node].send(**spawn_cmd(p, 0, prefix))
        return rd

    def cancel(self, name: str) -> None:
        """Stops the job of that name, if it runs (recorded as interrupted)."""
        self._cancels.put(name)

    def close(self) -> None:
        """Cancels what runs (each job recorded as interrupted), tears the testbed down."""
        self._closing.set()
        if self._thread is not None:
            self._thread.join()
        self._stack.close()

    # the session's thread

    def _loop(self) -> None:
        assert self.workers is not None
        while True:
            ne = self.workers.next_event(POLL_S)
            while not self._new.empty():  # (a job's events come after it is queued)
                live = self._new.get()
                self._live[live.prefix] = live
            if ne is not None:
                self._route(ne)
            while not self._cancels.empty():
                self._cancelled.add(self._cancels.get())
            for live in self._live.values():
                if live.job.name in self._cancelled:
                    live.out.fail("cancelled by its client", status="interrupted")
            closing = self._closing.is_set()
            if closing and not self._live and self._new.empty():
                return
            self._watch_emulators()
            now = self.clock.now_ns()
            for live in list(self._live.values()):
                if closing and live.out.status == "ok":
                    live.out.fail("the session was closed", status="interrupted")
                self._advance(live, now)

    def _route(self, ne: NodeEvent) -> None:
        ident = ne.event.get("id") or ""
        if ne.event.get("ev") == "worker_gone":
            self.broken = f"the worker of node {ne.node} died"
            for each in self._live.values():
                each.recorder.handle(ne.node, ne.event, each.ready, each.awaited)
            return
        live = self._live.get(ident.split("/", 1)[0] + "/")
        if live is not None:
            live.recorder.handle(ne.node, ne.event, live.ready, live.awaited)
            if ne.event.get("ev") == "dispatched":
                live.dispatched.add(ident)

    def _watch_emulators(self) -> None:
        for link, em in self.tb.emulators.items():
            how = em.death()
            if how is not None:
                self.broken = f"link emulator {link} died ({how})"
                for live in self._live.values():
                    live.out.fail(self.broken, environment=True)
                return

    def _advance(self, live: _Live, now: int) -> None:
        out, job = live.out, live.job
        if live.state == "starting" and out.status == "ok":
            if not live.ready:
                for p in live.plan.procs:
                    if p.at_us is not None:
                        at = job.zero_ns + p.at_us * 1000
                        self._send(p.node, **spawn_cmd(p, at, live.prefix))
                live.state = "running"
            elif now > job.zero_ns - int(READY_MARGIN_S * 1e9):
                out.fail(f"receivers not ready before the job's zero: {sorted(live.ready)}")
        if live.state == "running" and out.status == "ok":
            if not live.awaited:
                self._finish(live, now)
                return
            if now >= job.end_ns:
                out.fail(f"still running at the job's end date: {', '.join(sorted(live.awaited))}")
        if out.status != "ok" and live.state != "stopping":
            live.state, live.stop_by = "stopping", now + int(DRAIN_S * 1e9)
            for p in live.plan.procs:
                rec = out.procs.get(p.id, {})
                if "exited_ns" not in rec:
                    self._send(p.node, op="cancel", id=live.prefix + p.id)
            return
        if live.state == "stopping":
            gone = all(
                "exited_ns" in out.procs.get(i, {}) or "cancelled_ns" in out.procs.get(i, {})
                for i in (p.id for p in live.plan.procs)
                if live.prefix + i in live.dispatched or i in out.procs
            )
            if gone or now >= live.stop_by:
                self._finish(live, now)

    def _send(self, node: str, **cmd) -> None:
        assert self.workers is not None
        try:
            self.workers[node].send(**cmd)
        except BackendError as e:
            self.broken = str(e)

    def _finish(self, live: _Live, now: int) -> None:
        del self._live[live.prefix]
        live.out.end_ns = now
        threading.Thread(target=self._record, args=(live,), daemon=True).start()

    def _record(self, live: _Live) -> None:
        """Its logs gathered (SSH hosts), its commit marker written; then the caller told."""
        out = live.out
        try:
            for host in self.tb.gather(live.dir, out.end_ns):
                out.fail(
                    f"host {host} stopped answering: the job's logs are missing", environment=True
                )
            rundir.commit(live.dir, {"job": live.job.name, **out.to_json()})
        except (ItbError, OSError) as e:
            out.fail(f"recording the job: {e}", environment=True)
        try:
            self.on_done(JobResult(live.job.name, live.dir, out))
        except Exception as e:  # the caller's: said, the session goes on
            self.say(f"session: the report of job {live.job.name} failed: {e!r}")

    def _where(self, node: str) -> str:
        assert self.workers is not None
        return self.workers[node].where if node in self.workers.by_node else ""


def wall_to_engine(wall_s: float, at: tuple[float, int] | None = None) -> int:
    """A date in seconds since the Unix epoch on the engine's clock (CLOCK_MONOTONIC),
    through a pair of readings of both taken together (`at`, default: now)."""
    wall0, mono0 = at or (time.time(), time.monotonic_ns())
    return mono0 + round((wall_s - wall0) * 1e9)
