"""The link emulators of a local testbed: started, identified, watched and stopped.

Each emulator is recorded with its PID *and* start time, so that a PID reused by an
unrelated program is never signalled. An emulator started for a run is bound to the
process that started it (`ITB_DIE_WITH_PARENT`: linkem asks the kernel for SIGKILL when
its parent dies), so a killed engine leaves no emulator behind; one started by
`itb testbed up` outlives the command, as a testbed must.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from itb.backends import procs
from itb.backends.host import NetnsHost
from itb.backends.owner import ProcessId
from itb.emulation import actions as A
from itb.emulation import monitor
from itb.errors import BackendError

READY_TIMEOUT_S = 10.0
DIE_WITH_PARENT = "ITB_DIE_WITH_PARENT"  # read by linkem, flow and the node worker

# The emulators this process started: their exit status (and the signal that ended
# them) comes from waitpid, which only the parent can call.
_children: dict[int, subprocess.Popen] = {}


@dataclass
class EmulatorHandle:
    link: str
    ns: str
    pid: int
    log_dir: str
    control: str
    start: int = 0  # the process's start time (clock ticks after boot): its identity
    bound: bool = field(default=False)  # dies with the process that started it

    def to_json(self) -> dict:
        return asdict(self)

    def identity(self) -> ProcessId:
        return ProcessId(self.pid, self.start)

    def send(self, command: dict) -> None:
        """Runtime change (rate, delay, loss, queue) through the emulator's control FIFO."""
        fd = os.open(self.control, os.O_WRONLY | os.O_NONBLOCK)
        try:
            os.write(fd, (json.dumps(command) + "\n").encode())
        finally:
            os.close(fd)

    # the testbed's Emulator interface (itb.backends.testbed): on this machine, its log
    # directory is the log, its clock is this machine's
    clock_offset_ns = 0

    def sync_logs(self) -> None:
        pass

    def sync_clock(self) -> None:
        pass

    def cpu_seconds(self) -> float:
        return procs.cpu_seconds(self.pid)

    def death(self) -> str | None:
        """None while the emulator runs, else how it ended ("SIGKILL", "exit 2")."""
        proc = _children.get(self.pid)
        if proc is not None:
            rc = proc.poll()
            if rc is None:
                return None
            if rc < 0:
                try:
                    return signal.Signals(-rc).name
                except ValueError:
                    return f"signal {-rc}"
            return f"exit {rc}"
        return None if self.identity().alive() else "gone"


def start(step: A.StartEmulator, bound: bool, group: str | None = None) -> EmulatorHandle:
    """Starts one emulator (in cgroup `group`, if any) and waits until it is ready."""
    log_dir = Path(step.config["log_dir"])
    log_dir.mkdir(parents=True, exist_ok=True)
    step.config_path.write_text(json.dumps(step.config, indent=1))
    control = log_dir / "control"
    if not control.exists():
        os.mkfifo(control)
    # Opened read-write: the emulator never sees EOF, later writers never block.
    ctl_fd = os.open(control, os.O_RDWR)
    # stdout: its events (ready, applied, log_error, log_gap), read by monitor.reported_gaps
    out_path, err_path = log_dir / monitor.EVENTS_FILE, log_dir / "stderr.log"
    env = dict(os.environ)
    if bound:  # `ip netns exec` execs linkem: its parent is this process
        env[DIE_WITH_PARENT] = str(os.getpid())
    else:
        env.pop(DIE_WITH_PARENT, None)
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = NetnsHost(step.node, step.ns, cgroup=group).spawn(
            step.command(), stdin=ctl_fd, stdout=out, stderr=err, env=env
        )
    os.close(ctl_fd)
    _children[proc.pid] = proc
    ident = ProcessId.of(proc.pid)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if b'"ready"' in out_path.read_bytes():
            return EmulatorHandle(
                step.node.removeprefix("em-"),
                step.ns,
                proc.pid,
                str(log_dir),
                str(control),
                ident.start if ident else 0,
                bound,
            )
        if proc.poll() is not None:
            raise BackendError(
                f"link emulator for {step.node} exited ({proc.returncode}): "
                f"{err_path.read_text().strip()[-500:]}"
            )
        time.sleep(0.01)
    proc.kill()
    raise BackendError(f"link emulator for {step.node} not ready after {READY_TIMEOUT_S}s")


def of_state(state: dict) -> list[EmulatorHandle]:
    return [EmulatorHandle(**e) for e in state.get("emulators", [])]


def stop(ems: list[EmulatorHandle], grace_s: float) -> dict[str, dict]:
    """Stops the emulators that are still ours (same PID and start time); returns each
    one's final statistics."""
    stats = {}
    for em in ems:
        if em.identity().alive():
            procs.stop([em.pid], grace_s=grace_s)
        _children.pop(em.pid, None)
        path = Path(em.log_dir) / monitor.STATS_FILE
        try:
            stats[em.link] = json.loads(path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            pass
    return stats


def remove_logs(ems: list[EmulatorHandle]) -> None:
    """An emulator's logs live as long as its testbed (they grow while it runs)."""
    for em in ems:
        shutil.rmtree(em.log_dir, ignore_errors=True)
