"""The worker of one node: NXE's "one worker per node".

It runs on the node (inside its network namespace here, over SSH on a remote host),
reads commands as JSON lines on stdin (spawn at a date, write, signal, cancel, clock,
stop, quit) and answers with events as JSON lines on stdout (hello, dispatched or
spawn_failed or cancelled, clock, ready, truncated, exited). docs/architecture.md ("The
node worker") gives every field; the module's code is the reference.

A child's stdout comes through a pipe into its file; with "output_limit_bytes" its stderr
too, the two sharing that budget (the rest is read and dropped: the child is never
blocked nor killed for it). Dates are CLOCK_MONOTONIC nanoseconds of the node's own clock.
The worker sleeps until a spawn's date (a cancel or stop wakes it), spins the last 200 µs,
and asks for real-time priority so that it wakes on time while transfers load the CPUs;
children and the threads copying their output run under the normal scheduler. With
`--record FILE` (remote hosts) it appends "PID START" of itself and of every child to
FILE, for `itb clean --inventory`. Standard library only: it starts once per node and
must start fast.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import threading
import time

# A date: slept to COARSE_NS before it, then to SPIN_NS before, then spun (a VM's vCPU
# may wake from a long sleep ms late, not from a short one: docs/architecture.md)
COARSE_NS = 10_000_000
SPIN_NS = 1_000_000
STOP_GRACE_S = 2.0
RT_PRIORITY = 10
APPEND = os.O_WRONLY | os.O_CREAT | os.O_APPEND  # a child's output file, created 0o644
NORMAL = (os.SCHED_OTHER, os.sched_param(0))  # the scheduler of children and copying threads
# A child leads its own session (a signal to it reaches its children), runs under the
# normal scheduler and with SIGPIPE's default action (Python ignores it; a child must not).
CHILD: dict = {"setsid": True, "scheduler": NORMAL, "setsigdef": (signal.SIGPIPE,)}


class Worker:
    def __init__(self, out=sys.stdout):
        self.out = out
        self.lock = threading.Lock()
        self.children: dict[str, int] = {}
        self.stdins: dict[str, int] = {}
        self.stopping = False  # the worker is exiting: no pending spawn starts
        self.cancelled: set[str] = set()  # ids whose pending spawn is not to start
        self.generation = 0  # bumped by "stop": spawns of an earlier generation are cancelled
        self.changed = threading.Condition()  # notified on cancel and stop: pending spawns look

    def emit(self, **event) -> None:
        with self.lock:
            self.out.write(json.dumps(event) + "\n")
            self.out.flush()

    def handle(self, cmd: dict) -> bool:
        """Apply one command; False when the worker should exit."""
        op = cmd.get("op")
        if op == "spawn":
            threading.Thread(
                target=self._spawn_at, args=(cmd, self.generation), daemon=True
            ).start()
        elif op == "write":
            if (fd := self.stdins.get(cmd["id"])) is not None:  # (else its exit is reported)
                with contextlib.suppress(OSError):
                    os.write(fd, cmd["data"].encode())
        elif op in ("signal", "cancel"):
            if op == "cancel":
                self.cancelled.add(cmd["id"])
                self._wake_pending()
            if pid := self.children.get(cmd["id"]):
                _kill(pid, int(cmd.get("signal", signal.SIGTERM)))
        elif op == "clock":
            self.emit(ev="clock", seq=cmd.get("seq"), t_ns=time.monotonic_ns())
        elif op == "stop":
            self.generation += 1
            self._wake_pending()
            self.stop_all()
        elif op == "quit":
            return False
        else:
            self.emit(ev="error", reason=f"unknown op {op!r}")
        return True

    def _spawn_at(self, cmd: dict, generation: int) -> None:
        at = int(cmd.get("at_ns") or 0)

        def dropped() -> bool:
            return self.stopping or generation != self.generation or cmd["id"] in self.cancelled

        with self.changed:  # asleep until COARSE_NS before the date, or until cancelled
            while not dropped() and (left := at - time.monotonic_ns()) > COARSE_NS:
                self.changed.wait((left - COARSE_NS) / 1e9)
        if not dropped():
            sleep_until(at)  # a short sleep, then SPIN_NS spun
        if dropped():
            self.emit(ev="cancelled", id=cmd["id"], t_ns=time.monotonic_ns())
            return
        t = time.monotonic_ns()
        try:
            pid, stdin_fd, pipes = _spawn(cmd)
        except OSError as e:
            self.emit(ev="spawn_failed", id=cmd["id"], t_ns=t, reason=str(e))
            return
        spawned = time.monotonic_ns()
        self.children[cmd["id"]] = pid
        _record(pid)
        if stdin_fd is not None:
            self.stdins[cmd["id"]] = stdin_fd
        self.emit(ev="dispatched", id=cmd["id"], at_ns=at, t_ns=t, spawned_ns=spawned, pid=pid)
        output = Output(cmd.get("output_limit_bytes"))
        ready = ReadyLine(cmd.get("ready_match")) if cmd.get("ready") else None
        readers = [
            threading.Thread(target=self._copy, args=(cmd, stream, fd, output, ready), daemon=True)
            for stream, fd in pipes.items()
        ]
        for r in readers:
            r.start()
        _, status = os.waitpid(pid, 0)
        done = time.monotonic_ns()
        deadline = time.monotonic() + 2.0  # a grandchild may keep a pipe open: not forever
        for r in readers:
            r.join(timeout=max(0.0, deadline - time.monotonic()))
        fd = self.stdins.pop(cmd["id"], None)
        if fd is not None:
            os.close(fd)
        self.children.pop(cmd["id"], None)
        extra = {} if output.limit is None else {"dropped_bytes": output.dropped_counts()}
        piped, rc = "stderr" in pipes, os.waitstatus_to_exitcode(status)
        tail = output.tail.decode(errors="replace").strip() if piped else _tail(cmd["stderr"])
        self.emit(ev="exited", id=cmd["id"], t_ns=done, rc=rc, stderr_tail=tail, **extra)

    def _copy(self, cmd: dict, stream: str, fd: int, output: Output, ready) -> None:
        with contextlib.suppress(OSError):  # not the real-time scheduling it inherited
            os.sched_setscheduler(0, *NORMAL)
        now, ident = time.monotonic_ns, cmd["id"]

        def on_ready() -> None:
            self.emit(ev="ready", id=ident, t_ns=now())

        def on_drop(why: str | None) -> None:
            cause = {"reason": why} if why else {"limit_bytes": output.limit}
            self.emit(ev="truncated", id=ident, t_ns=now(), stream=stream, **cause)

        ready = ready if stream == "stdout" else None
        copy_stream(fd, cmd[stream], stream, output, ready, on_ready, on_drop)

    def _wake_pending(self) -> None:
        with self.changed:
            self.changed.notify_all()

    def stop_all(self, grace_s: float = STOP_GRACE_S) -> None:
        pids = list(self.children.values())
        for pid in pids:
            _kill(pid, signal.SIGTERM if grace_s > 0 else signal.SIGKILL)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and self.children:
            time.sleep(0.02)
        for pid in list(self.children.values()):
            _kill(pid, signal.SIGKILL)


def sleep_until(at_ns: int) -> None:
    """Until at_ns: asleep until COARSE_NS before it, then SPIN_NS before, then spinning."""
    while True:
        left = at_ns - time.monotonic_ns()
        if left <= 0:
            return
        if left > COARSE_NS:
            time.sleep((left - COARSE_NS) / 1e9)
        elif left > SPIN_NS:
            time.sleep((left - SPIN_NS) / 1e9)


def _spawn(cmd: dict) -> tuple[int, int | None, dict[str, int]]:
    """The child, started; its stdin's pipe (or None) and the pipes of its output."""
    argv = [str(a) for a in cmd["argv"]]
    path = shutil.which(argv[0]) or argv[0]
    pipes: dict[str, int] = {}
    actions: list[tuple] = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)]
    stdin_w = None
    if cmd.get("stdin"):
        in_r, stdin_w = os.pipe()
        actions = [(os.POSIX_SPAWN_DUP2, in_r, 0)]
    for stream, fd in (("stdout", 1), ("stderr", 2)):
        if stream == "stdout" or cmd.get("output_limit_bytes") is not None:
            pipes[stream], w = os.pipe()
            actions.append((os.POSIX_SPAWN_DUP2, w, fd))
        else:
            actions.append((os.POSIX_SPAWN_OPEN, fd, cmd[stream], APPEND, 0o644))
    try:
        pid = os.posix_spawn(path, argv, _CHILD_ENV, file_actions=actions, **CHILD)
    except OSError:
        for r in [*pipes.values(), *([stdin_w] if stdin_w is not None else [])]:
            os.close(r)
        raise
    finally:  # the child's ends
        for a in actions:
            if a[0] == os.POSIX_SPAWN_DUP2:
                os.close(a[1])
    return pid, stdin_w, pipes


