"""Where a calibration runs: the local emulated WAN, or an SSH testbed (an inventory).

Both give the calibration the same things: the hosts of its pair, the emulator of the
bottleneck (its 1 ms log in a local directory, its CPU time, its clock against this
machine's), the command of the UDP rate tool on a host, and at the end the emulator's
final statistics.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from itb import native
from itb.backends import local, procs
from itb.backends.ssh import hosts, remote
from itb.backends.ssh import testbed as ssh
from itb.backends.ssh.inventory import Inventory
from itb.scenario.model import Topology

Progress = Callable[[str], None]
UDPRATE = Path(native.REPO) / "src" / "itb" / "calibration" / "udprate.py"


class LocalEmulator:
    """A local emulator as the calibration reads it."""

    clock_offset_ns = 0

    def __init__(self, handle):
        self.h = handle
        self.log_dir, self.pid, self.link, self.ns = handle.log_dir, handle.pid, handle.link, handle.ns

    def cpu_seconds(self) -> float:
        return procs.cpu_seconds(self.h.pid)

    def sync_logs(self) -> None:
        pass


class LocalBed:
    local = True

    def __init__(self, topo: Topology, progress: Progress):
        self.topology = topo
        self.state = local.up(topo, progress)

    def host(self, node: str):
        return local.host(self.state, node)

    def ifname(self, node: str) -> str:
        t = self.topology
        return next(ep.ifname for lk in t.links for ep in (lk.a, lk.b) if ep.node == node)

    def emulator(self, link: str):
        h = next((e for e in local.emulators_of(self.state) if e.link == link), None)
        return None if h is None else LocalEmulator(h)

    def udprate(self, node: str) -> list[str]:
        return [sys.executable, "-m", "itb.calibration.udprate"]

    def offset(self, node: str) -> int:
        return 0  # one clock for every namespace

    def down(self) -> dict:
        return local.down()


class SshBed:
    """The SSH testbed of an inventory, deployed for the calibration's pair."""

    local = False

    def __init__(self, inv: Inventory, topo: Topology, kernel_cc: str, progress: Progress,
                 pair: tuple[str, str]):
        self.tb = ssh.SshTestbed(inv, topo, say=progress, only=set(pair))
        self.topology = self.tb.topology
        self.inv = inv
        self._offsets: dict[str, int] = {}
        self.tmp = Path(tempfile.mkdtemp(prefix="itb-calibrate-"))
        progress(f"connecting to {len(self.tb.used())} host(s)")
        self.tb.preflight([kernel_cc])
        try:
            from itb.cc import ebpf

            self.tb.deploy(self.tmp, ebpf.object_path)
            for r in self.tb.remotes.values():
                hosts.upload(r, UDPRATE, "bin/udprate.py")
            for em in self.tb.emulators.values():
                em.sync_clock()
        except BaseException:
            self.down()
            raise

    def host(self, node: str):
        return next(n for n in self.tb.nodes() if n.name == node)

    def ifname(self, node: str) -> str:
        return self.tb.ifname(node)

    def emulator(self, link: str):
        return self.tb.emulators.get(link)

    def udprate(self, node: str) -> list[str]:
        r = self.tb.remotes[self.tb.placement.hosts[node]]
        return ["python3", f"{r.dir}/bin/udprate.py"]

    def offset(self, node: str) -> int:
        """The node's host clock minus this machine's (measured once, on first use)."""
        host = self.tb.placement.hosts[node]
        if host not in self._offsets:
            self._offsets[host] = remote.measure_clock(self.tb.remotes[host]).offset_ns
        return self._offsets[host]

    def down(self) -> dict:
        import shutil

        try:
            failed = self.tb.teardown()
        finally:
            self.tb.release()
        shutil.rmtree(self.tmp, ignore_errors=True)
        if failed:
            from itb.errors import BackendError

            raise BackendError("could not restore: " + "; ".join(failed) +
                               " (`itb clean --inventory FILE` retries)")
        return self.tb.stats
