"""The testbed a run executes on, behind one interface: the local emulated WAN
(namespaces on this machine) or an SSH testbed (an inventory of real hosts).

The runner asks it to build (`up`), for the hosts of the workers and the emulators of
the links, to prepare and gather each repetition's logs, and to leave everything as it
found it (`down`, also after a failed repetition, before the next one rebuilds).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from itb import cc
from itb.backends import local
from itb.backends.ssh.inventory import Inventory
from itb.backends.ssh.testbed import SshTestbed
from itb.calibration.inventory import host_facts
from itb.engine import checks
from itb.errors import BackendError
from itb.scenario.scenario import Scenario

Say = Callable[[str], None]


class LocalTestbed:
    name = "local"

    def __init__(self, sc: Scenario, seed: int, say: Say = lambda s: None):
        self.sc, self.seed, self.say = sc, seed, say
        self.topology = sc.topology
        self.state: dict | None = None
        self.emulators: dict = {}
        self.warnings: list[str] = []
        self.loaded: list = []  # congestion controls made selectable (itb.cc.Resolved)

    def check_free(self) -> None:
        if local.read_state():
            raise BackendError("a testbed is already up under this prefix (`itb testbed up`): "
                               "a run builds its own; take it down with `itb testbed down` "
                               "first, or use another ITB_PREFIX")

    def preflight(self, ccs: list[str]) -> list[str]:
        """Checks, then makes the congestion controls selectable: the kernel's
        implementation when it has one, else ITB's (registered now, unregistered by
        `release`); a program the verifier refuses stops the run here."""
        warnings = checks.preflight(self.sc)
        self.loaded = cc.ensure(ccs, progress=self.say)
        return warnings

    def congestion_controls(self) -> list[dict]:
        return [r.to_json() for r in self.loaded]

    def inventory(self) -> None:
        return None

    def release(self) -> None:
        cc.release(self.loaded, progress=self.say)
        self.loaded = []

    def up(self, run_dir: Path) -> None:
        self.state = local.up(self.topology, lambda m: None, seed=self.seed)
        self.emulators = {e.link: e for e in local.emulators_of(self.state)}

    def hosts(self) -> list:
        return [local.host(self.state, h.name) for h in self.topology.hosts()]

    def host(self, node: str):
        return local.host(self.state, node)

    def prepare(self, rep_dir: Path) -> None:
        pass

    def quick_calibration(self) -> dict:
        return checks.quick_calibration(self.sc)

    def facts(self) -> dict:
        return {}

    def gather(self, rep_dir: Path, end_ns: int = 0) -> list[str]:
        return []

    def built(self) -> bool:
        return bool(local.read_state())

    def down(self) -> None:
        if local.read_state():
            local.down()
        self.state, self.emulators = None, {}


class RemoteTestbed:
    """An SSH testbed (itb.backends.ssh): the scenario's hosts placed on the inventory's."""

    name = "ssh"

    def __init__(self, sc: Scenario, seed: int, inv: Inventory, say: Say = lambda s: None):
        self.sc, self.seed, self.inv = sc, seed, inv
        self.tb = SshTestbed(inv, sc.topology, seed, say)
        self.topology = self.tb.topology
        self.warnings = list(self.tb.warnings)
        self._kernel_ccs: list[str] = []
        self._built = False

    @property
    def emulators(self) -> dict:
        return self.tb.emulators

    def check_free(self) -> None:
        pass  # each host's state is checked in preflight

    def preflight(self, kernel_ccs: list[str]) -> list[str]:
        self._kernel_ccs = kernel_ccs
        checks.preflight_programs(self.sc, local_commands=False)
        self.tb.preflight(kernel_ccs)
        return self.warnings

    def up(self, run_dir: Path) -> None:
        from itb.cc import ebpf

        if not self.tb.remotes:  # rebuilt after a failed repetition: connect again
            self.tb.preflight(self._kernel_ccs)
        self._built = True
        self.tb.deploy(run_dir, ebpf.object_path)

    def inventory(self) -> dict:
        """meta.json's `inventory`: where the run's hosts came from and what plays what."""
        p = self.tb.placement
        return {"source": self.inv.source, "placement": p.hosts, "emulator": p.emulator,
                "provider": self.inv.provider.kind if self.inv.provider else None}

    def release(self) -> None:
        # what the hosts were given goes with their restore (`down`); the lab is let go
        self.tb.release()

    def congestion_controls(self) -> list[dict]:
        """As meta.json records them: canonical name, the name the hosts select it by."""
        p = self.tb.ccs
        return [{"name": n, "kernel_name": k, "source": p.source[n],
                 # ITB's registered there (once per kernel: hosts may share one)
                 "kernel_lacks_it_on": sorted(h for h, ns in p.register.items() if n in ns)}
                for n, k in sorted(p.names.items())]

    def hosts(self) -> list:
        return self.tb.nodes()

    def host(self, node: str):
        return next(n for n in self.tb.nodes() if n.name == node)

    def quick_calibration(self) -> dict:
        return checks.quick_calibration(self.sc, self.host, self.topology, self.tb.ifname,
                                        local=False)

    def facts(self) -> dict:
        """Each host's CPU, kernel and NIC (its data interface; the emulator's first)."""
        from itb.backends.ssh.testbed import parallel

        def one(item):
            name, r = item
            h = self.inv.get(name)
            return name, {"role": h.role,
                          **host_facts(r, h.iface)}

        return dict(parallel(one, sorted(self.tb.remotes.items())))

    def prepare(self, rep_dir: Path) -> None:
        self.tb.prepare(rep_dir)
        for em in self.tb.emulators.values():
            em.sync_clock()

    def gather(self, rep_dir: Path, end_ns: int = 0) -> list[str]:
        return self.tb.gather(rep_dir, end_ns)

    def built(self) -> bool:
        return self._built

    def down(self) -> None:
        failed = self.tb.teardown()
        self.tb.remotes.clear()
        self._built = False
        if failed:
            raise BackendError("could not restore: " + "; ".join(failed) +
                               " (`itb clean --inventory FILE` retries)")


def for_run(sc: Scenario, seed: int, inventory: Inventory | None, say: Say = lambda s: None):
    return LocalTestbed(sc, seed, say) if inventory is None else RemoteTestbed(sc, seed, inventory, say)
