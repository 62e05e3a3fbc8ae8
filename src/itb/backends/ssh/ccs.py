"""Congestion controls on SSH hosts: the host kernel's own (built in, or its `tcp_<name>`
module, loaded if present), else ITB's eBPF implementation registered there with
bpftool (struct_ops), recorded in the host's state first and unregistered on restore.

One kernel name per algorithm for the whole testbed (the programs are given one name):
the kernel's when every end host has it, else ITB's (`itb_<name>`), registered on each
host that lacks it — once per kernel: hosts that share a kernel (the lab) see one
registration, and only the host that made it owns it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from itb.backends.ssh.hosts import parallel
from itb.errors import BackendError, PreflightError
from itb.scenario.experiment.algorithms import ALGORITHMS

AVAILABLE = "net.ipv4.tcp_available_congestion_control"
KERNEL_BTF = "/sys/kernel/btf/vmlinux"


@dataclass
class Plan:
    names: dict[str, str] = field(default_factory=dict)  # canonical → kernel name
    source: dict[str, str] = field(default_factory=dict)  # canonical → kernel | ours
    register: dict[str, list[str]] = field(default_factory=dict)  # host → canonicals


def available(r) -> list[str]:
    return r.run(["sysctl", "-n", AVAILABLE]).stdout.split()


def plan(
    remotes: list, canonical: list[str], ebpf_allowed: Callable[[str], bool] = lambda h: True
) -> Plan:
    """What each end host offers, and what must be registered where (`PreflightError`
    naming the host when an algorithm can be had neither way; `ebpf_allowed(host)`:
    the inventory's `ebpf` field)."""
    out = Plan()

    def offered(r) -> list[str]:
        avail = available(r)
        lacking = [
            ALGORITHMS[n].module
            for n in canonical
            if ALGORITHMS[n].kernel_name and ALGORITHMS[n].kernel_name not in avail
        ]
        for module in lacking:
            r.run(["modprobe", module], check=False)  # absent: no harm
        return available(r) if lacking else avail

    offers = dict(zip([r.name for r in remotes], parallel(offered, remotes)))
    for name in canonical:
        alg = ALGORITHMS[name]
        if alg.kernel_name and all(alg.kernel_name in o for o in offers.values()):
            out.names[name], out.source[name] = alg.kernel_name, "kernel"
            continue
        lacking = sorted(h for h, o in offers.items() if alg.kernel_name not in o)
        refused = [h for h in lacking if not ebpf_allowed(h)]
        ours = alg.ours_name
        if ours is None or refused:
            host = (refused or lacking)[0]
            why = (
                "ITB has no eBPF implementation of it"
                if ours is None
                else "field ebpf: false forbids registering ITB's eBPF implementation there"
            )
            raise PreflightError(
                f"host {host}: congestion control {name} is not available in its kernel "
                f"(it has: {' '.join(offers[host])}; no module {alg.module}) and {why}"
            )
        out.names[name], out.source[name] = ours, "ours"
        for host, o in offers.items():
            if ours not in o:
                out.register.setdefault(host, []).append(name)
    by_name = {r.name: r for r in remotes}
    for host in out.register:
        r = by_name[host]
        missing = r.run(
            [
                "sh",
                "-c",
                'command -v bpftool >/dev/null || echo bpftool; test -e "$1" || echo "$1"',
                "sh",
                KERNEL_BTF,
            ],
            check=False,
        ).stdout.split()
        if missing:
            raise PreflightError(
                f"host {host}: ITB's eBPF {', '.join(out.register[host])} needs "
                f"{' and '.join(missing)} there (its kernel lacks "
                f"{', '.join(ALGORITHMS[n].kernel_name or n for n in out.register[host])})"
            )
    return out


def register(
    r,
    names: list[str],
    obj: Callable[[str], Path],
    record: Callable[[str], None],
    forget: Callable[[str], None],
    upload: Callable,
) -> None:
    """Registers ITB's eBPF `names` on host `r` (each recorded before it is registered)."""
    for name in names:
        ours = ALGORITHMS[name].ours_name
        if ours is None:  # (`plan` registers only ITB's own)
            raise PreflightError(f"congestion control {name}: ITB has no eBPF implementation of it")
        if ours in available(r):  # a host sharing this kernel did it already
            continue
        path = obj(name)
        if not path.is_file():
            raise PreflightError(f"{path} is not built: run `make bpf` (part of `make setup`)")
        record(ours)
        upload(r, path, f"bin/{name}.bpf.o")
        res = r.run(["bpftool", "struct_ops", "register", f"{r.dir}/bin/{name}.bpf.o"], check=False)
        if ours not in available(r):
            forget(ours)
            lines = (res.stderr or res.stdout).strip().splitlines()
            raise BackendError(
                f"host {r.name}: registering ITB's eBPF {name} failed: "
                f"{lines[-1] if lines else 'bpftool said nothing'}"
            )
        if res.returncode != 0:  # registered meanwhile by a host of the same kernel
            forget(ours)


def unregister(r, kernel_names: list[str]) -> None:
    for name in kernel_names:
        r.run(["bpftool", "struct_ops", "unregister", "name", name], check=False)