CHUNK = 65_536  # one read of a child's output (a pipe holds 64 KiB by default)
READY_LINE_MAX = 4096  # a longer line is not a ready line: not held in memory


class Output:
    """One child's output: what it may still write to its files, stdout and stderr
    together (None: no limit), what each stream dropped, the last 400 bytes of its
    stderr (kept or dropped). Shared by its copying threads."""

    def __init__(self, limit: int | None = None):
        self.limit, self.used, self.lock = limit, 0, threading.Lock()
        self.dropped = {"stdout": 0, "stderr": 0}
        self.tail = b""

    def take(self, stream: str, chunk: bytes, writable: bool = True) -> tuple[int, bool]:
        """How many bytes of the chunk may be written; True the first time this stream
        drops some."""
        n = len(chunk)
        with self.lock:
            room = n if self.limit is None else max(0, min(n, self.limit - self.used))
            keep = room if writable else 0
            self.used += keep
            first = keep < n and self.dropped[stream] == 0
            self.dropped[stream] += n - keep
            if stream == "stderr":
                self.tail = (self.tail + chunk[-400:])[-400:]
            return keep, first

    def dropped_counts(self) -> dict[str, int]:
        with self.lock:
            return dict(self.dropped)


class ReadyLine:
    """The "ready" line (or the first containing `match`) of a stream read in chunks,
    holding at most READY_LINE_MAX bytes of a line, and nothing once it was seen."""

    def __init__(self, match: str | None = None):
        self.match = match.encode() if match else None
        self.line, self.overlong, self.seen = bytearray(), False, False

    def feed(self, chunk: bytes) -> bool:
        """True when this chunk ended the ready line."""
        start = 0
        while not self.seen:
            nl = chunk.find(b"\n", start)
            piece = chunk[start:] if nl < 0 else chunk[start:nl]
            self.overlong = self.overlong or len(self.line) + len(piece) > READY_LINE_MAX
            if self.overlong:
                self.line.clear()
            else:
                self.line += piece
            if nl < 0:
                return False
            self.seen, start = self.end_of_line(), nl + 1
        return self.seen

    def end_of_line(self) -> bool:
        """Is the line held (ended by "\n" or by the end of the stream) the ready line?"""
        line, whole = bytes(self.line), not (self.overlong or self.seen)
        self.line, self.overlong = bytearray(), False
        return whole and (line.strip() == b"ready" if self.match is None else self.match in line)


