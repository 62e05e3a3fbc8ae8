"""Choosing, loading and unloading congestion controls by canonical name.

The kernel's own implementation is preferred (built in, or a module that modprobe can
load); otherwise ITB registers its eBPF one. What a run loaded, it unregisters at the
end; `itb clean` unregisters every struct_ops of ours, so a killed run leaves none.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Literal

from itb.backends.host import Host, NetnsHost
from itb.cc import ebpf, kernel, registrations
from itb.errors import CommandFailed, PreflightError
from itb.say import Say
from itb.scenario.experiment.algorithms import ALGORITHMS, OURS_PREFIX, Algorithm

Source = Literal["built-in", "module", "ours"]
Prefer = Literal["kernel", "ours"]


def _noop(msg: str) -> None:
    pass


def local_host() -> Host:
    return NetnsHost("local", None)  # struct_ops and modules are machine-wide


@dataclass(frozen=True)
class Resolved:
    """Which implementation of a canonical algorithm a run uses."""

    name: str
    kernel_name: str  # what setsockopt(TCP_CONGESTION) gets
    source: Source
    loaded_now: bool  # this call registered / modprobed it

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Status:
    name: str
    kernel_name: str | None
    source: Source | None
    usable: bool  # a socket can select it right now
    note: str

    def to_json(self) -> dict:
        return asdict(self)


def unknown(name: str) -> PreflightError:
    return PreflightError(f"unknown congestion control {name!r}; known: {', '.join(ALGORITHMS)}")


def _algorithm(name: str) -> Algorithm:
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise unknown(name) from None


def status(host: Host | None = None) -> list[Status]:
    host = host or local_host()
    avail, mods = set(kernel.available()), kernel.loaded_modules()
    out = []
    for alg in ALGORITHMS.values():
        if alg.kernel_name and alg.kernel_name in avail:
            src: Source = "module" if alg.module in mods else "built-in"
            out.append(Status(alg.name, alg.kernel_name, src, True, "in the kernel"))
        elif alg.module is not None and kernel.module_exists(host, alg.module):  # (a kernel name)
            out.append(
                Status(
                    alg.name,
                    alg.kernel_name,
                    "module",
                    False,
                    f"modprobe {alg.module} on first use",
                )
            )
        elif (ours := alg.ours_name) is not None:  # (ITB's own)
            if ours in avail:
                out.append(Status(alg.name, ours, "ours", True, "eBPF, registered"))
            elif ebpf.object_path(alg.name).is_file():
                out.append(Status(alg.name, ours, "ours", False, "eBPF, registered on first use"))
            else:
                out.append(Status(alg.name, ours, "ours", False, "eBPF, not built: run `make bpf`"))
        else:
            out.append(Status(alg.name, alg.kernel_name, None, False, "not on this kernel"))
    return out


def resolve_one(
    name: str, host: Host, prefer: Prefer = "kernel", progress: Say = _noop
) -> Resolved:
    alg = _algorithm(name)
    avail = set(kernel.available())
    module = alg.module  # (set when the kernel has its own)
    if prefer == "kernel" and alg.kernel_name and module is not None:
        src: Source = "module" if module in kernel.loaded_modules() else "built-in"
        if alg.kernel_name in avail:
            return Resolved(name, alg.kernel_name, src, False)
        if kernel.module_exists(host, module):
            progress(f"loading kernel module {module}")
            kernel.load_module(host, module)
            return Resolved(name, alg.kernel_name, "module", True)
    ours = alg.ours_name
    if ours is None:  # (not ITB's own)
        raise PreflightError(
            f"congestion control {name!r} is not available on this kernel (available: "
            f"{', '.join(sorted(avail))}) and ITB has no eBPF implementation of it"
        )
    if ours in avail:
        return Resolved(name, ours, "ours", False)
    progress(f"registering ITB's eBPF {name} as {ours}")
    try:
        ebpf.register(host, name, ebpf.object_path(name))
    except ebpf.CcLoadError:
        if ours in kernel.available():  # registered meanwhile by another run
            return Resolved(name, ours, "ours", False)
        raise
    if ours not in kernel.available():
        raise ebpf.CcLoadError(name, f"bpftool registered it but the kernel does not offer {ours}")
    return Resolved(name, ours, "ours", True)


def ensure(
    names: Iterable[str], host: Host | None = None, prefer: Prefer = "kernel", progress: Say = _noop
) -> list[Resolved]:
    """Makes every named algorithm selectable; on failure undoes what it loaded."""
    host = host or local_host()
    done: list[Resolved] = []
    try:
        for name in dict.fromkeys(names):
            with registrations.locked():
                r = resolve_one(name, host, prefer, progress)
                if r.source == "ours":
                    registrations.add(r.kernel_name, r.loaded_now)
            done.append(r)
    except BaseException:
        release(done, host)
        raise
    return done


def release(
    resolved: Iterable[Resolved], host: Host | None = None, progress: Say = _noop
) -> list[str]:
    """Lets go of what `ensure` returned; unregisters an eBPF algorithm a run registered
    once nobody holds it any more; returns the names unregistered. Kernel modules stay
    loaded: other users of the machine may rely on them."""
    host = host or local_host()
    gone = []
    for r in resolved:
        if r.source != "ours":
            continue
        with registrations.locked():
            if not registrations.remove(r.kernel_name):
                continue
            progress(f"unregistering {r.kernel_name}")
            why = _unregister(host, r.kernel_name)
            if why is None:
                gone.append(r.kernel_name)
            else:
                progress(f"left {r.kernel_name}: {why}")
    return gone


def unload(names: Iterable[str], host: Host | None = None) -> list[str]:
    """Unregisters ours by canonical name; returns the ones that were registered."""
    host = host or local_host()
    regs = ebpf.registered(host)
    gone = []
    for name in names:
        ours = _algorithm(name).ours_name
        if ours is None:  # (not ITB's own)
            raise PreflightError(
                f"{name!r} is the kernel's, not ITB's; `itb cc unload` "
                "only unregisters ITB's eBPF congestion controls"
            )
        with registrations.locked():
            if users := registrations.users(ours):
                raise PreflightError(f"{ours} is in use by {_who(users)}: not unregistered")
            if ours in regs:
                ebpf.unregister(host, ours)
                registrations.forget(ours)
                gone.append(ours)
    return gone


UNREGISTER_WAIT_S = 5.0


def _unregister(host: Host, name: str) -> str | None:
    """Unregisters; None when done, else why not. Sockets being closed still hold the
    program for a moment (EINPROGRESS): retried for a few seconds."""
    deadline = time.monotonic() + UNREGISTER_WAIT_S
    while True:
        try:
            ebpf.unregister(host, name)
            return None
        except CommandFailed as e:
            if name not in ebpf.registered(host):
                return None
            if "in progress" not in e.stderr or time.monotonic() > deadline:
                return (
                    f"still referenced by sockets ({e.stderr.strip()[-120:]}); run "
                    "`itb clean` again later"
                )
            time.sleep(0.2)


def _who(users: list[dict]) -> str:
    return ", ".join(f"PID {u['pid']} (prefix {u.get('prefix', '?')})" for u in users)


@dataclass
class Cleaned:
    unregistered: list[str]
    kept: dict[str, str]  # name -> why it was left


def clean(host: Host | None = None, progress: Say = _noop) -> Cleaned:
    """Unregisters the struct_ops congestion controls of ours (name `itb_*`) that no live
    process holds; says which it kept and for whom."""
    host = host or local_host()
    out = Cleaned([], {})
    try:
        regs = ebpf.registered(host)
    except PreflightError:  # no bpftool: nothing of ours can be registered
        return out
    for name in sorted(regs):
        if not name.startswith(OURS_PREFIX):
            continue
        with registrations.locked():
            if users := registrations.users(name):
                out.kept[name] = f"in use by {_who(users)}"
                continue
            progress(f"unregistering {name}")
            why = _unregister(host, name)
            if why is not None:
                out.kept[name] = why
                continue
            registrations.forget(name)
            out.unregistered.append(name)
    return out
