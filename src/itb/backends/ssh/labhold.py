"""A command that uses the hosts of a lab (`itb lab up`; the inventory's `[ssh] lab`)
holds that lab while it does, so that `itb lab down` cannot pull the hosts from under
a run: the same owner records as a local testbed's.

- Holding: a shared, non-blocking `flock` on `<lab>/lab.lock` (the kernel drops it when
  its holder dies, even by SIGKILL: a hold is never stale), and a record
  `<lab>/users/<pid>-<start>-<n>.json` that names the holder (PID, start time,
  command) for messages and for `lab down --force`.
- Taking down: the same lock, exclusive and non-blocking. Refused (`Busy`, exit 3)
  while any command holds it; `--force` first asks each holder to stop (SIGTERM: a
  run restores its hosts and keeps what it finished) and waits for it.
"""

from __future__ import annotations

import fcntl
import itertools
import json
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from itb.backends.owner import Busy, ProcessId
from itb.errors import PreflightError

LOCK = "lab.lock"
USERS = "users"
STOP_WAIT_S = 120.0
_seq = itertools.count(1)


@dataclass
class Hold:
    fd: int
    record: Path

    def release(self) -> None:
        self.record.unlink(missing_ok=True)
        os.close(self.fd)  # drops the shared lock


def hold(lab: str | None, inventory: str | None = None) -> Hold | None:
    """Holds the lab `lab` (an inventory's `[ssh] lab`; None: not a lab's hosts).
    `PreflightError` when the lab is down, `Busy` while it is being taken down."""
    if lab is None:
        return None
    d = Path(lab)
    if not d.is_dir():
        raise PreflightError(_down(d, inventory))
    fd = os.open(d / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise Busy(
            f"the lab {d} is being taken down (`itb lab down`): nothing was "
            "changed; `itb lab up` again to use it"
        ) from None
    if not (d / "lab.json").is_file():  # checked under the lock: down cannot be halfway
        os.close(fd)
        raise PreflightError(_down(d, inventory))
    me = ProcessId.me()
    users = d / USERS
    users.mkdir(exist_ok=True)
    record = users / f"{me.pid}-{me.start}-{next(_seq)}.json"
    record.write_text(
        json.dumps(
            {
                **me.to_json(),
                "since": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "command": " ".join(["itb", *sys.argv[1:]])[:200],
            }
        )
    )
    return Hold(fd, record)


def _down(d: Path, inventory: str | None) -> str:
    return (
        f"{inventory or 'the inventory'}: field ssh.lab: the lab {d} is not up (it was "
        "taken down, or never started): `itb lab up` starts it again"
    )


def users(d: Path) -> list[dict]:
    """The live commands that hold the lab (by their records: PID and start time), once
    each (a command may hold it more than once)."""
    out: dict[ProcessId, dict] = {}
    for p in sorted((d / USERS).glob("*.json")):
        try:
            rec = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        ident = ProcessId.from_json(rec)
        if ident is not None and ident.alive():
            out.setdefault(ident, rec)
    return list(out.values())


def describe(recs: list[dict]) -> str:
    return (
        "; ".join(
            f"`{r.get('command', '?')}` (PID {r.get('pid')}, since {r.get('since', '?')})"
            for r in recs
        )
        or "another ITB command"
    )


def take_down(d: Path, force: bool, say=lambda s: None, wait_s: float = STOP_WAIT_S) -> int:
    """The lab's lock, exclusively (a descriptor to keep until the lab is down). Refused
    while a command holds it; with `force`, each holder gets SIGTERM first and is waited
    for (`Busy` if one is still there after `wait_s`)."""
    fd = os.open(d / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        if _try(fd):
            return fd
        holders = users(d)
        if not force:
            raise Busy(
                f"the lab {d} is in use by {describe(holders)}: nothing was removed. "
                "Wait for it to end, or `itb lab down --force` stops it first"
            )
        for rec in holders:
            ident = ProcessId.from_json(rec)
            if ident is not None and ident.alive():
                say(
                    f"stopping `{rec.get('command')}` (PID {ident.pid}): it restores its "
                    "hosts and keeps what it finished"
                )
                os.kill(ident.pid, signal.SIGTERM)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if _try(fd):
                return fd
            time.sleep(0.2)
        raise Busy(
            f"the lab {d} is still in use by {describe(users(d))} {wait_s:g} s after "
            "SIGTERM: nothing was removed"
        )
    except BaseException:
        os.close(fd)
        raise


def _try(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