def copy_stream(
    fd: int, path: str, stream: str, output: Output, ready: ReadyLine | None, on_ready, on_drop
) -> None:
    """Read the pipe `fd` to its end, append to `path` what the budget allows and drop
    the rest: `on_drop(None)` when it starts, `on_drop(reason)` when the file cannot be
    written (the rest is dropped too); `on_ready()` once the ready line is written."""
    out, failed = None, None
    try:
        out = os.open(path, APPEND, 0o644)
    except OSError as e:
        failed = f"{path}: {e.strerror}"
    with os.fdopen(fd, "rb", buffering=0) as pipe:
        while chunk := pipe.read(CHUNK):
            keep, first = output.take(stream, chunk, writable=out is not None)
            view = memoryview(chunk)[:keep]
            if out is not None:  # (else nothing was kept: keep is 0)
                try:
                    while view:
                        view = view[os.write(out, view) :]
                except OSError as e:  # (what it kept of the budget stays taken)
                    os.close(out)
                    out, failed, first = None, f"{path}: {e.strerror}", True
                    with output.lock:
                        output.dropped[stream] += len(view)
            if first:
                on_drop(failed)
            if ready is not None and not ready.seen and ready.feed(chunk):
                on_ready()
    if ready is not None and ready.end_of_line():
        on_ready()
    if out is not None:
        os.close(out)


