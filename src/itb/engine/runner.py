"""NXE's workflow for one scenario on the local backend, stage by stage, each logged and
timed: preflight → reservation → deployment → configuration → calibration →
execution (× repetitions) → gathering → analysis → archiving and cleaning.

A failed repetition is recorded with its reason; the testbed is then rebuilt from
scratch and the next repetition goes on. An interruption (Ctrl-C) stops the running
repetition, tears everything down and leaves the run directory marked incomplete;
`--resume` finishes it without redoing the repetitions that ended.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from itb import cc, native
from itb.backends import local
from itb.backends.host import NetnsHost
from itb.calibration import inventory as inv
from itb.calibration import probes
from itb.calibration.path import path_spec
from itb.engine import procplan, rundir
from itb.engine.execute import Outcome, Repetition
from itb.engine.nodes import Workers
from itb.emulation import naming
from itb.errors import PreflightError
from itb.scenario.scenario import Scenario
from itb.scenario.timeline import events_for_repetition

Say = Callable[[str], None]
EMULATOR_LOG_MARGIN_NS = 300_000_000  # after the end: the last frames' intervals
EMULATOR_LOG_WAIT_S = 3.0  # linkem writes a row ~100 ms after its interval, flushes every 100 ms


@dataclass
class RunOptions:
    out: Path
    repetitions: int | None = None  # overrides the scenario's
    seed: int | None = None
    resume: bool = False
    # tables, metrics and report from the run directory, given by the caller (a higher
    # layer: itb.report.build.analyse_run); None: the raw logs only
    analyse: Callable[[Path], dict] | None = None


@dataclass
class RunResult:
    run_dir: Path
    status: str  # complete | incomplete
    repetitions: list[dict] = field(default_factory=list)
    metrics: dict | None = None


class Stages:
    """Times every stage into meta["stages"] and tells the user."""

    def __init__(self, meta: dict, say: Say):
        self.meta, self.say = meta, say

    def __call__(self, name: str):
        stages, say = self.meta.setdefault("stages", []), self.say

        class _Stage:
            def __enter__(self):
                say(f"stage: {name}")
                self.t0 = time.monotonic()
                return self

            def __exit__(self, kind, exc, tb):
                stages.append({"stage": name, "seconds": round(time.monotonic() - self.t0, 3),
                               "ok": kind is None})
                return False

        return _Stage()


def _versions() -> dict:
    from importlib.metadata import version

    out = {"itb": version("itb"), "python": platform.python_version()}
    for name in ("flow", "linkem"):
        try:
            res = subprocess.run([native.binary(name), "--version"], capture_output=True,
                                 text=True, timeout=10)
            out[name] = res.stdout.strip() or None
        except (PreflightError, OSError, subprocess.TimeoutExpired):
            out[name] = None
    res = subprocess.run(["iperf3", "--version"], capture_output=True, text=True)
    out["iperf3"] = res.stdout.splitlines()[0] if res.returncode == 0 and res.stdout else None
    git = subprocess.run(["git", "-C", str(native.REPO), "rev-parse", "HEAD"], capture_output=True,
                         text=True)
    out["git_commit"] = git.stdout.strip() if git.returncode == 0 else None
    dirty = subprocess.run(["git", "-C", str(native.REPO), "status", "--porcelain"],
                           capture_output=True, text=True)
    out["git_dirty"] = bool(dirty.stdout.strip()) if dirty.returncode == 0 else None
    return out


def preflight(sc: Scenario) -> list[str]:
    """Everything that can be checked before anything is built; returns warnings."""
    local.preflight()
    native.binary("flow")
    for e in sc.experiment.events:
        if e.kind == "command" and shutil.which(e.argv[0]) is None:
            raise PreflightError(f"command {e.id}: program {e.argv[0]!r} not found on this machine")
        if e.kind == "transfer" and e.source_file:
            path = Path(e.source_file)
            if not path.is_file() or path.stat().st_size < e.volume:
                raise PreflightError(f"transfer {e.id}: source_file {path} is missing or "
                                     f"smaller than the volume ({e.volume} bytes)")
    return cpu_headroom_warnings(sc)


def cpu_headroom_warnings(sc: Scenario, calibration: Path = Path("runs/calibration.json")) -> list[str]:
    """The emulator's CPU per bit/s from the last `itb calibrate`, scaled to this testbed."""
    rates = [lk.forward.rate_bps for lk in sc.topology.links if lk.emulated and lk.forward.rate_bps]
    if not rates:
        return []
    try:
        cal = json.loads(calibration.read_text())
        pct = cal["emulator"]["cpu_pct_during_tcp"]
        cal_rate = cal["path"]["rate_bps"]
    except (FileNotFoundError, KeyError, TypeError, json.JSONDecodeError):
        return ["no calibration found (runs/calibration.json): run `itb calibrate` to check "
                "that the emulator keeps up on this machine"]
    need = pct * max(rates) / cal_rate
    if need > 90:
        return [f"the emulator may lack CPU: about {need:.0f} % of a core at "
                f"{max(rates) / 1e9:g} Gbit/s (calibration: {pct:.0f} % at {cal_rate / 1e9:g} Gbit/s)"]
    return []


