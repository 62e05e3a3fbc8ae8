"""Local backend: every node is a network namespace on this machine, emulated links run
through the user-space link emulator in a namespace of their own.

State lives in `naming.state_dir()`; it is written before anything is created so that
`clean` can always find what a killed `up` left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from pyroute2 import netns as pr_netns

from itb.backends import procs
from itb.backends.host import NetnsHost
from itb.emulation import actions as A
from itb.emulation import naming
from itb.emulation.plan import Plan, build_plan
from itb.errors import BackendError, NotRunning, PreflightError
from itb.scenario.model import Topology

READY_TIMEOUT_S = 10.0
Progress = Callable[[str], None]


def _noop(_msg: str) -> None:
    pass


def state_file() -> Path:
    return naming.state_dir() / "state.json"


def read_state() -> dict | None:
    try:
        return json.loads(state_file().read_text())
    except FileNotFoundError:
        return None


def _write_state(state: dict) -> None:
    path = state_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=1))
    os.replace(tmp, path)


def owned_namespaces() -> list[str]:
    return sorted(n for n in pr_netns.listnetns() if naming.owns_ns(n))


def preflight() -> None:
    if os.geteuid() != 0:
        raise PreflightError("the local testbed needs root (network namespaces): run as root")
    for tool in ("ip", "tc", "sysctl"):
        if shutil.which(tool) is None:
            raise PreflightError(f"'{tool}' not found: install iproute2 / procps")
    from itb.emulation import linkem

    linkem.binary()


@dataclass
class EmulatorHandle:
    link: str
    ns: str
    pid: int
    log_dir: str
    control: str

    def send(self, command: dict) -> None:
        """Runtime change (rate, delay, loss, queue) through the emulator's control FIFO."""
        fd = os.open(self.control, os.O_WRONLY | os.O_NONBLOCK)
        try:
            os.write(fd, (json.dumps(command) + "\n").encode())
        finally:
            os.close(fd)


def _start_emulator(step: A.StartEmulator) -> EmulatorHandle:
    log_dir = Path(step.config["log_dir"])
    log_dir.mkdir(parents=True, exist_ok=True)
    step.config_path.write_text(json.dumps(step.config, indent=1))
    control = log_dir / "control"
    if not control.exists():
        os.mkfifo(control)
    # Opened read-write: the emulator never sees EOF, later writers never block.
    ctl_fd = os.open(control, os.O_RDWR)
    out_path, err_path = log_dir / "stdout.log", log_dir / "stderr.log"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = NetnsHost(step.node, step.ns).spawn(step.command(), stdin=ctl_fd, stdout=out, stderr=err)
    os.close(ctl_fd)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if b'"ready"' in out_path.read_bytes():
            return EmulatorHandle(step.node.removeprefix("em-"), step.ns, proc.pid,
                                  str(log_dir), str(control))
        if proc.poll() is not None:
            raise BackendError(f"link emulator for {step.node} exited ({proc.returncode}): "
                               f"{err_path.read_text().strip()[-500:]}")
        time.sleep(0.01)
    proc.kill()
    raise BackendError(f"link emulator for {step.node} not ready after {READY_TIMEOUT_S}s")


def up(topo: Topology, progress: Progress = _noop, seed: int = 1) -> dict:
    preflight()
    existing = owned_namespaces()
    if read_state() or existing:
        raise BackendError(
            f"a testbed is already up (namespaces: {', '.join(existing) or 'none'}): "
            "run `itb testbed down` or `itb clean` first")
    emu_root = naming.state_dir() / "emulators"
    shutil.rmtree(emu_root, ignore_errors=True)
    plan = build_plan(topo, emu_root, seed)
    state = {
        "phase": "building", "created": time.time(), "hash": topo.content_hash(),
        "topology": json.loads(topo.canonical_json()), "source": topo.source,
        "namespaces": plan.namespaces(), "emulators": [],
    }
    _write_state(state)
    try:
        _apply(plan, progress)
        for step in plan.emulators():
            progress(f"starting link emulator {step.node}")
            state["emulators"].append(_start_emulator(step).__dict__)
            _write_state(state)
    except BaseException:
        progress("build failed: removing what was created")
        clean(progress=_noop)
        raise
    state["phase"] = "up"
    _write_state(state)
    return state


