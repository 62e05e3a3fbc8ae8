"""Local backend: every node is a network namespace on this machine, emulated links run
through the user-space link emulator in a namespace of their own.

What a testbed consists of is recorded in `naming.state_dir()/state.json` *before* it is
created: the namespaces (each checked absent first, under the prefix's lock, so every
recorded name is one ITB created) and the emulators (PID and start time). `clean` and
`down` remove exactly that, nothing else with a similar name, and only under the lock
(`itb.backends.owner`): a live run's testbed is not torn down by another command.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from functools import partial
from pathlib import Path

from pyroute2 import netns as pr_netns

from itb.backends import cgroup, owner, procs
from itb.backends import emulators as E
from itb.backends.emulators import EmulatorHandle
from itb.backends.host import NetnsHost
from itb.emulation import actions as A
from itb.emulation import naming
from itb.emulation.plan import Plan, build_plan
from itb.errors import BackendError, NotRunning, PreflightError
from itb.say import Say
from itb.scenario.testbed.model import Topology

STATE_FILES = ("state.json", "state.tmp")  # owner.json and lock: itb.backends.owner

__all__ = ["EmulatorHandle", "up", "down", "clean", "status", "read_state", "require_state"]


def _noop(_msg: str) -> None:
    pass


def state_file() -> Path:
    return naming.state_dir() / "state.json"


def read_state() -> dict | None:
    try:
        return json.loads(state_file().read_text())
    except FileNotFoundError:
        return None
    except json.JSONDecodeError as e:
        raise BackendError(
            f"{state_file()}: not valid JSON ({e}); `itb clean --force` "
            "removes what it can identify"
        ) from None


def _write_state(state: dict) -> None:
    path = state_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=1))
    os.replace(tmp, path)


def owned_namespaces() -> list[str]:
    """Namespaces whose name carries the prefix, whether ITB created them or not."""
    return sorted(n for n in pr_netns.listnetns() if naming.owns_ns(n))


def _read_state_quiet() -> dict | None:
    try:
        return read_state()
    except BackendError:
        return None


def preflight() -> None:
    if os.geteuid() != 0:
        raise PreflightError("the local testbed needs root (network namespaces): run as root")
    for tool in ("ip", "tc", "sysctl"):
        if shutil.which(tool) is None:
            raise PreflightError(f"'{tool}' not found: install iproute2 / procps")
    from itb.emulation import linkem

    linkem.binary()


def up(topo: Topology, progress: Say = _noop, seed: int = 1, bound: bool = True) -> dict:
    """Builds the testbed. `bound`: its emulators die with this process (a run's); else
    they stay up after it (`itb testbed up`)."""
    preflight()
    with owner.exclusive("building a testbed"):
        return _up(topo, progress, seed, bound)


def _up(topo: Topology, progress: Say, seed: int, bound: bool) -> dict:
    if read_state():
        raise BackendError("a testbed is already up: run `itb testbed down` or `itb clean` first")
    emu_root = naming.state_dir() / "emulators"
    plan = build_plan(topo, emu_root, seed)
    foreign = [n for n in plan.namespaces() if procs.ns_inode(n) is not None]
    if foreign:
        raise BackendError(
            f"namespace(s) {', '.join(foreign)} exist but are not ITB's (not in its state): "
            "they are left alone; remove them or choose another ITB_PREFIX"
        )
    group = cgroup.for_testbed()
    if group is not None and group.exists():
        cgroup.create(group)  # refused: not ITB's
    me = owner.ProcessId.me()
    state = {
        "phase": "building",
        "created": time.time(),
        "hash": topo.content_hash(),
        "topology": json.loads(topo.canonical_json()),
        "source": topo.source,
        "owner": {**me.to_json(), "persistent": not bound},
        "namespaces": plan.namespaces(),
        "emulators": [],
        "cgroup": None if group is None else str(group),
    }
    _write_state(state)
    try:
        if group is not None:
            cgroup.create(group)
        _apply(plan, progress)
        for step in plan.emulators():
            progress(f"starting link emulator {step.node}")
            state["emulators"].append(E.start(step, bound, state["cgroup"]).to_json())
            _write_state(state)
    except BaseException:
        progress("build failed: removing what was created")
        _remove(state, progress)
        raise
    state["phase"] = "up"
    _write_state(state)
    return state


def _apply(plan: Plan, progress: Say) -> None:
    nl = A.Netlink()
    root = NetnsHost("root", None)
    try:
        total = len(plan.steps)
        sysctls: list[A.Sysctl] = []  # a namespace's consecutive ones, applied together
        for i, step in enumerate([*plan.steps, None]):
            if sysctls and not (isinstance(step, A.Sysctl) and step.ns == sysctls[0].ns):
                _do(sysctls[0], partial(A.apply_sysctls, sysctls, root.run))
                sysctls = []
            if isinstance(step, A.Sysctl):
                sysctls.append(step)
                continue
            if step is None or isinstance(step, A.StartEmulator):
                continue
            if isinstance(step, A.CreateNetns):
                progress(f"[{i + 1}/{total}] namespace {step.ns}")
            _do(step, partial(step.apply, nl, lambda argv: root.run(argv)))
    finally:
        nl.close()


def _do(step: A.Action, apply) -> None:
    try:
        apply()
    except BackendError:
        raise
    except Exception as e:  # netlink errors carry no context: add the step
        raise BackendError(f"{' '.join(step.argv())}: {e}") from e


def require_state() -> dict:
    state = read_state()
    if not state:
        raise NotRunning("no testbed is up: run `itb testbed up` first")
    return state


def topology_of(state: dict) -> Topology:
    return Topology.model_validate(state["topology"])


def emulators_of(state: dict) -> list[EmulatorHandle]:
    return E.of_state(state)


def host(state: dict, node: str) -> NetnsHost:
    topology_of(state).node(node)  # KeyError for an unknown node
    return NetnsHost(node, naming.node_ns(node), cgroup=state.get("cgroup"))


def down(progress: Say = _noop) -> dict[str, dict]:
    """Stops the emulators gracefully (their final statistics are returned) and removes
    the testbed. Refused (`Busy`) while another live command owns the prefix."""
    with owner.exclusive("taking the testbed down"):
        state = require_state()
        stats = E.stop(E.of_state(state), grace_s=5.0)
        _remove(state, progress)
        return stats


def _remove(state: dict, progress: Say) -> list[str]:
    ems = E.of_state(state)
    E.stop(ems, grace_s=1.0)
    names = [n for n in state.get("namespaces", []) if procs.ns_inode(n) is not None]
    for ns in names:
        procs.stop(procs.pids_in(ns), grace_s=1.0)
    try:
        cgroup.kill(state.get("cgroup"))  # what left its namespace or daemonised, too
        left = None
    except BackendError as e:  # the namespaces go all the same; the state stays to retry
        left = e
    for ns in names:
        # Closed sockets still sending (orphans) would live on for minutes in the dying
        # namespace, holding their congestion control: destroy every socket first.
        NetnsHost(ns, ns).run(["ss", "-K", "-t", "-a"], check=False, timeout=10)
        progress(f"removing namespace {ns}")
        pr_netns.remove(ns)
    E.remove_logs(ems)
    if left is not None:
        raise BackendError(
            f"{left}; the rest of the testbed was removed, `itb clean` retries the cgroup"
        ) from None
    _remove_state_files()
    return names


def _remove_state_files() -> None:
    """Only the files ITB writes there; the directories only if then empty."""
    d = naming.state_dir()
    for name in STATE_FILES:
        (d / name).unlink(missing_ok=True)
    for sub in (d / "emulators",):
        try:
            sub.rmdir()
        except OSError:
            pass


def clean(progress: Say = _noop, force: bool = False) -> list[str]:
    """Removes the testbed ITB recorded (namespaces, emulators checked by PID and start
    time, its logs and state files) and nothing else. Refused while the prefix's owner
    is alive unless `force`. Idempotent."""
    try:
        with owner.exclusive("itb clean"):
            return _remove(_read_state_quiet() or {}, progress)
    except owner.Busy as busy:
        if not force:
            raise owner.Busy(f"{busy} (`itb clean --force` removes it anyway)") from None
        progress(f"--force: {busy}")
    return _remove(_read_state_quiet() or {}, progress)


def status(state: dict) -> dict:
    """The documented `itb testbed status --json` form."""
    topo = topology_of(state)
    ems = {e.link: e for e in emulators_of(state)}

    def addr(ep_addr):
        return ep_addr.split("/")[0] if ep_addr else None

    hosts: list[dict[str, object]] = []
    routers: list[dict[str, object]] = []
    for n in topo.nodes:
        eps = [ep for lk in topo.links for ep in (lk.a, lk.b) if ep.node == n.name]
        entry = {
            "name": n.name,
            "netns": naming.node_ns(n.name),
            "role": n.role,
            "side": n.side,
            "ipv4": addr(eps[0].ipv4) if eps else None,
            "ipv6": addr(eps[0].ipv6) if eps else None,
            "interfaces": [{"ifname": ep.ifname, "ipv4": ep.ipv4, "ipv6": ep.ipv6} for ep in eps],
        }
        (hosts if n.role == "host" else routers).append(entry)
    links = []
    for lk in topo.links:
        item = lk.model_dump(mode="json")
        if lk.emulated:
            em = ems.get(lk.name)
            item["emulator"] = (
                None
                if em is None
                else {
                    "netns": em.ns,
                    "pid": em.pid,
                    "alive": em.identity().alive(),
                    "log_dir": em.log_dir,
                }
            )
        links.append(item)
    return {
        "name": topo.name,
        "kind": topo.kind,
        "hash": state["hash"],
        "phase": state["phase"],
        "source": state.get("source"),
        "hosts": hosts,
        "routers": routers,
        "links": links,
    }
