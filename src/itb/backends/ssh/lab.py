"""`itb lab up|down`: an SSH testbed on this one machine, to try and test the SSH backend.

Every lab "host" is a network namespace running its own OpenSSH server (Debian's
`openssh-server`, one `sshd` per host with its own host key). The engine reaches each
one over a control veth from the root namespace; their data-plane interfaces meet in
a "switch" namespace (one bridge per L2 segment) joined by the emulator hosts, whose
interface pairs the SSH backend bridges with linkem during a run:

    h1..hk (left) ── swl ══ em (linkem: ea ↔ eb) ══ swr ── hk+1..hN (right)

`--topology chain --links 3`: segments s0 … s3 in a row, each pair joined by a wire
(a1 ↔ b1, a2 ↔ b2, a3 ↔ b3 on `em`, or dealt over `--emulators K` hosts em1 … emK);
`--topology star --links 3`: leaves b1 … b3 each joined to a hub segment. The end
hosts are dealt over the segments in turn (the hub has none).

The lab records what it creates in `<dir>/lab.json` before creating it, and `down`
removes exactly that: namespaces, root-side control veths, the sshd processes
(identified by PID and start time). It writes `<dir>/inventory.toml` (the user's
key pair and the hosts' keys in `<dir>/known_hosts`, accepted because the lab made
them). The hosts, their addresses and those inventories are `labhosts`'.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from pyroute2 import netns as pr_netns

from itb.backends import procs
from itb.backends.owner import ProcessId
from itb.backends.ssh import labhold
from itb.backends.ssh.labhosts import (
    CONTROL_NET,
    DATA_NET,
    MAX_HOSTS,
    MAX_LINKS,
    TOPOLOGIES,
    LabHost,
    hosts_for,
    inventory,
    static_provider,
)
from itb.emulation import naming
from itb.errors import BackendError, PreflightError
from itb.say import Say

SSHD_READY_S = 10.0


def default_dir() -> Path:
    return Path("runs/lab")


def switch_ns() -> str:
    return f"{naming.prefix()}lab-sw"


def _control_net_in_use(net: str) -> bool:
    res = subprocess.run(["ip", "-o", "-4", "addr", "show"], capture_output=True, text=True)
    return any(f" {net}." in line for line in res.stdout.splitlines())


def state_path(d: Path) -> Path:
    return d / "lab.json"


def read_state(d: Path) -> dict | None:
    try:
        return json.loads(state_path(d).read_text())
    except FileNotFoundError:
        return None
    except json.JSONDecodeError as e:
        raise BackendError(f"{state_path(d)}: not valid JSON ({e})") from None


def _write_state(d: Path, state: dict) -> None:
    tmp = state_path(d).with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=1))
    os.replace(tmp, state_path(d))


def sshd_binary() -> str:
    for p in (shutil.which("sshd"), "/usr/sbin/sshd"):
        if p and os.access(p, os.X_OK):
            return p
    raise PreflightError("sshd not found: install Debian's openssh-server (`make setup` does)")


def _ip(*argv: str) -> None:
    res = subprocess.run(["ip", *argv], capture_output=True, text=True)
    if res.returncode != 0:
        raise BackendError(f"ip {' '.join(argv)}: {res.stderr.strip()}")


def up(
    n: int = 8,
    d: Path | None = None,
    progress: Say = lambda s: None,
    control_net: str = CONTROL_NET,
    emulator: bool = True,
    topology: str = "dumbbell",
    links: int = 1,
    emulators: int = 1,
) -> Path:
    """Builds the lab; returns the inventory's path. Refused if one is up in `d`, or
    when its control network's addresses are already in use on this machine. Without
    `emulator` the two sides' switches are joined by a plain veth: a real bottleneck
    (whatever the kernel's veth path gives), which only calibration can tell."""
    d = (d or default_dir()).resolve()
    if os.geteuid() != 0:
        raise PreflightError("the lab needs root (network namespaces)")
    if not 2 <= n <= MAX_HOSTS:
        raise PreflightError(
            f"--hosts must be 2..{MAX_HOSTS} (one sender and one receiver at least)"
        )
    _check_shape(n, emulator, topology, links, emulators)
    sshd = sshd_binary()
    if read_state(d):
        raise BackendError(f"a lab is already up ({state_path(d)}): `itb lab down` first")
    parts = control_net.split(".")
    if len(parts) != 3 or not all(p.isdigit() and int(p) < 256 for p in parts):
        raise PreflightError(
            f"--control-net {control_net!r}: the first three octets of a /24, e.g. 198.19.1"
        )
    if _control_net_in_use(control_net):
        raise BackendError(
            f"addresses of {control_net}.0/24 are already in use on this machine "
            "(another lab is up?): nothing was created; take it down with its "
            "ITB_PREFIX and --dir, or choose another --control-net"
        )
    hosts = hosts_for(n, control_net, emulator, topology, links, emulators)
    foreign = [ns for ns in [switch_ns(), *(h.ns for h in hosts)] if procs.ns_inode(ns)]
    if foreign:
        raise BackendError(
            f"namespace(s) {', '.join(foreign)} exist but are not this lab's: "
            "left alone; remove them or use another ITB_PREFIX"
        )
    d.mkdir(parents=True, exist_ok=True)
    state = {
        "created": time.time(),
        "prefix": naming.prefix(),
        "hosts": n,
        "topology": topology,
        "dirs": [h.name for h in hosts],  # each host's directory under d (removed by down)
        "namespaces": [switch_ns(), *(h.ns for h in hosts)],
        "root_ifs": [h.root_if for h in hosts],
        "sshd": [],
        "files": [],
    }
    _write_state(d, state)
    try:
        _build(d, hosts, sshd, state, progress)
    except BaseException:
        progress("lab build failed: removing what was created")
        down(d)
        raise
    return d / "inventory.toml"


def _check_shape(n: int, emulator: bool, topology: str, links: int, emulators: int) -> None:
    if topology not in TOPOLOGIES:
        raise PreflightError(f"--topology {topology!r}: one of {', '.join(TOPOLOGIES)}")
    if topology == "dumbbell" and (links != 1 or emulators != 1):
        raise PreflightError("a dumbbell has one emulated link on one emulator host")
    if topology != "dumbbell":
        if not emulator:
            raise PreflightError(f"a {topology} needs its emulator hosts (no --no-emulator)")
        low = 1 if topology == "chain" else 2
        if not low <= links <= MAX_LINKS:
            raise PreflightError(f"--links: {low}..{MAX_LINKS} for a {topology}")
        if not 1 <= emulators <= links:
            raise PreflightError(f"--emulators: 1..{links} (one wire each at most)")
        segs = links + 1 if topology == "chain" else links
        if n < segs:
            raise PreflightError(
                f"--hosts {n}: a {topology} of {links} link(s) has {segs} segments "
                "for end hosts: one host each at least"
            )
    if n + (emulators if emulator else 0) > MAX_HOSTS + 1:
        raise PreflightError(f"at most {MAX_HOSTS + 1} hosts in all (control /30s of a /24)")


def _bridge(segment: str) -> str:
    """The switch's bridge of a segment (a dumbbell's: swl, swr)."""
    return {"left": "swl", "right": "swr"}.get(segment, f"sw-{segment}")[:15]


def _build(d: Path, hosts: list[LabHost], sshd: str, state: dict, progress: Say) -> None:
    import asyncssh

    sw = switch_ns()
    pr_netns.create(sw)
    segs = {h.segment for h in hosts if h.role != "emulator"}
    segs |= {s for h in hosts for _i, between in h.wires for s in between}
    for br in sorted({_bridge(s) for s in segs}):
        _ip("-n", sw, "link", "add", br, "type", "bridge")
        _ip("-n", sw, "link", "set", br, "up")
    if not any(h.role == "emulator" for h in hosts):  # the sides joined directly
        _ip("-n", sw, "link", "add", "trunk-l", "type", "veth", "peer", "name", "trunk-r")
        for port, br in (("trunk-l", "swl"), ("trunk-r", "swr")):
            _ip("-n", sw, "link", "set", port, "master", br)
            _ip("-n", sw, "link", "set", port, "up")
    user_key = asyncssh.generate_private_key("ssh-ed25519", comment="itb-lab")
    key_path = d / "id_ed25519"
    key_path.write_bytes(b"")
    key_path.chmod(0o600)  # before the key is in it
    user_key.write_private_key(str(key_path))
    (d / "authorized_keys").write_bytes(user_key.export_public_key())
    state["files"] += [
        "id_ed25519",
        "authorized_keys",
        "known_hosts",
        "inventory.toml",
        "enoslib-static.toml",
    ]
    _write_state(d, state)
    known = []
    for h in hosts:
        where = ", ".join("↔".join(b) for _i, b in h.wires) if h.wires else h.segment
        progress(f"lab host {h.name} ({h.role}, {where}): namespace {h.ns}, sshd on {h.control_ip}")
        pr_netns.create(h.ns)
        _ip("-n", h.ns, "link", "set", "lo", "up")
        _ip("link", "add", h.root_if, "type", "veth", "peer", "name", "ctl", "netns", h.ns)
        _ip("addr", "add", f"{h.root_ip}/30", "dev", h.root_if)
        _ip("link", "set", h.root_if, "up")
        _ip("-n", h.ns, "addr", "add", f"{h.control_ip}/30", "dev", "ctl")
        _ip("-n", h.ns, "link", "set", "ctl", "up")
        if h.role == "emulator":
            for ifaces, between in h.wires:
                for ifname, seg in zip(ifaces, between, strict=True):
                    _wire(h.ns, ifname, f"{h.name}-{ifname}", _bridge(seg))
        else:
            _wire(h.ns, "eth1", h.name, _bridge(h.segment))
            _ip("-n", h.ns, "addr", "add", f"{DATA_NET}.{h.data_index}/24", "dev", "eth1")
        known.append(_start_sshd(d, h, sshd, state))
        _write_state(d, state)
    (d / "known_hosts").write_text("".join(known))
    for h in hosts:
        _wait_listening(h)
    (d / "inventory.toml").write_text(inventory(d, hosts))
    (d / "enoslib-static.toml").write_text(static_provider(d, hosts))


def _wire(host_ns: str, ifname: str, port: str, bridge: str) -> None:
    sw = switch_ns()
    _ip("-n", host_ns, "link", "add", ifname, "type", "veth", "peer", "name", port, "netns", sw)
    _ip("-n", sw, "link", "set", port, "master", bridge)
    _ip("-n", sw, "link", "set", port, "up")
    _ip("-n", host_ns, "link", "set", ifname, "up")


def _start_sshd(d: Path, h: LabHost, sshd: str, state: dict) -> str:
    import asyncssh

    hd = d / h.name
    hd.mkdir(exist_ok=True)
    (hd / "fs").mkdir(exist_ok=True)
    key = asyncssh.generate_private_key("ssh-ed25519", comment=f"itb-lab-{h.name}")
    key_path = hd / "ssh_host_ed25519_key"
    key_path.write_bytes(b"")
    key_path.chmod(0o600)
    key.write_private_key(str(key_path))
    conf = hd / "sshd_config"
    conf.write_text(
        "\n".join(
            [
                "Port 22",
                f"ListenAddress {h.control_ip}",
                f"HostKey {key_path}",
                f"PidFile {hd / 'sshd.pid'}",
                "AuthorizedKeysFile none",
                # read as root: the lab's directory need not be readable by every user it admits
                f"AuthorizedKeysCommand /bin/cat {d / 'authorized_keys'}",
                "AuthorizedKeysCommandUser root",
                "PermitRootLogin prohibit-password",
                "PubkeyAuthentication yes",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                "StrictModes no",
                "MaxSessions 200",
                "MaxStartups 200",
                "LogLevel ERROR",
                "Subsystem sftp internal-sftp",
                # Debian's bash reads ~/.bashrc when sshd starts it, unless it is a nested shell:
                # the lab's hosts are clean machines, not this operator's interactive setup (root's
                # ~/.bashrc here ran `pyenv init`, 0.2 s per command)
                "SetEnv SHLVL=1",
                "",
            ]
        )
    )
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation dir
    err = open(hd / "sshd.log", "ab")
    proc = subprocess.Popen(
        ["ip", "netns", "exec", h.ns, sshd, "-D", "-e", "-f", str(conf)],
        stdin=subprocess.DEVNULL,
        stdout=err,
        stderr=err,
        start_new_session=True,
    )
    err.close()
    ident = ProcessId.of(proc.pid)
    state["sshd"].append(
        {"host": h.name, **(ident.to_json() if ident else {"pid": proc.pid, "start": 0})}
    )
    pub = key.export_public_key().decode().split()
    return f"{h.control_ip} {pub[0]} {pub[1]}\n"


def _wait_listening(h: LabHost) -> None:
    import socket

    deadline = time.monotonic() + SSHD_READY_S
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((h.control_ip, 22), timeout=0.5) as s:
                if s.recv(4).startswith(b"SSH"):
                    return
        except OSError:
            time.sleep(0.05)
    raise BackendError(
        f"lab host {h.name}: sshd not listening on {h.control_ip}:22 after "
        f"{SSHD_READY_S:.0f} s (see its sshd.log)"
    )


def down(d: Path | None = None, progress: Say = lambda s: None, force: bool = False) -> list[str]:
    """Removes what the lab recorded (idempotent); returns the namespaces removed.
    Refused (`Busy`, nothing removed) while a command uses the lab's hosts; `force`
    stops those commands first (labhold.take_down)."""
    d = (d or default_dir()).resolve()
    state = read_state(d)
    if state is None:
        return []
    lock = labhold.take_down(d, force, progress)
    try:
        return _remove(d, state, progress)
    finally:
        os.close(lock)


def _remove(d: Path, state: dict, progress: Say) -> list[str]:
    for rec in state.get("sshd", []):
        ident = ProcessId.from_json(rec)
        if ident is not None and ident.alive():
            procs.stop([ident.pid], grace_s=2.0)
    removed = []
    for ns in state.get("namespaces", []):
        if procs.ns_inode(ns) is None:
            continue
        procs.stop(procs.pids_in(ns), grace_s=1.0)  # what ran there: the lab's own
        progress(f"removing namespace {ns}")
        pr_netns.remove(ns)
        removed.append(ns)
    for ifname in state.get("root_ifs", []):
        if Path(f"/sys/class/net/{ifname}").exists():
            subprocess.run(["ip", "link", "del", ifname], capture_output=True)
    for name in state.get("files", []):
        (d / name).unlink(missing_ok=True)
    shutil.rmtree(d / labhold.USERS, ignore_errors=True)  # the users' records: ITB's
    dirs = state.get("dirs")  # labs before topologies: "em" and h1 … hN
    if dirs is None:
        dirs = ["em"] + [f"h{i}" for i in range(1, int(state.get("hosts", 0)) + 1)]
    for name in dirs:
        shutil.rmtree(d / name, ignore_errors=True)
    state_path(d).unlink(missing_ok=True)
    (d / labhold.LOCK).unlink(missing_ok=True)  # last: a new holder then sees no lab.json
    return removed
