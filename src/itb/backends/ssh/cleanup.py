"""Leaving SSH hosts as ITB found them: `restore` undoes what a host's state file
records (processes by PID and start time, sysctls, qdiscs, eBPF registrations, ITB's
directory); `clean` does it for every host of an inventory (`itb clean --inventory`),
also after the engine was killed.

Only a directory that carries ITB's owner marker is read or removed
(itb.backends.ssh.itbdir): `<remote_dir>/<prefix>` made by someone else is left alone,
whatever it holds, and said so.
"""

from __future__ import annotations

import shutil

from itb.backends.owner import Busy
from itb.backends.ssh import ccs as C
from itb.backends.ssh import itbdir, labhold, tcpoptions
from itb.backends.ssh.hosts import connect, engine_alive, read_json
from itb.backends.ssh.inventory import Inventory
from itb.backends.ssh.itbdir import STATE_FILE
from itb.backends.ssh.remote import PROCS_FILE, WORKER_FILE, Remote
from itb.emulation import naming
from itb.errors import BackendError, PreflightError
from itb.say import Say

MIRROR = "ssh-emulators"  # local copies of remote emulators' logs (in the state dir)


def restore(r: Remote) -> dict:
    """Leaves the host as ITB found it: kills what ITB's workers started there, restores
    the sysctls, removes the qdiscs, removes ITB's directory (what its marker records).
    Idempotent; {} when ITB has no directory there; "left" says what was left alone."""
    st = itbdir.status(r)
    if st == "absent":
        return {}
    mark = itbdir.marker(r) if st == "ours" else None
    if mark is None:
        return {"host": r.name, "left": itbdir.foreign_reason(r, st)}
    state = read_json(r.conn.read_text(f"{r.dir}/{STATE_FILE}"))
    done: dict = {"host": r.name}
    if r.run(["test", "-f", f"{r.dir}/{WORKER_FILE}"], check=False).returncode == 0:
        res = r.run(
            ["python3", f"{r.dir}/{WORKER_FILE}", "--kill", f"{r.dir}/{PROCS_FILE}"], check=False
        )
        done["killed"] = int(res.stdout.strip() or 0) if res.stdout.strip().isdigit() else 0
    back = [f"{k}={v}" for k, v in (state.get("sysctls") or {}).items() if v]
    if back:
        r.run(["sysctl", "-qw", *back], check=False)  # each written, whatever the others do
    done["sysctls"] = len(state.get("sysctls") or {})
    for iface in state.get("qdiscs") or []:
        r.run(["tc", "qdisc", "del", "dev", iface, "root"], check=False)
    done["qdiscs"] = len(state.get("qdiscs") or [])
    done |= tcpoptions.restore(r, state)  # (before the addresses its routes leave from)
    for iface, addr in state.get("addresses") or []:
        r.run(["ip", "addr", "del", addr, "dev", iface], check=False)
    C.unregister(r, state.get("struct_ops") or [])
    done["struct_ops"] = len(state.get("struct_ops") or [])
    left = itbdir.remove(r, mark)
    if left:
        done["left"] = left
    return done


def restored(done: dict) -> bool:
    """`restore` undid something there (not only left a foreign directory alone)."""
    return bool(set(done) - {"host", "left"})


def clean(inv: Inventory, force: bool = False, say: Say = lambda s: None) -> list[dict]:
    """`itb clean --inventory`: every host that answers restored (refused for a host a
    live run of this machine still uses, unless `force`); unreachable hosts are named.
    Returns `restore`'s record of each host where ITB found something (its "left": what
    was left alone as not ITB's).
    An inventory with a [provider]: its hosts are found again through EnOSlib (a
    reservation of the same name is reused), restored, and the reservation released."""
    if inv.provider is not None and not inv.host:
        from itb.backends.ssh import enos

        try:
            return clean(enos.reserve(inv, say), force, say)
        finally:
            enos.release(inv, say)
    lab = labhold.hold(inv.ssh.lab, inv.source)  # `itb lab down` waits meanwhile
    try:
        return _clean(inv, force, say)
    finally:
        if lab is not None:
            lab.release()


def _clean(inv: Inventory, force: bool, say: Say) -> list[dict]:
    results, unreachable, busy = [], [], []
    for h in inv.host:
        try:
            r = connect(inv, [h.name])[h.name]
        except PreflightError as e:
            unreachable.append(str(e))
            continue
        try:
            ours = itbdir.status(r) == "ours"
            rec = (
                read_json(r.conn.read_text(f"{r.dir}/{STATE_FILE}")).get("engine") if ours else None
            )
            if engine_alive(rec) and not force:
                busy.append(
                    f"host {h.name}: a live run (PID {rec.get('pid')}) uses it; "
                    "nothing was changed there (`--force` cleans anyway)"
                )
                continue
            done = restore(r)
            if restored(done):
                say(
                    f"host {h.name}: restored ({done.get('killed', 0)} process(es) killed, "
                    f"{done.get('sysctls', 0)} sysctl(s), {done.get('qdiscs', 0)} qdisc(s), "
                    f"{done.get('struct_ops', 0)} eBPF congestion control(s))"
                )
            if done:
                results.append(done)
        finally:
            r.conn.close()
    shutil.rmtree(naming.state_dir() / MIRROR, ignore_errors=True)
    if busy:
        raise Busy("; ".join(busy))
    if unreachable:
        raise BackendError("not cleaned, unreachable: " + "; ".join(unreachable))
    return results
