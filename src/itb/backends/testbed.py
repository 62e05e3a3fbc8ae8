"""The one interface every testbed offers, whatever it is made of: namespaces on this
machine (`itb.backends.local`), real hosts over SSH (`itb.backends.ssh`), or a simulator
(`itb.backends.sim`). The runner (`itb run`, the benchmark, the studies) uses only this.

It has two halves. The lifecycle (`Testbed`), in order: `preflight` (checks that change
nothing, nothing of ITB's already there; the congestion controls resolved and made
selectable), `provenance` (what meta.json records), `up` (build and deploy), `start` (what runs the repetitions until
`down`: each `Repetitions.run(events, rep_dir, repetition, stop) → Outcome`), `down`
(everything as it was found; it may be built again), and once at the end `release`. How a
repetition runs is the testbed's: a simulator runs it itself; a testbed of hosts
(`Hosts`: processes on hosts, link emulators, logs gathered) hands itself to the engine's
process execution (`Hosted`, given to it when it is opened: itb.engine.hosted), shared
by every such testbed (`RunsProcesses`). `itb calibrate` and `itb serve --execute` need
a testbed of hosts.

A backend (what `--backend` names) opens testbeds: `itb.backends.registry`.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from itb.backends.host import Host
from itb.backends.outcome import Outcome
from itb.errors import BackendError, PreflightError
from itb.say import Say, quiet  # noqa: F401 (the testbeds take them from here)
from itb.scenario.testbed.model import Topology

if TYPE_CHECKING:
    from itb.scenario.scenario import Scenario


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


class Repetitions(Protocol):
    """What runs a built testbed's repetitions (`Testbed.start`), until `down`."""

    def run(self, events: list, rep_dir: Path, repetition: int, stop: threading.Event) -> Outcome:
        """The repetition of these events (resolved on the testbed's topology), its logs
        written into rep_dir (empty; its events.json written): what it ended as, its
        stages timed into the run's (`RunContext.stage`). Interrupted once `stop` is set.
        A BackendError or PreflightError: the testbed could not run it at all."""
        ...


@dataclass
class RunContext:
    """What a testbed's repetitions are run with (given to `Testbed.start`)."""

    scenario: Scenario  # on the testbed's topology
    run_dir: Path
    meta: dict  # the run's meta.json, filled as it goes (sysctls, hosts, calibration)
    stage: Callable[[str], AbstractContextManager[Any]]  # times a stage into meta["stages"]
    repetitions: int  # how many the run has (the stages' names: "execution 2/10")
    tick: Say  # progress within a repetition


class Testbed(Protocol):
    """A testbed's lifecycle (see the module)."""

    name: str  # its backend's name ("local", "ssh", "sim"): meta.json's backend
    same_machine: bool  # every node on this machine, on its clock
    topology: Topology  # with the addresses the hosts really have
    warnings: list[str]

    def preflight(self, sc: Scenario) -> list[str]:
        """Checks of the scenario that change nothing (nothing of ITB's already there
        too), then its congestion controls made selectable; returns warnings. Refused
        (PreflightError, BackendError): nothing was changed."""
        ...

    def provenance(self) -> dict:
        """What meta.json records of the testbed once preflight passed: its `backend`,
        its `congestion_controls` (canonical name, the name selected, where from), an
        SSH testbed's `inventory` (source, placement)."""
        ...

    def unsupported(self, events: list) -> str | None:
        """Why this testbed cannot run these events (None: it can), said before anything
        is built (a simulator has no program to run on a host, …)."""
        ...

    def up(self, run_dir: Path) -> None: ...

    def built(self) -> bool: ...

    def start(self, run: RunContext) -> Repetitions:
        """Once up: what runs the repetitions (a testbed of hosts: its deployment,
        configuration and calibration stages first)."""
        ...

    def down(self) -> dict[str, dict]:
        """Everything as it was found; the emulators' final statistics by link.
        BackendError naming what could not be restored."""
        ...

    def release(self) -> None: ...


