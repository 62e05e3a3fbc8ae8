"""The one interface every testbed offers, whatever it is made of: namespaces on this
machine (`itb.backends.local`), real hosts over SSH (`itb.backends.ssh`), or a simulator (`itb.backends.sim`). The runner
(`itb run`, the benchmark, the studies) and `itb calibrate` use only this.

A testbed's life, in order: `check_free` (nothing of ITB's already there), `preflight`
(checks that change nothing; the congestion controls resolved and made selectable),
`up` (build and deploy), then per repetition `prepare`, the processes on `hosts()` /
`host(node)` and the link emulators, `gather`; `down` (everything as it was found; it
may be built again), and once at the end `release`.

`itb.backends.open_testbed` gives the one a run asks for. Adding a backend: a
subpackage of `itb.backends` with a class that has these members, and one line there.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from itb.backends.host import Host
from itb.errors import BackendError
from itb.say import Say, quiet  # noqa: F401 (the testbeds take them from here)
from itb.scenario.testbed.model import Topology


class Emulator(Protocol):
    """A running link emulator as the engine and the calibration read it."""

    link: str
    log_dir: str  # a directory of this machine with its 1 ms log (a mirror, for a remote one)
    clock_offset_ns: int  # its host's clock minus this machine's (its log's dates)

    def send(self, command: dict) -> None: ...  # a runtime change (rate, delay, loss)

    def death(self) -> str | None: ...  # None while it runs, else how it ended

    def cpu_seconds(self) -> float: ...

    def sync_logs(self) -> None: ...  # brings its log up to date in log_dir

    def sync_clock(self) -> object: ...  # measures clock_offset_ns again (result unused)


@dataclass(frozen=True)
class CcSupport:
    """What a testbed needs of ITB's congestion controls (`itb.cc`, a layer above): make
    a list of canonical names selectable on this machine and let them go again, the
    compiled eBPF object of one of ITB's own (copied to hosts that lack it), and for a
    simulator Linux's own algorithms as object files."""

    ensure: Callable[[Sequence[str], Say], list[Any]]
    release: Callable[[list[Any], Say], None]
    object_path: Callable[[str], Path]
    # Linux's own algorithms built for the simulator (itb.cc.simlinux): object files
    simulator_objects: Callable[[], list[Path]] = lambda: []


class Testbed(Protocol):
    name: str  # "local", "ssh", "sim": meta.json's backend
    same_machine: bool  # every node on this machine, on its clock
    simulated: bool  # its repetitions are simulated (`simulate`): no process runs on a host
    topology: Topology  # with the addresses the hosts really have
    warnings: list[str]

    @property
    def emulators(self) -> Mapping[str, Emulator]: ...  # link name → its emulator, once up

    def check_free(self) -> None: ...

    def preflight(self, ccs: Sequence[str]) -> list[str]:
        """Checks that change nothing, then the congestion controls (canonical names)
        made selectable; returns warnings. Refused: nothing was changed."""
        ...

    def cc_names(self) -> dict[str, str]: ...  # canonical → the name the hosts select

    def congestion_controls(self) -> list[dict]: ...  # as meta.json records them

    def inventory(self) -> dict | None: ...  # meta.json's `inventory` (None: local)

    def up(self, run_dir: Path) -> None: ...

    def built(self) -> bool: ...

    def hosts(self) -> Sequence[Host]: ...  # one per end host of the topology

    def host(self, node: str) -> Host: ...

    def ifname(self, node: str) -> str: ...  # the node's data interface

    def program(self, node: str, name: str) -> list[str]:
        """The argv that runs a host-side program (`itb.backends.hostside`) on the node."""
        ...

    def clock_offset_ns(self, node: str) -> int: ...  # the node's clock minus this one's

    def facts(self) -> dict: ...  # each host's CPU, kernel, NIC ({} when this machine's)

    def prepare(self, rep_dir: Path) -> None: ...

    def gather(self, rep_dir: Path, end_ns: int = 0) -> list[str]:
        """The repetition's logs into rep_dir; returns the hosts that did not answer."""
        ...

    def down(self) -> dict[str, dict]:
        """Everything as it was found; the emulators' final statistics by link.
        BackendError naming what could not be restored."""
        ...

    def release(self) -> None: ...

    def unsupported(self, events: list) -> str | None:
        """Why this testbed cannot run these events (None: it can), said before anything
        is built (a simulator has no program to run on a host, …)."""
        ...

    def simulate(
        self,
        events: list,
        rep_dir: Path,
        duration_us: int,
        interval_us: int,
        repetition: int,
        stop: threading.Event | None = None,
    ) -> dict:
        """A simulated testbed's repetition: the logs written into rep_dir as the
        programs' and the emulators' would be; {"status", "reason", "start_ns", "zero_ns",
        "end_ns", "simulated_s", "wall_s", "unfinished"} ("unfinished": the awaited
        processes the timeline's end cut short, named as on a testbed); "interrupted" once
        `stop` is set (the simulator stopped). A real testbed raises BackendError."""
        ...


class RunsProcesses:
    """The simulation's members as a testbed that runs processes on hosts has them
    (`itb.backends.local`, `itb.backends.ssh`)."""

    name: str
    simulated = False

    def unsupported(self, events: list) -> str | None:
        for e in events:  # (what a host lacks is found by the preflight's checks)
            if str(getattr(e, "cc", "")).startswith("ns3:"):
                return f"{e.id}: {e.cc} is ns-3's model, run only in simulation (--backend sim)"
        return None

    def simulate(
        self,
        events: list,
        rep_dir: Path,
        duration_us: int,
        interval_us: int,
        repetition: int,
        stop: threading.Event | None = None,
    ) -> dict:
        raise BackendError(f"the {self.name} testbed runs processes, it does not simulate")
