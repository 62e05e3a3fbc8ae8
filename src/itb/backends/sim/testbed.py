"""The simulated testbed as a `Testbed` (itb.backends.testbed): nothing is built and no
process runs on a host; each repetition is one run of itb-sim (ns-3), which writes the
programs' and the emulator's logs in their formats into the repetition's directory, on
a clock that starts at the engine's zero (`simulate`). What a simulation cannot run is
refused before anything runs (itb.backends.sim.config.unsupported)."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from itb import rundir
from itb.backends.host import with_parent
from itb.backends.outcome import Outcome
from itb.backends.sim import config, driver, memory
from itb.backends.testbed import CcSupport, Repetitions, RunContext, Say, quiet
from itb.errors import PreflightError
from itb.scenario.experiment.background import SIMULATOR_DRAW, started_later
from itb.scenario.scenario import Scenario
from itb.scenario.testbed.model import Topology

EMULATOR_INTERVAL_US = 1000
# What a simulation varies by itself from one repetition to the next: every transfer,
# ping-pong and UDP stream starts a seeded draw in [0, this] later (on top of a scenario's
# own start_jitter), recorded in the repetition's events.json. ns-3 is deterministic: the
# same inputs give the same times, and a comparison of protocols on repetitions without
# spread is undefined. The testbed's repetitions differ by its own noise (the hosts'
# scheduling, the emulator's timing); this draw stands for it, its size measured so that
# simulated repetitions spread as the testbed's do (docs/simulation.md, "Repetitions").
NATURAL_START_JITTER_US = 1000


class SimTestbed:
    name = "sim"
    same_machine = True

    def __init__(self, topology: Topology, ccs: CcSupport, seed: int = 1, say: Say = quiet):
        self.topology, self.seed, self.say = topology, seed, say
        self.warnings: list[str] = []
        self._ccs: list[str] = []
        self._support = ccs
        self._program: Path | None = None
        self._up = False

    def preflight(self, sc: Scenario) -> list[str]:
        """What it cannot simulate refused, then the simulator built with Linux's own
        congestion controls (nothing of the machine is used)."""
        why = self.unsupported(list(sc.experiment.events))
        if why:  # (said so: a simulator has not what a host has)
            raise PreflightError(f"{sc.source or 'the scenario'}: cannot be simulated: {why}")
        self._ccs = sorted(sc.experiment.ccs())
        self._program = ready(self._ccs, self._support, self.say)
        return list(self.warnings)

    def provenance(self) -> dict:
        return {
            "backend": self.name,
            "congestion_controls": [
                {
                    "name": c,
                    "kernel_name": f"ns3::{c[4:]}" if c.startswith("ns3:") else f"linux:{c}",
                    "source": "ns-3 model"
                    if c.startswith("ns3:")
                    else f"Linux's net/ipv4/tcp_{'cong' if c == 'reno' else c}.c in ns-3",
                    "loaded_now": False,
                }
                for c in self._ccs
            ],
        }

    def unsupported(self, events: list) -> str | None:
        return config.unsupported(self.topology, events)

    def up(self, run_dir: Path) -> None:
        self._up = True

    def built(self) -> bool:
        return self._up

    def start(self, run: RunContext) -> Repetitions:
        return SimRepetitions(self, run)

    def down(self) -> dict[str, dict]:
        self._up = False
        return {}  # no emulator ran: each link's log is in its repetitions

    def release(self) -> None:
        self._program, self._ccs = None, []  # preflight again before the next run

    def simulate(
        self,
        events: list,
        rep_dir: Path,
        duration_us: int,
        interval_us: int,
        repetition: int,
        stop: threading.Event | None = None,
    ) -> dict:
        """Runs the repetition; {"status", "reason", "start_ns", "zero_ns", "end_ns",
        "simulated_s", "wall_s", "unfinished"} (dates on the engine's clock: zero is now)."""
        why = config.unsupported(self.topology, events)
        if why:
            return {"status": "failed", "reason": f"not simulated: {why}"}
        events = started_later(
            events, self.seed, repetition, NATURAL_START_JITTER_US, SIMULATOR_DRAW
        )
        rundir.write_json(rep_dir / "events.json", [e.model_dump(mode="json") for e in events])
        zero = time.monotonic_ns()
        text = config.config(
            self.topology, events, zero, duration_us, interval_us, self.seed, repetition,
            EMULATOR_INTERVAL_US,
        )  # fmt: skip
        (rep_dir / "sim.conf").write_text(text)
        self._link_configs(rep_dir)
        t0 = time.monotonic()
        prog = self._program or driver.program(self._support.simulator_objects(), self.say)
        limit = memory.available_bytes() + ADDRESS_SLACK
        rc, stdout, rss = _run(
            [str(prog), str(rep_dir / "sim.conf"), str(rep_dir)], rep_dir / "sim.err", stop,
            limit,
        )  # fmt: skip
        wall = time.monotonic() - t0
        if stop is not None and stop.is_set():
            return {"status": "interrupted", "reason": "interrupted by the user"}
        if rc in STOPPED_BY:  # a signal from outside (a Ctrl-C to the group): run it again
            return {"status": "interrupted", "reason": f"itb-sim was stopped (signal {-rc})"}
        if rc != 0:
            return {"status": "failed", "reason": failure(rc, rep_dir, wall, rss, limit)}
        try:
            out = json.loads(stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {"status": "failed", "reason": f"itb-sim said {stdout[-200:]!r}"}
        simulated = out["simulated_ns"]
        return {
            "status": "ok",
            "reason": None,
            # what it awaited and the timeline cut short (<id>.recv, <id>.send, a stream's
            # or a timer's id): the engine fails the repetition as an emulated one
            "unfinished": out["unfinished"],
            "start_ns": zero,
            "zero_ns": zero,
            "end_ns": zero + simulated,
            "simulated_s": simulated / 1e9,
            "wall_s": wall,
            "peak_rss_bytes": rss,
        }

    def _link_configs(self, rep_dir: Path) -> None:
        """Each emulated link's linkem.json, as the emulator's (what its log's reader
        needs: the interval; and the directions, for the record)."""
        for lk in self.topology.links:
            if not lk.emulated:
                continue
            d = rep_dir / "emulator" / lk.name
            d.mkdir(parents=True, exist_ok=True)
            conf = {
                "simulated": True,
                "interval_us": EMULATOR_INTERVAL_US,
                "seed": self.seed,
                "directions": {
                    "ab": lk.forward.model_dump(mode="json"),
                    "ba": lk.reverse.model_dump(mode="json"),
                },
            }
            (d / "linkem.json").write_text(json.dumps(conf, indent=1))


class SimRepetitions:
    """A simulated run's repetitions: each one run of itb-sim, its result as a
    repetition's (interrupted, to be run again, when the run was stopped during it)."""

    def __init__(self, tb: SimTestbed, run: RunContext):
        self.tb, self.run_ctx = tb, run

    def run(self, events: list, rep_dir: Path, repetition: int, stop: threading.Event) -> Outcome:
        run, exp = self.run_ctx, self.run_ctx.scenario.experiment
        with run.stage(f"execution {repetition}/{run.repetitions}"):
            run.tick(f"repetition {repetition}: simulating")
            res = self.tb.simulate(
                events, rep_dir, exp.duration_us, exp.interval_us, repetition, stop
            )
        out = Outcome()
        if res["status"] != "ok":
            out.fail(res["reason"], status=res["status"])
            return out
        out.start_ns, out.zero_ns, out.end_ns = res["start_ns"], res["zero_ns"], res["end_ns"]
        if res["unfinished"]:
            out.cut_short(exp.duration_us, res["unfinished"])
        out.warnings.append(
            f"simulated: {res['simulated_s']:.3f} s in {res['wall_s']:.3f} s of wall time, "
            f"peak memory {res['peak_rss_bytes'] / 2**20:.0f} MiB"
        )
        return out


def ready(ccs: Sequence[str], support: CcSupport, say: Say = quiet) -> Path:
    """What a simulation needs before anything is written: these congestion controls
    (Linux's code built in, ns-3's models in its registry) and the simulator (built now,
    saying so, if missing or stale; seen to run). `PreflightError` (exit 4) naming what
    is missing; the simulator's path."""
    for name in ccs:
        why = config.cc_unsupported(name)
        if why:
            raise PreflightError(why)
    return driver.program(support.simulator_objects(), say)


STOPPED_BY = {-signal.SIGINT, -signal.SIGTERM, -signal.SIGHUP}
# itb-sim's address space may exceed the memory available at its start by this much (its
# libraries' mappings: ~12 MiB measured) before an allocation fails (RLIMIT_AS)
ADDRESS_SLACK = 256 * 2**20


def failure(rc: int, rep_dir: Path, wall_s: float, peak: int, limit: int) -> str:
    """Why itb-sim failed, for people: how it ended (a signal by its name), what it said
    last, and where its messages are; running out of memory said as such."""
    err = rep_dir / "sim.err"
    text = err.read_text(errors="replace").strip() if err.exists() else ""
    where = f"{rep_dir.name}/sim.err" + ("" if text else " (empty)")
    said = f"; it said: {text.splitlines()[-1][:300]}" if text else ""
    if "bad_alloc" in text or (rc < 0 and peak > 0.9 * limit):
        return (
            f"itb-sim ran out of memory after {wall_s:.1f} s ({driver.ended(rc)}, at "
            f"{peak / 2**30:.2f} GiB; its limit {limit / 2**30:.1f} GiB, the memory the machine "
            f"had available at its start): the scenario needs more than this machine has "
            f"(its messages: {where})"
        )
    return f"itb-sim {driver.ended(rc)} after {wall_s:.1f} s{said} (its messages: {where})"


def _run(
    argv: list[str], err: Path, stop: threading.Event | None = None, limit: int | None = None
) -> tuple[int, str, int]:
    """(exit code, stdout, peak RSS in bytes) of the program, its stderr into `err`, its
    address space at most `limit` bytes (an allocation beyond fails: a backstop to the
    estimate, itb.backends.sim.memory); once `stop` is set, the program is stopped
    (SIGTERM, then SIGKILL after 2 s).

    The peak is the program's own high-water mark (VmHWM), read while it runs: the
    rusage of wait4 is not, as Linux keeps in it the largest of every image the process
    had, the forked copy of this Python process's included."""
    out = err.with_name(err.name + ".out")
    with open(err, "wb") as e, open(out, "wb") as o:
        # it dies with the process that runs it (a killed engine, a sweep's killed worker)
        prlimit = shutil.which("prlimit")  # (util-linux, as setpriv)
        if limit is not None and prlimit:
            argv = [prlimit, f"--as={limit}", "--", *argv]
        p = subprocess.Popen(with_parent(argv), stdout=o, stderr=e)
    if limit is not None and not prlimit:  # (from its first instructions on, nearly)
        with contextlib.suppress(OSError):
            resource.prlimit(p.pid, resource.RLIMIT_AS, (limit, limit))
    asked, peak, t0 = None, 0, time.monotonic()
    while True:
        peak = max(peak, _high_water_bytes(p.pid))
        pid, status, _usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if stop is not None and stop.is_set():
            if asked is None:
                asked = time.monotonic()
                p.terminate()
            elif time.monotonic() - asked > 2:
                p.kill()
        # often at first (a short run's peak is read near its end), then every 50 ms
        time.sleep(min(0.05, max(0.002, (time.monotonic() - t0) / 20)))
    p.returncode = os.waitstatus_to_exitcode(status)
    stdout = out.read_text(errors="replace")
    out.unlink()
    return p.returncode, stdout, peak


def _high_water_bytes(pid: int) -> int:
    """The process's peak resident set so far (VmHWM), 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0
