"""An SSH testbed (the `Testbed` of itb.backends.testbed on an inventory of real hosts):
connect and check every host (preflight), deploy ITB's programs, set the hosts up
(sysctls, access-link shaping, linkem on the emulator host: itb.backends.ssh.deploy),
run the repetitions' processes there, bring their logs back, and leave every host as
it was found.

What ITB changes on a host is recorded *there*, in `<remote dir>/state.json`, before it
is changed: the original value of every sysctl it sets, the interfaces it shaped, and
(by the worker) the PID and start time of every process it started. `teardown` and
`clean` (also after the engine was killed with SIGKILL) undo exactly that.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from itb import native
from itb.backends import facts as F
from itb.backends.owner import Busy
from itb.backends.ssh import ccs as C
from itb.backends.ssh import labhold
from itb.backends.ssh import placement as P
from itb.backends.ssh.cleanup import clean, restore
from itb.backends.ssh.conn import HostUnreachable
from itb.backends.ssh.deploy import UDPRATE_FILE, Setup
from itb.backends.ssh.hosts import NEEDED, connect, missing_tools, parallel, programs
from itb.backends.ssh.inventory import Inventory
from itb.backends.ssh.remote import Remote, RemoteEmulator, SshNode, measure_clock
from itb.backends.testbed import CcSupport, RunsProcesses, Say, quiet
from itb.emulation import monitor
from itb.errors import BackendError, CommandFailed, ItbError, PreflightError
from itb.scenario.testbed.model import Topology

__all__ = [
    "SshTestbed",
    "NEEDED",
    "Busy",
    "clean",
    "connect",
    "missing_tools",
    "parallel",
    "restore",
    "PreflightError",
]

# the rows a repetition keeps, up to KEPT_PAST_END_NS after its end, are written
# ROWS_WRITTEN_NS after their interval
EMULATOR_ROWS_WRITTEN_NS = monitor.KEPT_PAST_END_NS + monitor.ROWS_WRITTEN_NS


class SshTestbed(RunsProcesses):
    name = "ssh"
    same_machine = False

    def __init__(
        self,
        inv: Inventory,
        topo: Topology,
        ccs: CcSupport,
        seed: int = 1,
        say: Say = quiet,
        only: set[str] | None = None,
    ):
        self.inv, self.seed, self.say, self._ccs = inv, seed, say, ccs
        self.placement = P.place(topo, inv, only)
        self.topology = P.placed_topology(topo, inv, self.placement)
        self.setup = Setup(inv, self.topology, self.placement)
        self.remotes: dict[str, Remote] = {}
        self.emulators: dict[str, RemoteEmulator] = {}
        self.run_dir: Path | None = None
        self.warnings: list[str] = []
        self.ccs = C.Plan()  # congestion controls: kernel names, what to register where
        self.lab: labhold.Hold | None = None  # held from preflight to `release`
        self._wanted: list[str] = []  # the congestion controls preflight resolved
        self._built = False
        self._offsets: dict[str, int] = {}  # host → its clock minus this machine's
        if topo.links and any(lk.emulated for lk in topo.links) and self.placement.link is None:
            self.warnings.append(
                "the inventory has no emulator host: the path between the "
                "sides is the real network, not the scenario's bottleneck; "
                "the calibration measures it"
            )

    def used(self) -> list[str]:
        names = set(self.placement.hosts.values())
        names |= {w.host for w in self.placement.wires}
        return sorted(names)

    # -- preflight --------------------------------------------------------------------
    def select(self, ccs: Sequence[str]) -> list[str]:
        """Connects and checks every host; `ccs` (canonical names): resolved on the end
        hosts into `self.ccs` (what the programs select, what `up` registers). Holds
        the lab the hosts belong to (if any) until `release`."""
        if self.lab is None:
            self.lab = labhold.hold(self.inv.ssh.lab, self.inv.source)
        self._wanted = list(ccs)
        self.say(f"connecting to {len(self.used())} host(s)")
        self.remotes = connect(self.inv, self.used())
        try:
            parallel(self.setup.check, list(self.remotes.values()))
            ends = [r for r in self.remotes.values() if self.inv.get(r.name).role != "emulator"]
            self.ccs = C.plan(ends, self._wanted, lambda host: self.inv.ebpf(self.inv.get(host)))
        except BaseException:  # refused: nothing was changed, the sessions end now
            for r in self.remotes.values():
                r.conn.close()
            self.remotes = {}
            raise
        return list(self.warnings)

    def cc_names(self) -> dict[str, str]:
        return dict(self.ccs.names)

    def provenance(self) -> dict:
        return {
            "backend": self.name,
            "congestion_controls": self.congestion_controls(),
            "inventory": self.inventory(),
        }

    def congestion_controls(self) -> list[dict]:
        """As meta.json records them: canonical name, the name the hosts select it by."""
        p = self.ccs
        return [
            {
                "name": n,
                "kernel_name": k,
                "source": p.source[n],
                # ITB's registered there (once per kernel: hosts may share one)
                "kernel_lacks_it_on": sorted(h for h, ns in p.register.items() if n in ns),
            }
            for n, k in sorted(p.names.items())
        ]

    def inventory(self) -> dict:
        """meta.json's `inventory`: where the run's hosts came from and what plays what."""
        p = self.placement
        return {
            "source": self.inv.source,
            "placement": p.hosts,
            "emulator": p.emulator,
            "emulators": p.emulators,  # emulated link → the emulator host that runs it
            "provider": self.inv.provider.kind if self.inv.provider else None,
        }

    # -- deployment -------------------------------------------------------------------
    def up(self, run_dir: Path) -> None:
        """Record, then change: ITB's directory, programs, sysctls, shaping, ITB's eBPF
        congestion controls, the emulator; its clock against this machine's."""
        if not self.remotes:  # built again after a teardown: connect again
            self.select(self._wanted)
        self._built = True
        self.run_dir = run_dir
        parallel(self.setup.deploy, list(self.remotes.values()))
        self.setup.register(self.remotes, self.ccs, self._ccs.object_path, self.say)
        for wire in self.placement.wires:
            em = self.setup.start_emulator(self.remotes[wire.host], wire, self.seed, self.say)
            self.emulators[em.link] = em
            em.sync_clock()

    def built(self) -> bool:
        return self._built

    # -- the nodes of a repetition ----------------------------------------------------
    def hosts(self) -> list[SshNode]:
        return [self.host(node) for node in sorted(self.placement.hosts)]

    def host(self, node: str) -> SshNode:
        if self.run_dir is None:
            raise BackendError("the SSH testbed is not up")
        r = self.remotes[self.placement.hosts[node]]
        paths = [
            (str(self.run_dir.resolve()), f"{r.dir}/run"),
            *((native.binary(p), f"{r.dir}/bin/{p}") for p in programs("left")),
        ]
        return SshNode(node, r, paths)

    def ifname(self, node: str) -> str:
        iface, _addr = self.inv.data_plane(self.placement.hosts[node])
        return iface

    def program(self, node: str, name: str) -> list[str]:
        if name != "udprate":
            raise KeyError(name)  # the worker is started by the node itself (worker_argv)
        return ["python3", f"{self.remotes[self.placement.hosts[node]].dir}/{UDPRATE_FILE}"]

    def clock_offset_ns(self, node: str) -> int:
        """The node's host clock minus this machine's (measured once, on first use)."""
        host = self.placement.hosts[node]
        if host not in self._offsets:
            self._offsets[host] = measure_clock(self.remotes[host]).offset_ns
        return self._offsets[host]

    def facts(self) -> dict:
        """Each host's CPU, kernel and NIC (its data interface; the emulator's first)."""

        def one(item):
            name, r = item
            h = self.inv.get(name)
            return name, {"role": h.role, **F.host_facts(r, h.iface)}

        return dict(parallel(one, sorted(self.remotes.items())))

    def prepare(self, rep_dir: Path) -> None:
        """The repetition's log directories on every host; the emulator's clock measured
        again (its log is cut on it)."""
        assert self.run_dir is not None
        rel = rep_dir.resolve().relative_to(self.run_dir.resolve())
        by_host: dict[str, list[str]] = {}
        for node, host in self.placement.hosts.items():
            by_host.setdefault(host, []).append(f"{self.remotes[host].dir}/run/{rel}/nodes/{node}")
        parallel(lambda kv: self.remotes[kv[0]].run(["mkdir", "-p", *kv[1]]), list(by_host.items()))
        for em in self.emulators.values():
            em.sync_clock()

    def gather(self, rep_dir: Path, end_ns: int = 0) -> list[str]:
        """The repetition's logs from every host that answers; returns the hosts that did
        not (their logs are missing, the repetition says why). The emulator's log is
        copied once linkem has written the rows up to the end (`end_ns`, engine clock)
        and its margin."""
        assert self.run_dir is not None
        rel = rep_dir.resolve().relative_to(self.run_dir.resolve())
        lost = []
        for node, host in sorted(self.placement.hosts.items()):
            r = self.remotes[host]
            try:
                r.conn.get(f"{r.dir}/run/{rel}/nodes/{node}", rep_dir / "nodes" / node)
            except HostUnreachable:
                lost.append(host)
        for host in sorted(set(self.placement.hosts.values()) - set(lost)):
            r = self.remotes[host]
            try:
                r.run(["rm", "-rf", "--", f"{r.dir}/run/{rel}"], check=False)
            except HostUnreachable:
                lost.append(host)
        wait = (end_ns + EMULATOR_ROWS_WRITTEN_NS - time.monotonic_ns()) / 1e9
        if self.emulators and wait > 0:
            time.sleep(wait)
        for em in self.emulators.values():
            try:
                em.sync_logs()
            except (HostUnreachable, CommandFailed):
                lost.append(em.remote.name)
        return sorted(set(lost))

    # -- teardown ---------------------------------------------------------------------
    def release(self) -> None:
        """Lets go of the lab (after `down`: `itb lab down` may then remove it)."""
        if self.lab is not None:
            self.lab.release()
            self.lab = None

    def teardown(self) -> dict[str, dict]:
        """Stops the emulator (its final statistics are returned) and restores every
        host; BackendError naming the hosts that could not be restored."""
        stats, failed = self._teardown()
        self.remotes.clear()
        self._built = False
        self._offsets.clear()
        if failed:
            raise BackendError(
                "could not restore: "
                + "; ".join(failed)
                + " (`itb clean --inventory FILE` retries)"
            )
        return stats

    def _teardown(self) -> tuple[dict[str, dict], list[str]]:
        """Stops the emulator and restores every host that answers; returns the emulator's
        statistics and the hosts that did not. A host whose control connection was lost
        (its session killed, a network blip) is connected to again once and restored."""
        stats: dict[str, dict] = {}
        for link, em in self.emulators.items():
            got = em.close()
            if got is not None:
                stats[link] = got
            shutil.rmtree(em.log_dir, ignore_errors=True)
        self.emulators.clear()
        failed: list[str] = []

        def one(r: Remote) -> None:
            try:
                restore(r)
            except HostUnreachable as e:
                r.conn.close()
                try:
                    again = connect(self.inv, [r.name])[r.name]
                except ItbError:
                    failed.append(f"{r.name}: {e}")
                    return
                try:
                    restore(again)
                except (HostUnreachable, CommandFailed) as e2:
                    failed.append(f"{r.name}: {e2}")
                finally:
                    again.conn.close()
            except CommandFailed as e:
                failed.append(f"{r.name}: {e}")
            r.conn.close()

        parallel(one, list(self.remotes.values()))
        return stats, failed