def _meta_base(sc: Scenario, opts: RunOptions, repetitions: int, seed: int) -> dict:
    return {"format": rundir.FORMAT_VERSION, "scenario": sc.experiment.name,
            "scenario_hash": sc.content_hash(), "testbed_hash": sc.topology.content_hash(),
            "source": sc.source, "repetitions": repetitions, "seed": seed,
            "backend": "local", "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "versions": _versions(), "cpu": inv.cpu(), "status": "running"}


def run(sc: Scenario, opts: RunOptions, say: Say = lambda s: None,
        tick: Say = lambda s: None) -> RunResult:
    exp = sc.experiment
    reps = opts.repetitions or exp.repetitions
    seed = exp.seed if opts.seed is None else opts.seed
    if seed != exp.seed:
        exp = exp.model_copy(update={"seed": seed})
        sc = Scenario(sc.topology, exp, sc.source)
    run_dir = opts.out
    if opts.resume:
        meta = rundir.open_for_resume(run_dir, sc.content_hash())
        done = rundir.repetitions_done(run_dir, reps)
        meta.setdefault("resumed", []).append(time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        meta["repetitions"] = reps
    else:
        if run_dir.exists() and any(run_dir.iterdir()):
            raise rundir.RunDirError(f"{run_dir} exists and is not empty: choose another --out "
                                     "or add --resume")
        meta, done = _meta_base(sc, opts, reps, seed), set()
    stage = Stages(meta, say)
    stop = threading.Event()
    previous = signal.getsignal(signal.SIGINT)

    def on_sigint(signum, frame):  # first Ctrl-C: stop cleanly; second: the default
        stop.set()
        say("interrupt: stopping the repetition and tearing the testbed down "
            "(Ctrl-C again to abort at once)")
        signal.signal(signal.SIGINT, previous)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, on_sigint)
    result = RunResult(run_dir, "incomplete")
    loaded: list[cc.Resolved] = []
    try:
        with stage("preflight"):
            meta["warnings"] = preflight(sc)
            for w in meta["warnings"]:
                say(f"warning: {w}")
            # The kernel's implementation when it has one, else ours (registered now and
            # unregistered at the end); a program the verifier refuses stops the run here.
            loaded = cc.ensure(sorted(exp.ccs()), progress=say)
            meta["congestion_controls"] = [r.to_json() for r in loaded]
        run_dir.mkdir(parents=True, exist_ok=True)
        if not opts.resume and sc.source:
            shutil.copyfile(sc.source, run_dir / "scenario.toml")
        rundir.write_json(run_dir / "scenario.resolved.json",
                          {"topology": json.loads(sc.topology.canonical_json()),
                           "experiment": json.loads(exp.canonical_json())})
        rundir.write_json(run_dir / "meta.json", meta)
        _execute_all(sc, run_dir, reps, done, meta, stage, stop, say, tick)
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, previous)
        if local.read_state():
            with stage("cleaning"):
                local.down()
        cc.release(loaded, progress=say)
        finished = rundir.repetitions_done(run_dir, reps) if run_dir.exists() else set()
        result.status = "complete" if len(finished) == reps and not stop.is_set() else "incomplete"
        meta["status"] = result.status
        if run_dir.exists():
            meta["dispatch"] = dispatch_summary(run_dir, reps)
            if opts.analyse is not None:
                # the analysis reads meta.json (the dispatch error): written first
                rundir.write_json(run_dir / "meta.json", meta)
                try:
                    with stage("analysis"):
                        result.metrics = opts.analyse(run_dir)
                except Exception as e:  # a broken analysis must not lose the raw results
                    meta.setdefault("warnings", []).append(f"analysis failed: {e!r}")
            result.repetitions = [rundir.rep_result(run_dir, r) or {"status": "not run"}
                                  for r in range(1, reps + 1)]
            meta["repetition_status"] = [r.get("status") for r in result.repetitions]
            with stage("archiving"):
                meta["files"] = manifest(run_dir)
            rundir.write_json(run_dir / "meta.json", meta)
    return result