@runtime_checkable
class Hosts(Testbed, Protocol):
    """A testbed of hosts: processes run on them, links are emulated by programs, logs
    are gathered (`itb.backends.local`, `itb.backends.ssh`). What the engine's process
    execution, `itb calibrate` and `itb serve --execute` use besides the lifecycle."""

    def select(self, ccs: Sequence[str]) -> list[str]:
        """The testbed's own checks (nothing of ITB's already there), then these
        congestion controls (canonical names) made selectable; returns warnings. (Its
        `preflight` is the engine's checks of a scenario, then this.)"""
        ...

    @property
    def emulators(self) -> Mapping[str, Emulator]: ...  # link name → its emulator, once up

    def cc_names(self) -> dict[str, str]: ...  # canonical → the name the hosts select

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


class HostedRepetitions(Repetitions, Protocol):
    def close(self) -> None: ...  # its node workers stopped (before the testbed is down)


class Hosted(Protocol):
    """The engine's process execution on a testbed of hosts (itb.engine.hosted), given
    to such a testbed when it is opened: the engine is a layer above the backends."""

    def preflight(self, sc: Scenario, tb: Hosts) -> list[str]: ...

    def start(self, tb: Hosts, run: RunContext) -> HostedRepetitions: ...


def unsupported_on_hosts(events: list, same_machine: bool) -> str | None:
    """Why a testbed of hosts cannot run these events (None: it can): ns-3's models run
    only in simulation; a command held to a profile only on this machine (its pacer is a
    cgroup here). What a host lacks is found by the preflight's checks."""
    for e in events:
        if str(getattr(e, "cc", "")).startswith("ns3:"):
            return f"{e.id}: {e.cc} is ns-3's model, run only in simulation (--backend sim)"
        if not same_machine and getattr(e, "kind", "") == "command" and getattr(e, "paced", False):
            return (
                f"command {e.id}: a command held to a profile runs on the local backend "
                "only (its pacer is a cgroup of this machine)"
            )
    return None


def refuse_unsupported(tb: Testbed | RunsProcesses, sc: Scenario) -> None:
    """PreflightError saying why the testbed cannot run the scenario's events, if so."""
    why = tb.unsupported(list(sc.experiment.events))
    if why:
        raise PreflightError(
            f"{sc.source or 'the scenario'}: cannot run on the {tb.name} testbed: {why}"
        )


class RunsProcesses(ABC):
    """The lifecycle members every testbed of hosts has alike (`itb.backends.local`,
    `itb.backends.ssh`): its repetitions are the engine's process execution (`Hosted`),
    stopped when the testbed goes down (a subclass's `teardown`)."""

    name: str
    hosted: Hosted | None = None
    _running: HostedRepetitions | None = None

    same_machine: bool

    def unsupported(self, events: list) -> str | None:
        return unsupported_on_hosts(events, self.same_machine)

    def _hosted(self) -> Hosted:
        if self.hosted is None:  # a bug of ITB: opened without the engine
            raise BackendError(f"the {self.name} testbed was opened without the engine")
        return self.hosted

    def preflight(self, sc: Scenario) -> list[str]:
        refuse_unsupported(self, sc)
        warnings = self._hosted().preflight(sc, self)  # type: ignore[arg-type]
        return warnings + self.select(sorted(sc.experiment.ccs()))

    def start(self, run: RunContext) -> Repetitions:
        self._running = self._hosted().start(self, run)  # type: ignore[arg-type]
        return self._running

    def down(self) -> dict[str, dict]:
        running, self._running = self._running, None
        if running is not None:
            running.close()
        return self.teardown()

    @abstractmethod
    def select(self, ccs: Sequence[str]) -> list[str]:
        """See `Hosts.select`."""

    @abstractmethod
    def teardown(self) -> dict[str, dict]:
        """Everything as it was found (see `Testbed.down`); its node workers stopped
        first."""
