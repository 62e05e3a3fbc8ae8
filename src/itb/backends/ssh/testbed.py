"""An SSH testbed for one run: connect and check every host (preflight), deploy ITB's
programs, set the hosts up (sysctls, access-link shaping, linkem on the emulator host),
and leave every host as it was found.

What ITB changes on a host is recorded *there*, in `<remote dir>/state.json`, before it
is changed: the original value of every sysctl it sets, the interfaces it shaped, and
(by the worker) the PID and start time of every process it started. `teardown` and
`clean` (also after the engine was killed with SIGKILL) undo exactly that.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from itb import native
from itb.backends.owner import Busy
from itb.backends.ssh import ccs as C
from itb.backends.ssh import itbdir, labhold, verify
from itb.backends.ssh import placement as P
from itb.backends.ssh.cleanup import MIRROR, clean, restore
from itb.backends.ssh.conn import HostUnreachable
from itb.backends.ssh.hosts import (
    NEEDED,
    connect,
    engine_alive,
    engine_id,
    missing_tools,
    parallel,
    programs,
    read_json,
    upload,
)
from itb.backends.ssh.inventory import Inventory
from itb.backends.ssh.itbdir import STATE_FILE
from itb.backends.ssh.remote import WORKER_FILE, Remote, RemoteEmulator, SshNode
from itb.emulation import linkem, naming
from itb.emulation.plan import socket_buffer_max, tbf_params
from itb.errors import CommandFailed, ItbError, PreflightError
from itb.scenario.model import Topology

__all__ = ["SshTestbed", "NEEDED", "Busy", "clean", "connect", "missing_tools", "parallel",
           "restore", "PreflightError"]

Say = Callable[[str], None]
# linkem writes a row ~100 ms after its interval and flushes every 100 ms; the rows kept
# run 300 ms past the end (itb.engine.records.EMULATOR_LOG_MARGIN_NS)
EMULATOR_ROWS_WRITTEN_NS = 800_000_000


class SshTestbed:
    def __init__(self, inv: Inventory, topo: Topology, seed: int = 1, say: Say = lambda s: None,
                 only: set[str] | None = None):
        self.inv, self.seed, self.say = inv, seed, say
        self.placement = P.place(topo, inv, only)
        self.topology = P.placed_topology(topo, inv, self.placement)
        self.remotes: dict[str, Remote] = {}
        self.emulators: dict[str, RemoteEmulator] = {}
        self.run_dir: Path | None = None
        self.warnings: list[str] = []
        self.stats: dict[str, dict] = {}  # link → its emulator's final statistics
        self.ccs = C.Plan()  # congestion controls: kernel names, what to register where
        self.lab: labhold.Hold | None = None  # held from preflight to `release`
        if topo.links and any(lk.emulated for lk in topo.links) and self.placement.link is None:
            self.warnings.append("the inventory has no emulator host: the path between the "
                                 "sides is the real network, not the scenario's bottleneck; "
                                 "the calibration measures it")

    def used(self) -> list[str]:
        names = set(self.placement.hosts.values())
        if self.placement.emulator:
            names.add(self.placement.emulator)
        return sorted(names)

    # -- preflight --------------------------------------------------------------------
    def preflight(self, ccs: list[str]) -> None:
        """Connects and checks every host; `ccs` (canonical names): resolved on the end
        hosts into `self.ccs` (what the programs select, what deploy registers). Holds
        the lab the hosts belong to (if any) until `release`."""
        if self.lab is None:
            self.lab = labhold.hold(self.inv.ssh.lab, self.inv.source)
        self.remotes = connect(self.inv, self.used())
        try:
            parallel(self._check, list(self.remotes.values()))
            ends = [r for r in self.remotes.values() if self.inv.get(r.name).role != "emulator"]
            self.ccs = C.plan(ends, ccs, lambda host: self.inv.ebpf(self.inv.get(host)))
        except BaseException:  # refused: nothing was changed, the sessions end now
            for r in self.remotes.values():
                r.conn.close()
            self.remotes = {}
            raise

    def _check(self, r: Remote) -> None:
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
            raise Busy(f"host {r.name}: {r.dir} holds the state of {who} ({rec}); "
                       "`itb clean --inventory FILE` restores the host")
        ifaces = list(h.emulator_ifaces or ()) + ([h.data_iface] if h.data_iface else [])
        for iface in ifaces:
            field = "emulator_ifaces" if h.role == "emulator" else "data_iface"
            root = r.run(["tc", "qdisc", "show", "dev", iface, "root"]).stdout.split()
            # a configured root qdisc has a handle; the kernel's default has "0:"
            if self._access_rate(r.name) and len(root) > 2 and root[2] != "0:":
                raise PreflightError(
                    f"host {r.name}: field {field}: {iface} has a configured root qdisc "
                    f"({' '.join(root[:3])}) that ITB's access shaping would replace: refused; "
                    "remove it, or leave the interface unshaped (an access rate of none)")

    def _access_rate(self, host: str) -> int | None:
        """The rate its data interface is shaped to: its node's access link (a host that
        plays several nodes gets the highest of their rates; docs/ssh.md)."""
        rates = [P.access_rate_bps(self.topology, n) for n, h in self.placement.hosts.items()
                 if h == host]
        rates = [x for x in rates if x]
        return max(rates) if rates else None

    # -- deployment -------------------------------------------------------------------
    def deploy(self, run_dir: Path, bpf_object=None) -> None:
        """Record, then change: ITB's directory, programs, sysctls, shaping, ITB's eBPF
        congestion controls (`bpf_object(name)`: the compiled object), emulator."""
        self.run_dir = run_dir
        parallel(self._deploy_one, list(self.remotes.values()))
        for host, names in sorted(self.ccs.register.items()):  # one host at a time: a
            r = self.remotes[host]                              # kernel may be shared
            state = read_json(r.conn.read_text(f"{r.dir}/{STATE_FILE}"))
            state.setdefault("struct_ops", [])

            def record(name, r=r, state=state):
                state["struct_ops"].append(name)
                self._state(r, state)

            def forget(name, r=r, state=state):
                state["struct_ops"].remove(name)
                self._state(r, state)

            self.say(f"registering ITB's eBPF {', '.join(names)} on host {host}")
            C.register(r, names, bpf_object, record, forget, upload)
        if self.placement.link is not None:
            self._start_emulator()

    def _state(self, r: Remote, state: dict) -> None:
        r.conn.write_text(f"{r.dir}/{STATE_FILE}", json.dumps(state, indent=1))

    def _deploy_one(self, r: Remote) -> None:
        h = self.inv.get(r.name)
        itbdir.create(r, engine_id())  # marked as ITB's before anything is put in it
        state = {"engine": engine_id(), "created": time.time(), "sysctls": {}, "qdiscs": []}
        self._state(r, state)  # before anything else changes
        upload(r, Path(native.REPO) / "src/itb/engine/worker.py", WORKER_FILE)
        for name in programs(h.role):
            upload(r, Path(native.binary(name)), f"bin/{name}", mode=0o755)
        wanted = {}
        if h.role == "emulator":
            for iface in h.emulator_ifaces:
                wanted[f"net.ipv6.conf.{iface}.disable_ipv6"] = "1"  # an L2 wire says nothing
        else:
            bufmax = socket_buffer_max(self.topology)
            wanted |= {"net.ipv4.tcp_rmem": f"4096 131072 {bufmax}",
                       "net.ipv4.tcp_wmem": f"4096 16384 {bufmax}",
                       "net.ipv4.tcp_no_metrics_save": "1",
                       "net.ipv4.tcp_slow_start_after_idle": "0"}
        if wanted:  # one command each way (a round trip is one RTT on a real network)
            now = r.run(["sysctl", "-n", *wanted]).stdout.splitlines()  # one line per key
            if len(now) != len(wanted):
                raise CommandFailed(r.name, ["sysctl", "-n", *wanted], 0,
                                    f"{len(now)} values for {len(wanted)} keys")
            state["sysctls"] |= {k: " ".join(v.split()) for k, v in zip(wanted, now)}
            self._state(r, state)
            r.run(["sysctl", "-qw", *(f"{k}={v}" for k, v in wanted.items())])
        rate = self._access_rate(r.name)
        if rate:
            state["qdiscs"] = [h.data_iface]
            self._state(r, state)
            burst, limit = tbf_params(rate, self.topology.mtu)
            r.run(["tc", "qdisc", "replace", "dev", h.data_iface, "root", "tbf", "rate",
                   f"{rate}bit", "burst", str(burst), "limit", str(limit)])
        for iface in h.emulator_ifaces or ():
            r.run(["ip", "link", "set", "dev", iface, "up"])
        if h.add_address:
            have = r.run(["ip", "-o", "addr", "show", "dev", h.data_iface]).stdout.split()
            if h.data_addr not in have:
                state["addresses"] = [[h.data_iface, h.data_addr]]
                self._state(r, state)
                r.run(["ip", "addr", "add", h.data_addr, "dev", h.data_iface])
            r.run(["ip", "link", "set", "dev", h.data_iface, "up"])

    def _start_emulator(self) -> None:
        link, em = self.placement.link, self.remotes[self.placement.emulator]
        h = self.inv.get(em.name)
        log_dir = f"{em.dir}/emulators/{link.name}"
        em.run(["mkdir", "-p", log_dir])
        config = linkem.config_for(self.topology, link, Path(log_dir), self.seed)
        config["interfaces"] = list(h.emulator_ifaces)
        config_path = f"{log_dir}/linkem.json"
        em.conn.write_text(config_path, json.dumps(config, indent=1))
        mirror = naming.state_dir() / MIRROR / link.name
        self.say(f"starting link emulator {link.name} on host {em.name} "
                 f"({' ↔ '.join(h.emulator_ifaces)})")
        self.emulators[link.name] = RemoteEmulator(link.name, em, config_path, log_dir, mirror,
                                                   f"{em.dir}/bin/linkem")

    # -- the nodes of a repetition ----------------------------------------------------
    def nodes(self) -> list[SshNode]:
        assert self.run_dir is not None
        out = []
        for node, host in sorted(self.placement.hosts.items()):
            r = self.remotes[host]
            paths = [(str(self.run_dir.resolve()), f"{r.dir}/run"),
                     *((native.binary(p), f"{r.dir}/bin/{p}") for p in programs("left"))]
            out.append(SshNode(node, r, paths))
        return out

    def ifname(self, node: str) -> str:
        return self.inv.get(self.placement.hosts[node]).data_iface

    def prepare(self, rep_dir: Path) -> None:
        """The repetition's log directories on every host."""
        rel = rep_dir.resolve().relative_to(self.run_dir.resolve())
        by_host: dict[str, list[str]] = {}
        for node, host in self.placement.hosts.items():
            by_host.setdefault(host, []).append(f"{self.remotes[host].dir}/run/{rel}/nodes/{node}")
        parallel(lambda kv: self.remotes[kv[0]].run(["mkdir", "-p", *kv[1]]), list(by_host.items()))

    def gather(self, rep_dir: Path, end_ns: int = 0) -> list[str]:
        """The repetition's logs from every host that answers; returns the hosts that did
        not (their logs are missing, the repetition says why). The emulator's log is
        copied once linkem has written the rows up to the end (`end_ns`, engine clock)
        and its margin."""
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
        """Lets go of the lab (after `teardown`: `itb lab down` may then remove it)."""
        if self.lab is not None:
            self.lab.release()
            self.lab = None

    def teardown(self) -> list[str]:
        """Stops the emulator and restores every host that answers; returns the others. A
        host whose control connection was lost (its session killed, a network blip) is
        connected to again once and restored then."""
        self.stats = {}
        for link, em in self.emulators.items():
            stats = em.close()
            if stats is not None:
                self.stats[link] = stats
            shutil.rmtree(em.log_dir, ignore_errors=True)
        self.emulators.clear()
        failed = []

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
        return failed