ENGINE_RT_PRIORITY = 5  # below the workers' (10): they date the spawns


@contextlib.contextmanager
def _real_time():
    """The engine and the threads it starts (one reader per worker) run real-time while
    repetitions execute: with thousands of busy transfer threads the normal scheduler
    gave it so little CPU that exits were handled 100 s late. It mostly sleeps."""
    try:
        before = os.sched_getscheduler(0), os.sched_getparam(0)
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(ENGINE_RT_PRIORITY))
    except (OSError, AttributeError):
        yield
        return
    try:
        yield
    finally:
        os.sched_setscheduler(0, before[0], before[1])


def _execute_all(sc, run_dir, reps, done, meta, stage, stop, say, tick) -> None:
    with _real_time():
        _execute_reps(sc, run_dir, reps, done, meta, stage, stop, say, tick)


def _execute_reps(sc, run_dir, reps, done, meta, stage, stop, say, tick) -> None:
    topo, exp = sc.topology, sc.experiment
    workers = None
    try:
        for r in range(1, reps + 1):
            if r in done:
                say(f"repetition {r}/{reps}: already done, skipped")
                continue
            if stop.is_set():
                break
            if workers is None:
                with stage("reservation"):
                    state = local.up(topo, lambda m: None, seed=exp.seed)
                with stage("deployment"):
                    meta["sysctls"] = deployment_check(sc)
                with stage("configuration"):
                    emulators = {e.link: e for e in local.emulators_of(state)}
                    hosts = [local.host(state, h.name) for h in topo.hosts()]
                    workers = Workers(hosts)
                if "calibration" not in meta:
                    with stage("calibration"):
                        cal = quick_calibration(sc)
                        rundir.write_json(run_dir / "calibration.json", cal)
                        meta["calibration"] = "calibration.json"
            with stage(f"execution {r}/{reps}"):
                outcome = run_repetition(sc, run_dir, r, workers, emulators, stop, tick,
                                         kernel_ccs(meta))
            with stage(f"gathering {r}/{reps}"):
                gather_emulator_logs(run_dir, r, emulators, outcome)
            say(f"repetition {r}/{reps}: {outcome.status}"
                + (f" — {outcome.reason}" if outcome.reason else ""))
            if outcome.status != "ok":
                workers.close()
                workers = None
                with stage("cleaning"):
                    local.down()  # the next repetition starts on a fresh testbed
    finally:
        if workers is not None:
            workers.close()


def kernel_ccs(meta: dict) -> dict[str, str]:
    """Canonical congestion control -> the name this run selects it by."""
    return {c["name"]: c["kernel_name"] for c in meta.get("congestion_controls", [])}


def run_repetition(sc: Scenario, run_dir: Path, r: int, workers: Workers, emulators: dict,
                   stop: threading.Event, tick: Say, cc_names: dict[str, str]) -> Outcome:
    exp = sc.experiment
    rd = rundir.rep_dir(run_dir, r)
    if rd.exists():
        shutil.rmtree(rd)  # an interrupted attempt: start it again
    rd.mkdir(parents=True)
    events = events_for_repetition(exp, r)
    rundir.write_json(rd / "events.json", [e.model_dump(mode="json") for e in events])
    plan = procplan.build(events, sc.topology, rd, exp.interval_us, cc_names)
    rundir.write_json(rd / "plan.json", [p.__dict__ for p in plan.procs])
    outcome = Repetition(plan, workers, emulators, exp.duration_us, tick, stop, tag=r).run()
    rundir.write_json(rd / "result.json", {"repetition": r, **outcome.to_json()})
    return outcome


