"""What an SSH testbed does on each host: check it before anything changes (preflight),
then record and change (ITB's directory, its programs, sysctls, access-link shaping,
addresses), register ITB's eBPF congestion controls where the kernel lacks them, start
the link emulator on the emulator host.

Everything changed is recorded in the host's `<remote dir>/state.json` *before* it is
changed, so a teardown or `itb clean --inventory` (also after a SIGKILL) undoes exactly
that (itb.backends.ssh.cleanup).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from itb import native
from itb.backends.owner import Busy
from itb.backends.ssh import ccs as C
from itb.backends.ssh import itbdir, tcpoptions, verify
from itb.backends.ssh import placement as P
from itb.backends.ssh.cleanup import MIRROR, restore
from itb.backends.ssh.hosts import (
    engine_alive,
    engine_id,
    programs,
    read_json,
    upload,
    upload_hostside,
)
from itb.backends.ssh.inventory import Inventory
from itb.backends.ssh.itbdir import STATE_FILE
from itb.backends.ssh.remote import WORKER_FILE, Remote, RemoteEmulator
from itb.backends.ssh.segments import PlacedWire
from itb.emulation import linkem, naming
from itb.emulation.plan import RMEM_DEFAULT, socket_buffer_max, tbf_params
from itb.errors import CommandFailed, PreflightError
from itb.say import Say
from itb.scenario.testbed.model import Topology

UDPRATE_FILE = "bin/udprate.py"  # itb.backends.hostside.udprate: `itb calibrate`'s UDP test


class Setup:
    """The hosts of one placement, as deployment sees them."""

    def __init__(self, inv: Inventory, topology: Topology, placement: P.Placement):
        self.inv, self.topology, self.placement = inv, topology, placement

    def access_rate(self, host: str) -> int | None:
        """The rate its data interface is shaped to: its node's access link (a host that
        plays several nodes gets the highest of their rates; docs/ssh.md)."""
        rates = [
            P.access_rate_bps(self.topology, n)
            for n, h in self.placement.hosts.items()
            if h == host
        ]
        limited = [x for x in rates if x]
        return max(limited) if limited else None

    # -- preflight: nothing changes -----------------------------------------------------
    def plays(self, host: str) -> list[str]:
        """The scenario hosts the inventory host plays."""
        return [n for n, h in self.placement.hosts.items() if h == host]

    def check(self, r: Remote) -> None:
        h = self.inv.get(r.name)
        seen = itbdir.probe(r)
        found = verify.host_problems(r, h, seen)  # the inventory's claims, as `inventory check`
        if found:
            found[0].raise_it()
        st = seen.status
        state = r.conn.read_text(f"{r.dir}/{STATE_FILE}") if st == "ours" else None
        if st == "ours" and (state is None or read_json(state).get("engine") == engine_id()):
            # this run's own, left when the host stopped answering, or a directory of
            # ITB's left before its state was written: undone first
            restore(r)
            state = None
        if state is not None:
            rec = read_json(state).get("engine")
            who = "a live ITB run" if engine_alive(rec) else "an earlier run that did not clean up"
            raise Busy(
                f"host {r.name}: {r.dir} holds the state of {who} ({rec}); "
                "`itb clean --inventory FILE` restores the host"
            )
        field = h.ifaces_field
        for iface in h.ifaces:
            root = r.run(["tc", "qdisc", "show", "dev", iface, "root"]).stdout.split()
            # a configured root qdisc has a handle; the kernel's default has "0:"
            if self.access_rate(r.name) and len(root) > 2 and root[2] != "0:":
                raise PreflightError(
                    f"host {r.name}: field {field}: {iface} has a configured root qdisc "
                    f"({' '.join(root[:3])}) that ITB's access shaping would replace: refused; "
                    "remove it, or leave the interface unshaped (an access rate of none)"
                )
        if h.role != "emulator" and tcpoptions.wanted(self.topology):
            tcpoptions.check(r, self.topology, self.plays(r.name))

    # -- deployment: recorded, then changed ---------------------------------------------
    def deploy(self, r: Remote) -> None:
        h = self.inv.get(r.name)
        itbdir.create(r, engine_id())  # marked as ITB's before anything is put in it
        sysctls: dict[str, str] = {}  # each one's value before ITB's
        state = {"engine": engine_id(), "created": time.time(), "sysctls": sysctls, "qdiscs": []}
        write_state(r, state)  # before anything else changes
        upload_hostside(r, "worker", WORKER_FILE)
        if h.role != "emulator":
            upload_hostside(r, "udprate", UDPRATE_FILE)
        for name in programs(h.role):
            upload(r, Path(native.binary(name)), f"bin/{name}", mode=0o755)
        wanted = {}
        if h.role == "emulator":
            for iface in h.wire_ifaces:
                wanted[f"net.ipv6.conf.{iface}.disable_ipv6"] = "1"  # an L2 wire says nothing
        else:
            bufmax = socket_buffer_max(self.topology)
            # open_receive_window: the window starts at the buffer (and its routes' initrwnd)
            rmem_default = bufmax if self.topology.open_receive_window else RMEM_DEFAULT
            wanted |= {
                "net.ipv4.tcp_rmem": f"4096 {rmem_default} {bufmax}",
                "net.ipv4.tcp_wmem": f"4096 16384 {bufmax}",
                "net.ipv4.tcp_no_metrics_save": "1",
                "net.ipv4.tcp_slow_start_after_idle": "0",
            }
        if wanted:  # one command each way (a round trip is one RTT on a real network)
            now = r.run(["sysctl", "-n", *wanted]).stdout.splitlines()  # one line per key
            if len(now) != len(wanted):
                raise CommandFailed(
                    r.name,
                    ["sysctl", "-n", *wanted],
                    0,
                    f"{len(now)} values for {len(wanted)} keys",
                )
            sysctls |= {k: " ".join(v.split()) for k, v in zip(wanted, now)}  # (in state)
            write_state(r, state)
            r.run(["sysctl", "-qw", *(f"{k}={v}" for k, v in wanted.items())])
        rate = self.access_rate(r.name)
        if rate:
            state["qdiscs"] = [h.data_iface]
            write_state(r, state)
            burst, limit = tbf_params(rate, self.topology.mtu)
            r.run(
                [
                    "tc",
                    "qdisc",
                    "replace",
                    "dev",
                    h.data_iface,
                    "root",
                    "tbf",
                    "rate",
                    f"{rate}bit",
                    "burst",
                    str(burst),
                    "limit",
                    str(limit),
                ]
            )
        for iface in h.wire_ifaces:
            r.run(["ip", "link", "set", "dev", iface, "up"])
        if h.add_address:
            have = r.run(["ip", "-o", "addr", "show", "dev", h.data_iface]).stdout.split()
            if h.data_addr not in have:
                state["addresses"] = [[h.data_iface, h.data_addr]]
                write_state(r, state)
                r.run(["ip", "addr", "add", h.data_addr, "dev", h.data_iface])
            r.run(["ip", "link", "set", "dev", h.data_iface, "up"])
        if h.role != "emulator" and h.data_iface and tcpoptions.wanted(self.topology):
            save = lambda: write_state(r, state)  # noqa: E731
            tcpoptions.apply(r, self.topology, self.plays(r.name), h.data_iface, state, save)

    def register(
        self, remotes: dict[str, Remote], plan: C.Plan, bpf_object: Callable[[str], Path], say: Say
    ) -> None:
        """ITB's eBPF congestion controls on the hosts whose kernel lacks them, one host
        at a time (hosts may share a kernel), each recorded before it is registered."""
        for host, names in sorted(plan.register.items()):
            r = remotes[host]
            state = read_json(r.conn.read_text(f"{r.dir}/{STATE_FILE}"))
            state.setdefault("struct_ops", [])

            def record(name, r=r, state=state):
                state["struct_ops"].append(name)
                write_state(r, state)

            def forget(name, r=r, state=state):
                state["struct_ops"].remove(name)
                write_state(r, state)

            say(f"registering ITB's eBPF {', '.join(names)} on host {host}")
            C.register(r, names, bpf_object, record, forget, upload)

    def start_emulator(self, em: Remote, wire: PlacedWire, seed: int, say: Say) -> RemoteEmulator:
        """linkem for one wire: its `ab` runs along the scenario's link (a → b)."""
        link, ifaces = wire.link, wire.ifaces
        log_dir = f"{em.dir}/emulators/{link.name}"
        em.run(["mkdir", "-p", log_dir])
        config = linkem.config_for(self.topology, link, Path(log_dir), seed)
        config["interfaces"] = list(ifaces)
        config_path = f"{log_dir}/linkem.json"
        em.conn.write_text(config_path, json.dumps(config, indent=1))
        mirror = naming.state_dir() / MIRROR / link.name
        say(f"starting link emulator {link.name} on host {em.name} ({' ↔ '.join(ifaces)})")
        return RemoteEmulator(link.name, em, config_path, log_dir, mirror, f"{em.dir}/bin/linkem")


def write_state(r: Remote, state: dict) -> None:
    r.conn.write_text(f"{r.dir}/{STATE_FILE}", json.dumps(state, indent=1))
