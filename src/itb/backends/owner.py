"""Who owns what ITB creates.

- A process is identified by its PID *and* its start time (clock ticks since boot,
  /proc/PID/stat field 22), so a PID reused by another program is never taken for ours.
- Every command that changes a testbed (`itb run`, `bench`, `study`, `calibrate`,
  `testbed up|down`, `clean`) first takes the prefix's lock: an exclusive, non-blocking
  `flock` on `<state dir>/lock`. The kernel releases it when its holder dies, even by
  SIGKILL, so a lock is never stale. Next to it, `owner.json` says who holds it (for the
  message of a refused command). A command that cannot take the lock is refused before
  it touches anything.

Taking the lock is re-entrant within one process (a benchmark holds it across its runs,
each run takes it again).
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from itb.emulation import naming
from itb.errors import ItbError


class Busy(ItbError):
    """Another live ITB command holds the lock of this prefix."""

    exit_code = 3


@dataclass(frozen=True)
class ProcessId:
    pid: int
    start: int  # clock ticks after boot at which the process started

    @classmethod
    def of(cls, pid: int) -> ProcessId | None:
        start = start_ticks(pid)
        return None if start is None else cls(pid, start)

    @classmethod
    def me(cls) -> ProcessId:
        me = cls.of(os.getpid())
        assert me is not None
        return me

    def alive(self) -> bool:
        """The same process (PID and start time) still runs and is not a zombie."""
        return start_ticks(self.pid) == self.start and not _zombie(self.pid)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> ProcessId | None:
        try:
            return cls(int(data["pid"]), int(data["start"]))
        except (KeyError, TypeError, ValueError):
            return None


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(") ", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError, PermissionError):
        return None


def start_ticks(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return None if fields is None else int(fields[19])  # field 22 overall


def _zombie(pid: int) -> bool:
    fields = _stat_fields(pid)
    return fields is None or fields[0] == "Z"


def lock_path() -> Path:
    return naming.state_dir() / "lock"


def owner_path() -> Path:
    return naming.state_dir() / "owner.json"


def read_owner() -> dict | None:
    try:
        return json.loads(owner_path().read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def describe(owner: dict | None) -> str:
    if not owner:
        return "another ITB command"
    return (
        f"`{owner.get('command', '?')}` (PID {owner.get('pid')}, since {owner.get('since', '?')})"
    )


class _Held:
    fd: int | None = None
    depth = 0
    lock = threading.Lock()


_held: dict[str, _Held] = {}


def _forget_in_child() -> None:
    """A forked child (a report's drawing worker) holds no prefix: its copies of the
    lock's descriptor are closed, so the lock goes with its owner — a SIGKILLed engine
    leaves no child that keeps `itb clean` out."""
    for h in _held.values():
        if h.fd is not None:
            try:
                os.close(h.fd)
            except OSError:
                pass
    _held.clear()


os.register_at_fork(after_in_child=_forget_in_child)


def die_with(parent: int) -> None:
    """A forked worker's start (a report's drawing, a sweep's simulated cells): SIGKILL
    when its parent dies (PR_SET_PDEATHSIG), gone at once if it already has. A pool's
    worker would otherwise wait for work forever once its parent was killed."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(1)


def held() -> bool:
    """This process holds the lock of the current prefix."""
    h = _held.get(str(lock_path()))
    return h is not None and h.depth > 0


@contextmanager
def exclusive(what: str) -> Iterator[None]:
    """Hold the prefix's lock for the block; `Busy` (nothing touched) when another
    process holds it. `what` names the refused action in the message."""
    path = lock_path()
    key = str(path)
    h = _held.setdefault(key, _Held())
    with h.lock:
        if h.depth == 0:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise Busy(
                    f"{what} refused: testbed prefix {naming.prefix()!r} is in use by "
                    f"{describe(read_owner())}; nothing was changed. Wait for it, "
                    "or use another ITB_PREFIX for a parallel run"
                ) from None
            h.fd = fd
            _write_owner()
        h.depth += 1
    try:
        yield
    finally:
        with h.lock:
            h.depth -= 1
            if h.depth == 0 and h.fd is not None:
                try:
                    owner_path().unlink(missing_ok=True)
                except OSError:
                    pass
                os.close(h.fd)  # closing the last descriptor releases the flock
                h.fd = None


def _write_owner() -> None:
    me = ProcessId.me()
    record = {
        **me.to_json(),
        "command": " ".join(["itb", *sys.argv[1:]])[:200],
        "since": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    try:
        owner_path().write_text(json.dumps(record))
    except OSError:
        pass  # only used in messages
