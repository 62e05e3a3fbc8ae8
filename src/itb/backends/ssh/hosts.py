"""The SSH hosts of an inventory as ITB uses them: connecting (every host at once),
checking that ITB can act as root there, the state file each host keeps of what ITB
changed on it, and the upload of ITB's programs (skipped when the host has the same
file).
"""

from __future__ import annotations

import hashlib
import json
import socket
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeGuard

from itb import native
from itb.backends import hostside
from itb.backends.owner import ProcessId
from itb.backends.ssh.conn import Connection
from itb.backends.ssh.inventory import Inventory
from itb.backends.ssh.remote import Remote
from itb.errors import PreflightError

NEEDED = ("python3", "ip", "tc", "sysctl", "find", "sha256sum", "ping", "stat")


def parallel(fn, items: list) -> list:
    """fn over items at once (one thread each); the first error is raised after all end."""
    if not items:
        return []
    with ThreadPoolExecutor(max_workers=min(16, len(items))) as ex:
        futs = [ex.submit(fn, it) for it in items]
        errors = [e for f in futs if (e := f.exception()) is not None]
        if errors:
            raise errors[0]
        return [f.result() for f in futs]


def engine_id() -> dict:
    return {"hostname": socket.gethostname(), **ProcessId.me().to_json()}


def engine_alive(rec: dict | None) -> TypeGuard[dict]:
    """The engine recorded on a host is a live process of this machine."""
    if not rec or rec.get("hostname") != socket.gethostname():
        return False
    ident = ProcessId.from_json(rec)
    return ident is not None and ident.alive()


def connect(inv: Inventory, names: list[str] | None = None) -> dict[str, Remote]:
    """Opens the control connection of each host and checks it can act as root there."""
    hosts = [h for h in inv.host if names is None or h.name in names]
    remotes: dict[str, Remote] = {}

    def one(h):
        c = Connection(inv, h).open()
        try:
            uid = c.run(["id", "-u"], check=False).stdout.strip()
            remotes[h.name] = Remote(
                c,
                inv.remote_dir(h),
                sudo=_needs_sudo(c, uid),
                uid=int(uid) if uid.isdigit() else None,
            )
        except BaseException:
            c.close()
            raise

    try:
        parallel(one, hosts)
    except BaseException:
        for r in remotes.values():
            r.conn.close()
        raise
    return remotes


def missing_tools(r: Remote, tools=NEEDED) -> None:
    """PreflightError naming the programs ITB needs that the host lacks (one command)."""
    res = r.run(
        ["sh", "-c", 'for t; do command -v "$t" >/dev/null || echo "$t"; done', "sh", *tools],
        check=False,
    )
    missing = res.stdout.split()
    if missing:
        raise PreflightError(
            f"host {r.name}: {', '.join(missing)} not found there (ITB needs them on every host)"
        )


def _needs_sudo(c: Connection, uid: str) -> bool:
    if uid == "0":
        return False
    res = c.run(["sudo", "-n", "true"], check=False)
    if res.returncode != 0:
        why = (res.stderr or res.stdout).strip().splitlines()
        raise PreflightError(
            f"host {c.name}: field user: {c.user!r} is not root and cannot use sudo without a "
            f"password ({why[-1] if why else f'sudo exited {res.returncode}'}); ITB needs "
            "root there (sysctls, qdiscs, raw sockets)"
        )
    return True


def programs(role: str) -> list[str]:
    """ITB's native programs a host of that role runs (UDT's endpoint when built here)."""
    if role == "emulator":
        return ["linkem"]
    out = ["flow"]
    try:
        native.binary("itb-udt")
        out.append("itb-udt")  # it needs Debian's libudt there too
    except PreflightError:
        pass
    return out


def read_json(text: str | None) -> dict:
    """A state file's text as a dict ({} when absent or not JSON)."""
    try:
        return json.loads(text or "{}")
    except json.JSONDecodeError:
        return {}


def _has(r: Remote, rel: str, data: bytes) -> bool:
    res = r.run(["sha256sum", f"{r.dir}/{rel}"], check=False)
    return res.returncode == 0 and res.stdout.split()[:1] == [hashlib.sha256(data).hexdigest()]


def upload(r: Remote, local: Path, rel: str, mode: int | None = None) -> None:
    """Copies a program unless the host already has this exact file (sha256)."""
    if not _has(r, rel, local.read_bytes()):
        r.conn.put(local, f"{r.dir}/{rel}", mode=mode)


def upload_hostside(r: Remote, name: str, rel: str) -> None:
    """One of ITB's host-side programs (itb.backends.hostside, package data) as `rel` in
    ITB's directory there, unless the host has this exact file."""
    data = hostside.source(name)
    if not _has(r, rel, data):
        r.conn.write_text(f"{r.dir}/{rel}", data.decode())