# ITB's programs (flow) ask the kernel to kill them when their parent, this worker, dies.
_CHILD_ENV = {**os.environ, "ITB_DIE_WITH_PARENT": str(os.getpid())}


def _die_with_parent() -> None:
    """SIGTERM when the engine dies (its pipe's EOF tells the same, this also covers a
    worker blocked elsewhere); exit at once if it is already gone."""
    want = os.environ.get("ITB_DIE_WITH_PARENT")
    if not want:
        return
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    if str(os.getppid()) != want:
        sys.exit(1)


def _kill(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)  # the child leads its own session: take its children too
    except ProcessLookupError:
        pass
    except PermissionError:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def _tail(path: str | None, limit: int = 400) -> str:
    try:
        with open(path or "", "rb") as f:  # ("": no such file)
            f.seek(max(0, os.fstat(f.fileno()).st_size - limit))
            return f.read().decode(errors="replace").strip()
    except OSError:
        return ""


_RECORD: str | None = None


def _record(pid: int) -> None:
    """Append "PID START" to the record file (remote hosts: for `itb clean --inventory`)."""
    if _RECORD is None:
        return
    with contextlib.suppress(OSError, IndexError), open(_RECORD, "a") as f:
        f.write(f"{pid} {_started(pid)}\n")


def _started(pid: int) -> int:
    """The process's start time (clock ticks after boot): with its PID, who it is."""
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(") ", 1)[1].split()[19])


def kill_recorded(path: str) -> int:
    """`--kill FILE`: SIGKILL every process recorded in FILE that is still the same one
    (PID and start time), with its process group; prints how many."""
    killed = 0
    try:
        lines = open(path).read().split("\n")
    except OSError:
        lines = []
    me = os.getpid()
    for line in lines:
        try:
            pid, start = (int(x) for x in line.split())
            same = _started(pid) == start
        except (ValueError, OSError, IndexError):
            continue
        if not same or pid == me:
            continue
        hit = False
        for kill in (os.killpg, os.kill):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                kill(pid, signal.SIGKILL)
                hit = True
        killed += hit
    print(killed)
    return 0


def main() -> int:
    global _RECORD
    if len(sys.argv) == 3 and sys.argv[1] == "--kill":
        return kill_recorded(sys.argv[2])
    if len(sys.argv) == 3 and sys.argv[1] == "--record":
        _RECORD = sys.argv[2]
        _record(os.getpid())
    _die_with_parent()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with contextlib.suppress(OSError):  # best effort: dates are still met on an idle machine
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(RT_PRIORITY))
    w = Worker()
    w.emit(ev="hello", pid=os.getpid(), t_ns=time.monotonic_ns())
    quit_asked = False
    try:
        for line in sys.stdin:
            if line.strip() and not w.handle(json.loads(line)):
                quit_asked = True
                break
    finally:
        w.stopping = True
        w._wake_pending()
        # Asked to quit: the children get their grace. EOF or SIGTERM: the engine is
        # gone, nobody will read their results; they die now.
        w.stop_all(grace_s=STOP_GRACE_S if quit_asked else 0.0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