def _apply(plan: Plan, progress: Progress) -> None:
    nl = A.Netlink()
    root = NetnsHost("root", None)
    try:
        total = len(plan.steps)
        for i, step in enumerate(plan.steps):
            if isinstance(step, A.StartEmulator):
                continue
            if isinstance(step, A.CreateNetns):
                progress(f"[{i + 1}/{total}] namespace {step.ns}")
            try:
                step.apply(nl, lambda argv: root.run(argv))
            except BackendError:
                raise
            except Exception as e:  # netlink errors carry no context: add the step
                raise BackendError(f"{' '.join(step.argv())}: {e}") from e
    finally:
        nl.close()


def require_state() -> dict:
    state = read_state()
    if not state:
        raise NotRunning("no testbed is up: run `itb testbed up` first")
    return state


def topology_of(state: dict) -> Topology:
    return Topology.model_validate(state["topology"])


def emulators_of(state: dict) -> list[EmulatorHandle]:
    return [EmulatorHandle(**e) for e in state.get("emulators", [])]


def host(state: dict, node: str) -> NetnsHost:
    topology_of(state).node(node)  # KeyError for an unknown node
    return NetnsHost(node, naming.node_ns(node))


def stop_emulators(state: dict) -> dict[str, dict]:
    """Stops the emulators gracefully; returns each one's final statistics."""
    stats = {}
    for em in emulators_of(state):
        procs.stop([em.pid], grace_s=5.0)
        path = Path(em.log_dir) / "linkem-stats.json"
        if path.exists():
            stats[em.link] = json.loads(path.read_text())
    return stats


def down(progress: Progress = _noop) -> dict[str, dict]:
    state = require_state()
    stats = stop_emulators(state)
    _remove_namespaces(state.get("namespaces", []), progress)
    state_file().unlink(missing_ok=True)
    return stats


def _remove_namespaces(names: list[str], progress: Progress) -> None:
    for ns in names:
        procs.stop(procs.pids_in(ns), grace_s=1.0)
    for ns in names:
        if procs.ns_inode(ns) is not None:
            progress(f"removing namespace {ns}")
            pr_netns.remove(ns)


def clean(progress: Progress = _noop) -> list[str]:
    """Removes everything the local backend created: idempotent, works without state."""
    state = read_state() or {}
    for em in state.get("emulators", []):
        procs.stop([em["pid"]], grace_s=1.0)
    names = sorted(set(owned_namespaces()) | set(state.get("namespaces", [])))
    _remove_namespaces(names, progress)
    shutil.rmtree(naming.state_dir(), ignore_errors=True)
    return names


def status(state: dict) -> dict:
    """The documented `itb testbed status --json` form."""
    topo = topology_of(state)
    ems = {e.link: e for e in emulators_of(state)}

    def addr(ep_addr):
        return ep_addr.split("/")[0] if ep_addr else None

    hosts, routers = [], []
    for n in topo.nodes:
        eps = [ep for lk in topo.links for ep in (lk.a, lk.b) if ep.node == n.name]
        entry = {"name": n.name, "netns": naming.node_ns(n.name), "role": n.role, "side": n.side,
                 "ipv4": addr(eps[0].ipv4) if eps else None,
                 "ipv6": addr(eps[0].ipv6) if eps else None,
                 "interfaces": [{"ifname": ep.ifname, "ipv4": ep.ipv4, "ipv6": ep.ipv6}
                                for ep in eps]}
        (hosts if n.role == "host" else routers).append(entry)
    links = []
    for lk in topo.links:
        item = lk.model_dump(mode="json")
        if lk.emulated:
            em = ems.get(lk.name)
            item["emulator"] = None if em is None else {
                "netns": em.ns, "pid": em.pid, "alive": procs.alive(em.pid),
                "log_dir": em.log_dir}
        links.append(item)
    return {"name": topo.name, "kind": topo.kind, "hash": state["hash"], "phase": state["phase"],
            "source": state.get("source"), "hosts": hosts, "routers": routers, "links": links}