def gather_emulator_logs(run_dir: Path, r: int, emulators: dict, outcome: Outcome) -> None:
    """The emulator logs continuously; keep this repetition's rows next to its results,
    from the start of its receivers until just after its end."""
    lo, hi = outcome.start_ns, outcome.end_ns + EMULATOR_LOG_MARGIN_NS
    for link, em in emulators.items():
        dst = rundir.rep_dir(run_dir, r) / "emulator" / link
        dst.mkdir(parents=True, exist_ok=True)
        src = Path(em.log_dir)
        conf = src / "linkem.json"
        if conf.exists():
            shutil.copyfile(conf, dst / "linkem.json")
        for d in ("ab", "ba"):
            path = src / f"linkem-{d}.csv"
            if not path.exists():
                continue
            df = _log_until(path, hi)
            df[(df["t_ns"] >= lo) & (df["t_ns"] <= hi)].to_csv(dst / path.name, index=False)


def _log_until(path: Path, t_ns: int) -> pd.DataFrame:
    """The emulator's log once it has rows up to t_ns (it writes them with a delay)."""
    deadline = time.monotonic() + EMULATOR_LOG_WAIT_S + max(0, t_ns - time.monotonic_ns()) / 1e9
    while True:
        df = pd.read_csv(path)
        if (len(df) and df["t_ns"].iloc[-1] >= t_ns) or time.monotonic() > deadline:
            return df
        time.sleep(0.1)


def deployment_check(sc: Scenario) -> dict:
    """Socket buffers vs the largest BDP among the timeline's paths, read back per host."""
    topo = sc.topology
    bdp = max((path_spec(topo, s, d).bdp_bytes or 0 for s, d in sc.experiment.pairs()), default=0)
    out = {}
    for h in topo.hosts():
        vals = inv.sysctls(NetnsHost(h.name, naming.node_ns(h.name)),
                           ("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"))
        out[h.name] = vals
        for k, v in vals.items():
            mx = inv.tcp_buffer_max(v)
            if bdp and mx is not None and mx < bdp:
                raise PreflightError(f"{h.name}: {k} max {mx} is below the path BDP {bdp}")
    return {"bdp_bytes": bdp, "hosts": out}


def quick_calibration(sc: Scenario) -> dict:
    """Idle RTT of every source/destination pair of the timeline vs its configuration."""
    topo = sc.topology
    out = {"pairs": [], "inventory": None}
    pairs = sc.experiment.pairs()
    for s, d in pairs[:32]:
        src = NetnsHost(s, naming.node_ns(s))
        addr = topo.address(d)
        probes.ping(src, addr, 2, 0.05)  # neighbour resolution
        rtts = probes.ping(src, addr, 20, 0.01)
        spec = path_spec(topo, s, d)
        med = probes.median(rtts)
        out["pairs"].append({"src": s, "dst": d, "rtt_configured_ms": spec.rtt_us / 1000,
                             "rtt_measured_ms": med, "rate_bps": spec.rate_bps,
                             "error_pct": (100 * (med - spec.rtt_us / 1000) / (spec.rtt_us / 1000)
                                           if spec.rtt_us else None)})
    if pairs:
        s, d = pairs[0]
        src_host = NetnsHost(s, naming.node_ns(s))
        out["inventory"] = inv.inventory(src_host, [], "eth0")
    return out


def dispatch_summary(run_dir: Path, reps: int) -> dict:
    """Dispatch error of every timed event over all repetitions (ms): p50, p99, max."""
    import numpy as np

    errors, per_rep = [], []
    for r in range(1, reps + 1):
        res = rundir.rep_result(run_dir, r)
        if not res:
            continue
        e = [d["error_ns"] / 1e6 for d in res.get("dispatch", [])]
        errors += e
        if e:
            per_rep.append({"repetition": r, "events": len(e),
                            "p99_ms": float(np.percentile(e, 99)), "max_ms": max(e)})
    if not errors:
        return {"events": 0}
    return {"events": len(errors), "p50_ms": float(np.percentile(errors, 50)),
            "p99_ms": float(np.percentile(errors, 99)), "max_ms": max(errors),
            "per_repetition": per_rep}


def manifest(run_dir: Path) -> list[dict]:
    return [{"path": str(p.relative_to(run_dir)), "bytes": p.stat().st_size}
            for p in sorted(run_dir.rglob("*")) if p.is_file() and p.name != "meta.json"]
