"""Choosing, loading and unloading congestion controls by canonical name.

The kernel's own implementation is preferred (built in, or a module that modprobe can
load); otherwise ITB registers its eBPF one. What a run loaded, it unregisters at the
end; `itb clean` unregisters every struct_ops of ours, so a killed run leaves none.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable, Iterable, Literal

from itb.backends.host import Host, NetnsHost
from itb.cc import ebpf, kernel
from itb.scenario.algorithms import ALGORITHMS, OURS_PREFIX, Algorithm
from itb.errors import CommandFailed, PreflightError

Source = Literal["built-in", "module", "ours"]
Prefer = Literal["kernel", "ours"]
Progress = Callable[[str], None]


def _noop(msg: str) -> None:
    pass


def local_host() -> Host:
    return NetnsHost("local", None)  # struct_ops and modules are machine-wide


@dataclass(frozen=True)
class Resolved:
    """Which implementation of a canonical algorithm a run uses."""

    name: str
    kernel_name: str      # what setsockopt(TCP_CONGESTION) gets
    source: Source
    loaded_now: bool      # this call registered / modprobed it

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Status:
    name: str
    kernel_name: str | None
    source: Source | None
    usable: bool          # a socket can select it right now
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
        elif alg.kernel_name and kernel.module_exists(host, alg.module):
            out.append(Status(alg.name, alg.kernel_name, "module", False,
                              f"modprobe {alg.module} on first use"))
        elif alg.ours:
            ours = alg.ours_name
            if ours in avail:
                out.append(Status(alg.name, ours, "ours", True, "eBPF, registered"))
            elif ebpf.object_path(alg.name).is_file():
                out.append(Status(alg.name, ours, "ours", False, "eBPF, registered on first use"))
            else:
                out.append(Status(alg.name, ours, "ours", False,
                                  "eBPF, not built: run `make bpf`"))
        else:
            out.append(Status(alg.name, alg.kernel_name, None, False, "not on this kernel"))
    return out


def resolve_one(name: str, host: Host, prefer: Prefer = "kernel",
                progress: Progress = _noop) -> Resolved:
    alg = _algorithm(name)
    avail = set(kernel.available())
    if prefer == "kernel" and alg.kernel_name:
        src: Source = "module" if alg.module in kernel.loaded_modules() else "built-in"
        if alg.kernel_name in avail:
            return Resolved(name, alg.kernel_name, src, False)
        if kernel.module_exists(host, alg.module):
            progress(f"loading kernel module {alg.module}")
            kernel.load_module(host, alg.module)
            return Resolved(name, alg.kernel_name, "module", True)
    if not alg.ours:
        raise PreflightError(
            f"congestion control {name!r} is not available on this kernel (available: "
            f"{', '.join(sorted(avail))}) and ITB has no eBPF implementation of it")
    ours = alg.ours_name
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


def ensure(names: Iterable[str], host: Host | None = None, prefer: Prefer = "kernel",
           progress: Progress = _noop) -> list[Resolved]:
    """Makes every named algorithm selectable; on failure undoes what it loaded."""
    host = host or local_host()
    done: list[Resolved] = []
    try:
        for name in dict.fromkeys(names):
            done.append(resolve_one(name, host, prefer, progress))
    except BaseException:
        release(done, host)
        raise
    return done


def release(resolved: Iterable[Resolved], host: Host | None = None,
            progress: Progress = _noop) -> list[str]:
    """Unregisters the eBPF algorithms these calls registered; returns their names.
    Kernel modules stay loaded: other users of the machine may rely on them."""
    host = host or local_host()
    gone = []
    for r in resolved:
        if r.source == "ours" and r.loaded_now:
            progress(f"unregistering {r.kernel_name}")
            try:
                ebpf.unregister(host, r.kernel_name)
                gone.append(r.kernel_name)
            except CommandFailed:
                if r.kernel_name in ebpf.registered(host):
                    raise
    return gone


def unload(names: Iterable[str], host: Host | None = None) -> list[str]:
    """Unregisters ours by canonical name; returns the ones that were registered."""
    host = host or local_host()
    regs = ebpf.registered(host)
    gone = []
    for name in names:
        alg = _algorithm(name)
        if not alg.ours:
            raise PreflightError(f"{name!r} is the kernel's, not ITB's; `itb cc unload` "
                                 "only unregisters ITB's eBPF congestion controls")
        if alg.ours_name in regs:
            ebpf.unregister(host, alg.ours_name)
            gone.append(alg.ours_name)
    return gone


def clean(host: Host | None = None, progress: Progress = _noop) -> list[str]:
    """Unregisters every struct_ops congestion control of ours (name `itb_*`)."""
    host = host or local_host()
    try:
        regs = ebpf.registered(host)
    except PreflightError:  # no bpftool: nothing of ours can be registered
        return []
    gone = []
    for name in sorted(regs):
        if name.startswith(OURS_PREFIX):
            progress(f"unregistering {name}")
            ebpf.unregister(host, name)
            gone.append(name)
    return gone
