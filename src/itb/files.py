"""Files ITB reads on a user's word (scenarios, inventories, profiles, models, results):
a regular file of at most a size limit, read with one bounded read.

`/dev/zero`, `/dev/urandom`, a FIFO or a directory named where a file is expected are
refused at once (nothing is read), and so is a file larger than its kind's limit; every
refusal is a `ScenarioError` (exit 2) naming the file and the reason.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from itb.errors import ScenarioError, os_reason

MiB = 1 << 20
# The largest file of each kind ITB reads (docs/scenario.md, "Files ITB reads"): far
# above what a valid one holds (a profile of the most steps allowed, 10,000, is ~0.3 MB)
LIMITS = {
    "scenario": 4 * MiB,
    "inventory": 1 * MiB,
    "profile": 4 * MiB,
    "model": 4 * MiB,
    "results": 64 * MiB,
}

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


def _size(n: int) -> str:
    return f"{n} bytes ({n // MiB} MiB)" if n % MiB == 0 else f"{n} bytes"


def _a(kind: str) -> str:
    return ("an " if kind[0] in "aeiou" else "a ") + kind


def _what_is(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def check(path: str | Path, kind: str, field: str = "(file)") -> None:
    """Refuses at once what `read_bytes` would refuse before reading (no such file, not a
    regular file, too large): for a command that imports much before it reads the file."""
    os.close(_open(path, kind, field))


def _open(path: str | Path, kind: str, field: str) -> int:
    """A descriptor of a regular file of at most LIMITS[kind] bytes (by its size now)."""
    limit = LIMITS[kind]
    name = str(path)
    try:
        # O_NONBLOCK: opening a FIFO does not wait for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ScenarioError(name, field, "no such file") from None
    except IsADirectoryError:
        raise ScenarioError(name, field, f"is a directory, not {_a(kind)} file") from None
    except OSError as e:
        raise ScenarioError(name, field, f"cannot be read: {os_reason(e)}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ScenarioError(
                name,
                field,
                f"is {_what_is(st.st_mode)}, not {_a(kind)} file (ITB reads only regular files)",
            )
        if st.st_size > limit:
            raise ScenarioError(
                name, field, f"{st.st_size} bytes: {_a(kind)} file has at most " + _size(limit)
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path: str | Path, kind: str, field: str = "(file)") -> bytes:
    """The whole file, when it is a regular file of at most LIMITS[kind] bytes."""
    limit, name = LIMITS[kind], str(path)
    fd = _open(path, kind, field)
    try:
        chunks, got = [], 0
        while got <= limit:  # the file may grow while it is read: one byte past is enough
            try:
                chunk = os.read(fd, limit + 1 - got)
            except OSError as e:
                raise ScenarioError(name, field, f"cannot be read: {os_reason(e)}") from None
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > limit:
            raise ScenarioError(
                name, field, f"more than {limit} bytes: {_a(kind)} file has at most " + _size(limit)
            )
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path: str | Path, kind: str, field: str = "(file)") -> str:
    """As `read_bytes`, decoded as UTF-8 (else a `ScenarioError` naming the byte)."""
    data = read_bytes(path, kind, field)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ScenarioError(str(path), field, f"not UTF-8 text (byte {e.start})") from None
