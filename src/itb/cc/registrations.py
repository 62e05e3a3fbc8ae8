"""Who uses ITB's eBPF congestion controls right now: reference counts across runs and
prefixes.

A struct_ops registration is machine-wide, so its holders are too: one JSON file per
congestion control under `ITB_CC_DIR` (default `/run/itb-cc`, whatever the prefix or
state directory), changed only under that directory's `flock`. A holder is a process
(PID and start time) with a count; a dead holder no longer counts. The file also says
whether a run registered the program (then the last run to let go unregisters it) or
someone else did (`itb cc load`: it stays until `itb cc unload` or `itb clean`).
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from itb.backends.owner import ProcessId
from itb.emulation import naming


def root() -> Path:
    return Path(os.environ.get("ITB_CC_DIR", "/run/itb-cc"))


@contextmanager
def locked() -> Iterator[None]:
    """Every read-modify-write of the holders (and the registration it decides) runs
    under this lock; the sections are short, so it is waited for."""
    d = root()
    d.mkdir(parents=True, exist_ok=True)
    fd = os.open(d / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _path(kernel_name: str) -> Path:
    return root() / f"{kernel_name}.json"


def _read(kernel_name: str) -> dict:
    try:
        data = json.loads(_path(kernel_name).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {"registered_by_run": False, "holders": []}
    live = [
        h
        for h in data.get("holders", [])
        if (p := ProcessId.from_json(h)) is not None and p.alive()
    ]
    return {"registered_by_run": bool(data.get("registered_by_run")), "holders": live}


def _write(kernel_name: str, data: dict) -> None:
    path = _path(kernel_name)
    if not data["holders"]:
        path.unlink(missing_ok=True)
        return
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def add(kernel_name: str, registered_now: bool) -> None:
    """This process uses the program (once more)."""
    data = _read(kernel_name)
    me = ProcessId.me().to_json()
    mine = next(
        (h for h in data["holders"] if h["pid"] == me["pid"] and h["start"] == me["start"]), None
    )
    if mine is None:
        data["holders"].append({**me, "count": 1, "prefix": naming.prefix()})
    else:
        mine["count"] = mine.get("count", 1) + 1
    if registered_now:
        data["registered_by_run"] = True
    _write(kernel_name, data)


def remove(kernel_name: str) -> bool:
    """This process lets go once; True when nobody holds it any more and a run had
    registered it (the caller then unregisters it)."""
    data = _read(kernel_name)
    me = ProcessId.me().to_json()
    for h in data["holders"]:
        if h["pid"] == me["pid"] and h["start"] == me["start"]:
            h["count"] = h.get("count", 1) - 1
    data["holders"] = [h for h in data["holders"] if h.get("count", 1) > 0]
    last = not data["holders"] and data["registered_by_run"]
    _write(kernel_name, data)
    return last


def users(kernel_name: str) -> list[dict]:
    """The live holders (pid, start, count, prefix)."""
    return _read(kernel_name)["holders"]


def forget(kernel_name: str) -> None:
    _path(kernel_name).unlink(missing_ok=True)
