"""One cgroup (v2) per testbed, so that nothing it started outlives it.

Every process ITB starts on a testbed (the link emulators, the node workers) is moved
into the testbed's cgroup right after it is spawned, before it starts anything itself;
what those start (flows, iperf3, a `[[command]]` that daemonises and so escapes
PR_SET_PDEATHSIG) inherits it. Taking the testbed down kills the cgroup whole
(`cgroup.kill`, Linux 5.14) and removes it. The cgroup is recorded in the testbed's
state before it is created, like its namespaces; one that exists unrecorded is not ITB's
and is left alone. A `[[command]]` held to a rate profile runs in a child cgroup of the
testbed's, `pace-<event id>` (itb.engine.pacing), which goes with it.

The hierarchy is the first cgroup2 mount (`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified`
on a hybrid host), or `ITB_CGROUP_ROOT`; without one, testbeds have no cgroup and rely on
PR_SET_PDEATHSIG and the namespaces' process lists alone.
"""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

from itb.emulation import naming
from itb.errors import BackendError

KILL_TIMEOUT_S = 2.0
# Cgroups ITB makes inside a testbed's: one per `[[command]]` held to a profile
# (itb.engine.pacing), removed with it.
PACE_PREFIX = "pace-"


def hierarchy() -> Path | None:
    """The cgroup v2 hierarchy ITB creates its cgroups in, None if there is none."""
    env = os.environ.get("ITB_CGROUP_ROOT")
    if env is not None:
        return Path(env) if env else None
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                if right.split(" ", 1)[0] == "cgroup2":
                    return Path(left.split(" ")[4])
    except OSError:
        pass
    return None


def for_testbed() -> Path | None:
    """The cgroup of this prefix's testbed (not created), None without a hierarchy."""
    root = hierarchy()
    return None if root is None else root / f"itb-{naming.prefix()}"


def create(path: Path) -> None:
    try:
        path.mkdir()
    except FileExistsError:
        raise BackendError(
            f"cgroup {path} exists but is not ITB's (not in its state): it is "
            "left alone; remove it or choose another ITB_PREFIX"
        ) from None
    except OSError as e:
        raise BackendError(f"cannot create cgroup {path}: {e.strerror}") from None


def enter(path: str | Path | None, pid: int) -> None:
    """Moves a process (all its threads) into the cgroup; one already gone is skipped."""
    if path is None:
        return
    try:
        (Path(path) / "cgroup.procs").write_text(f"{pid}\n")
    except ProcessLookupError:
        pass
    except OSError as e:
        raise BackendError(f"cannot move process {pid} into cgroup {path}: {e.strerror}") from None


def seen_from_nodes(path: Path) -> Path:
    """The cgroup's path for a process on a node: `ip netns exec` gives a node's programs
    a mount namespace with a fresh /sys, where no cgroup hierarchy is mounted, so they
    reach this process's view of the filesystem through /proc/<its pid>/root (valid while
    this process, the engine, lives; what runs on a node dies with it anyway)."""
    return Path(f"/proc/{os.getpid()}/root") / path.relative_to("/")


def populated(path: str | Path) -> bool:
    """Whether a task of the cgroup (or of one inside it) has not finished exiting yet
    (cgroup.events: a killed task leaves cgroup.procs before the cgroup is empty)."""
    try:
        for line in (Path(path) / "cgroup.events").read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "populated":
                return value.strip() == "1"
    except FileNotFoundError:
        pass
    return False


def members(path: str | Path) -> list[int]:
    try:
        return [int(x) for x in (Path(path) / "cgroup.procs").read_text().split()]
    except FileNotFoundError:
        return []


def kill(path: str | Path | None) -> None:
    """Kills every process left in the cgroup and removes it (nothing if it is gone)."""
    if path is None or not Path(path).is_dir():
        return
    p = Path(path)
    for child in sorted(p.glob(f"{PACE_PREFIX}*")):
        if child.is_dir():
            kill(child)  # ITB's own, by name; any other child makes the removal fail below
    deadline = time.monotonic() + KILL_TIMEOUT_S
    while True:
        left = members(p)
        if not left and not populated(p):
            break
        if time.monotonic() > deadline:
            raise BackendError(
                f"cgroup {p}: processes {left[:10]} survived SIGKILL"
                if left
                else f"cgroup {p}: still populated {KILL_TIMEOUT_S:g} s after SIGKILL "
                "(tasks that do not finish exiting)"
            )
        if left:
            try:
                (p / "cgroup.kill").write_text("1\n")
            except FileNotFoundError:  # before Linux 5.14: one by one
                for pid in left:
                    try:
                        os.kill(pid, 9)
                    except ProcessLookupError:
                        pass
        time.sleep(0.02)
    while True:
        try:
            p.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as e:
            # EBUSY for a moment after the last task left (seen under load); any other
            # error, or one that lasts, is a child cgroup someone made inside ours
            if e.errno != errno.EBUSY or time.monotonic() > deadline:
                raise BackendError(f"cannot remove cgroup {p}: {e.strerror}") from None
        time.sleep(0.02)
