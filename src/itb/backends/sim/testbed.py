"""The simulated testbed as a `Testbed` (itb.backends.testbed): nothing is built and no
process runs on a host; each repetition is one run of itb-sim (ns-3), which writes the
programs' and the emulator's logs in their formats into the repetition's directory, on
a clock that starts at the engine's zero (`simulate`). What a simulation cannot run is
refused before anything runs (itb.backends.sim.config.unsupported)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from itb.backends.host import Host, with_parent
from itb.backends.sim import config, driver
from itb.backends.testbed import CcSupport, Emulator, Say, quiet
from itb.errors import BackendError, PreflightError
from itb.scenario.testbed.model import Topology

# the algorithms whose Linux code runs in the simulator (itb.cc.simlinux); ns-3's own
# models run as "ns3:<model>" (ns3:TcpCubic, ns3:TcpBbr, …)
LINUX = ("reno", "cubic", "bic", "highspeed", "htcp", "scalable", "vegas")
EMULATOR_INTERVAL_US = 1000


class SimTestbed:
    name = "sim"
    same_machine = True
    simulated = True

    def __init__(self, topology: Topology, ccs: CcSupport, seed: int = 1, say: Say = quiet):
        self.topology, self.seed, self.say = topology, seed, say
        self.warnings: list[str] = []
        self._ccs: list[str] = []
        self._support = ccs
        self._program: Path | None = None
        self._up = False

    @property
    def emulators(self) -> Mapping[str, Emulator]:
        return {}  # itb-sim writes each link's log into the repetition itself

    def check_free(self) -> None:
        pass  # nothing of the machine is used

    def preflight(self, ccs: Sequence[str]) -> list[str]:
        for name in ccs:
            if name not in LINUX and not name.startswith("ns3:"):
                raise PreflightError(
                    f"congestion control {name!r}: its Linux code does not run in the "
                    f"simulator (Linux's: {', '.join(LINUX)}); ns-3's models run as "
                    "ns3:<model>, e.g. ns3:TcpBbr"
                )
        self._ccs = list(ccs)
        self.say("building itb-sim against ns-3 (once)")
        self._program = driver.program(self._support.simulator_objects())
        return list(self.warnings)

    def cc_names(self) -> dict[str, str]:
        return {c: c for c in self._ccs}

    def congestion_controls(self) -> list[dict]:
        return [
            {
                "name": c,
                "kernel_name": f"ns3::{c[4:]}" if c.startswith("ns3:") else f"linux:{c}",
                "source": "ns-3 model"
                if c.startswith("ns3:")
                else f"Linux's net/ipv4/tcp_{'cong' if c == 'reno' else c}.c in ns-3",
                "loaded_now": False,
            }
            for c in self._ccs
        ]

    def inventory(self) -> None:
        return None

    def up(self, run_dir: Path) -> None:
        self._up = True

    def built(self) -> bool:
        return self._up

    def hosts(self) -> Sequence[Host]:
        return []  # no process runs on a host

    def host(self, node: str) -> Host:
        raise BackendError(f"a simulated node ({node}) runs no program")

    def ifname(self, node: str) -> str:
        return next(
            ep.ifname for lk in self.topology.links for ep in (lk.a, lk.b) if ep.node == node
        )

    def program(self, node: str, name: str) -> list[str]:
        raise BackendError(f"a simulated node ({node}) runs no program")

    def clock_offset_ns(self, node: str) -> int:
        return 0

    def facts(self) -> dict:
        return {}

    def prepare(self, rep_dir: Path) -> None:
        pass

    def gather(self, rep_dir: Path, end_ns: int = 0) -> list[str]:
        return []

    def down(self) -> dict[str, dict]:
        self._up = False
        return {}

    def release(self) -> None:
        pass

    def unsupported(self, events: list) -> str | None:
        return config.unsupported(self.topology, events)

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
        "simulated_s", "wall_s"} (dates on the engine's clock: zero is now)."""
        why = config.unsupported(self.topology, events)
        if why:
            return {"status": "failed", "reason": f"not simulated: {why}"}
        zero = time.monotonic_ns()
        text = config.config(
            self.topology, events, zero, duration_us, interval_us, self.seed, repetition,
            EMULATOR_INTERVAL_US,
        )  # fmt: skip
        (rep_dir / "sim.conf").write_text(text)
        self._link_configs(rep_dir)
        t0 = time.monotonic()
        prog = self._program or driver.program(self._support.simulator_objects())
        rc, stdout, rss = _run(
            [str(prog), str(rep_dir / "sim.conf"), str(rep_dir)], rep_dir / "sim.err", stop
        )
        wall = time.monotonic() - t0
        if stop is not None and stop.is_set():
            return {"status": "interrupted", "reason": "interrupted by the user"}
        if rc in STOPPED_BY:  # a signal from outside (a Ctrl-C to the group): run it again
            return {"status": "interrupted", "reason": f"itb-sim was stopped (signal {-rc})"}
        if rc != 0:
            lines = (rep_dir / "sim.err").read_text(errors="replace").strip().splitlines()
            return {"status": "failed", "reason": f"itb-sim exited {rc}: {(lines or ['?'])[-1]}"}
        try:
            out = json.loads(stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {"status": "failed", "reason": f"itb-sim said {stdout[-200:]!r}"}
        simulated = out["simulated_ns"]
        return {
            "status": "ok",
            "reason": None,
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


STOPPED_BY = {-signal.SIGINT, -signal.SIGTERM, -signal.SIGHUP}


def _run(argv: list[str], err: Path, stop: threading.Event | None = None) -> tuple[int, str, int]:
    """(exit code, stdout, peak RSS in bytes) of the program, its stderr into `err`; once
    `stop` is set, the program is stopped (SIGTERM, then SIGKILL after 2 s)."""
    out = err.with_name(err.name + ".out")
    with open(err, "wb") as e, open(out, "wb") as o:
        # it dies with the process that runs it (a killed engine, a sweep's killed worker)
        p = subprocess.Popen(with_parent(argv), stdout=o, stderr=e)
    asked = None
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if stop is not None and stop.is_set():
            if asked is None:
                asked = time.monotonic()
                p.terminate()
            elif time.monotonic() - asked > 2:
                p.kill()
        time.sleep(0.05)
    p.returncode = os.waitstatus_to_exitcode(status)
    stdout = out.read_text(errors="replace")
    out.unlink()
    return p.returncode, stdout, usage.ru_maxrss * 1024
