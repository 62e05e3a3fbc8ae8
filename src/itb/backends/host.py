"""One interface for running commands on a node: an argv list, never a shell string.

`NetnsHost` runs inside a local network namespace; `RecordingHost` only records (dry run).
An SSH host will implement the same two methods.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Protocol

from itb.backends import cgroup
from itb.errors import CommandFailed


@dataclass
class Completed:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str


class ByteSink(Protocol):
    def write(self, data: bytes, /) -> object: ...

    def flush(self) -> None: ...


class ByteSource(Protocol):
    def read(self) -> bytes: ...


class Proc(Protocol):
    """A process a `Host` spawned: a `subprocess.Popen` of bytes on this machine, a
    `RemoteProc` on an SSH host; what ITB uses of either. A stream is None unless it
    was asked for as a pipe."""

    @property
    def pid(self) -> int | None: ...  # None: remote (not known here)

    @property
    def stdin(self) -> ByteSink | None: ...

    @property
    def stdout(self) -> Iterable[bytes] | None: ...  # its lines

    @property
    def stderr(self) -> ByteSource | None: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def communicate(
        self, input: bytes | None = None, timeout: float | None = None
    ) -> tuple[bytes, bytes]: ...

    def terminate(self) -> None: ...

    def kill(self) -> None: ...


class CommandRunner(Protocol):
    """Runs a command to its end: a `Host`, or an SSH host's connection as such."""

    def run(
        self,
        argv: Sequence[str],
        *,
        check: bool = True,
        timeout: float | None = 60,
        input: str | None = None,
    ) -> Completed: ...


class Host(CommandRunner, Protocol):
    name: str

    def spawn(
        self,
        argv: Sequence[str],
        *,
        stdin: IO | int | None = None,
        stdout: IO | int | None = None,
        stderr: IO | int | None = None,
        env: dict[str, str] | None = None,
    ) -> Proc: ...


def json_lines(stream: Iterable[bytes | str]) -> Iterator[dict]:
    """The JSON objects of a line stream (a worker's events); other lines are skipped."""
    for raw in stream:
        try:
            ev = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if isinstance(ev, dict):
            yield ev


def _check_argv(argv: Sequence[str]) -> list[str]:
    out = [str(a) for a in argv]
    if not out:
        raise ValueError("empty argv")
    return out


def with_parent(argv: list[str]) -> list[str]:
    """The program killed (SIGKILL) when its parent dies: started through util-linux's
    setpriv --pdeathsig (as it is, where setpriv is missing)."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL", "--", *argv] if setpriv else argv


@dataclass
class NetnsHost:
    """A node that is a network namespace on this machine (netns None: the root namespace)."""

    name: str
    netns: str | None
    cgroup: str | None = None  # what it spawns goes there (itb.backends.cgroup)

    def wrap(self, argv: Sequence[str]) -> list[str]:
        argv = _check_argv(argv)
        return argv if self.netns is None else ["ip", "netns", "exec", self.netns, *argv]

    def run(self, argv, *, check=True, timeout=60, input=None) -> Completed:
        full = self.wrap(argv)
        try:
            # A command this process waits for dies with it (util-linux's setpriv asks the
            # kernel for SIGKILL when its parent dies): a killed engine leaves no ping.
            p = subprocess.run(
                with_parent(full), capture_output=True, text=True, timeout=timeout, input=input
            )
        except subprocess.TimeoutExpired as e:
            raise CommandFailed(self.name, full, -1, f"timed out after {timeout}s") from e
        except FileNotFoundError as e:
            raise CommandFailed(self.name, full, 127, str(e)) from e
        res = Completed(full, p.returncode, p.stdout, p.stderr)
        if check and p.returncode != 0:
            raise CommandFailed(self.name, full, p.returncode, p.stderr or p.stdout)
        return res

    def spawn(
        self, argv, *, stdin=None, stdout=None, stderr=None, env=None
    ) -> subprocess.Popen[bytes]:
        # New session: a Ctrl-C at the terminal does not reach it (the engine stops it).
        # Whether it outlives this process is the caller's choice (ITB_DIE_WITH_PARENT).
        proc = subprocess.Popen(
            self.wrap(argv),
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
            env=env,
        )
        try:
            cgroup.enter(self.cgroup, proc.pid)  # before it can start anything itself
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        return proc


@dataclass
class RecordingHost:
    """Dry run: records every argv instead of running it."""

    name: str
    log: list[list[str]] = field(default_factory=list)

    def run(self, argv, *, check=True, timeout=60, input=None) -> Completed:
        self.log.append(_check_argv(argv))
        return Completed(list(argv), 0, "", "")

    def spawn(self, argv, *, stdin=None, stdout=None, stderr=None, env=None):
        self.log.append(_check_argv(argv))
        return None
