"""The local emulated WAN as a `Testbed` (itb.backends.testbed): built for a run or a
calibration, its emulators bound to this process (they die with it), torn down after.
Congestion controls the kernel lacks are ITB's eBPF ones, registered on this machine in
`preflight` and let go in `release`."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from itb.backends import hostside
from itb.backends.host import NetnsHost
from itb.backends.local import build
from itb.backends.testbed import CcSupport, Emulator, RunsProcesses, Say, quiet
from itb.errors import BackendError
from itb.scenario.testbed.model import Topology


class LocalTestbed(RunsProcesses):
    name = "local"
    same_machine = True

    def __init__(self, topology: Topology, ccs: CcSupport, seed: int = 1, say: Say = quiet):
        self.topology, self.seed, self.say, self._ccs = topology, seed, say, ccs
        self.warnings: list[str] = []
        self.emulators: dict[str, Emulator] = {}
        self._state: dict | None = None  # build's state.json, once up
        self._loaded: list[Any] = []  # congestion controls made selectable (itb.cc.Resolved)

    def check_free(self) -> None:
        if build.read_state():
            raise BackendError(
                "a testbed is already up under this prefix (`itb testbed up`): "
                "a run builds its own; take it down with `itb testbed down` "
                "first, or use another ITB_PREFIX"
            )

    def select(self, ccs: Sequence[str]) -> list[str]:
        """Root, the tools and the emulator; then the congestion controls: the kernel's
        implementation when it has one, else ITB's (registered now, unregistered by
        `release`); a program the verifier refuses stops here. Refused next to a testbed
        already up under this prefix."""
        self.check_free()
        build.preflight()
        self._loaded = self._ccs.ensure(list(ccs), self.say)
        return list(self.warnings)

    def cc_names(self) -> dict[str, str]:
        return {r.name: r.kernel_name for r in self._loaded}

    def provenance(self) -> dict:
        return {"backend": self.name, "congestion_controls": [r.to_json() for r in self._loaded]}

    def up(self, run_dir: Path) -> None:
        self._state = build.up(self.topology, quiet, seed=self.seed)
        self.emulators = {e.link: e for e in build.emulators_of(self._state)}

    def built(self) -> bool:
        return bool(build.read_state())

    def hosts(self) -> list[NetnsHost]:
        return [self.host(h.name) for h in self.topology.hosts()]

    def host(self, node: str) -> NetnsHost:
        if self._state is None:
            raise BackendError("the local testbed is not up")
        return build.host(self._state, node)

    def ifname(self, node: str) -> str:
        return next(
            ep.ifname for lk in self.topology.links for ep in (lk.a, lk.b) if ep.node == node
        )

    def program(self, node: str, name: str) -> list[str]:
        return [sys.executable, "-m", hostside.module(name)]

    def clock_offset_ns(self, node: str) -> int:
        return 0  # one clock for every namespace

    def facts(self) -> dict:
        return {}

    def prepare(self, rep_dir: Path) -> None:
        pass

    def gather(self, rep_dir: Path, end_ns: int = 0) -> list[str]:
        return []  # the processes wrote into the run directory itself

    def teardown(self) -> dict[str, dict]:
        stats = build.down() if build.read_state() else {}
        self._state, self.emulators = None, {}
        return stats

    def release(self) -> None:
        self._ccs.release(self._loaded, self.say)
        self._loaded = []
