"""Host inventory: what of the machine and its configuration shapes the results."""

from __future__ import annotations

import os
import platform
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NotRequired, TypedDict

from itb.backends.host import CommandRunner, Host, NetnsHost

HOST_SYSCTLS = (
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.tcp_available_congestion_control",
    "net.ipv4.tcp_no_metrics_save",
)
ROOT_SYSCTLS = ("net.core.rmem_max", "net.core.wmem_max", "net.core.netdev_max_backlog")
OFFLOADS = ("tcp-segmentation-offload", "generic-segmentation-offload", "generic-receive-offload")


class CpuFacts(TypedDict):
    model: str
    cores: int | None
    kernel: str | None
    machine: str | None


class HostFacts(TypedDict):
    """A host's CPU, kernel and NIC (`host_facts`): meta.json's `facts` and the
    calibration table's rows."""

    cpu: CpuFacts
    # ifname, ethtool's driver, version, firmware-version and bus-info (those it shows),
    # mtu, speed_mbps, offloads
    nic: NotRequired[dict[str, object]]
    congestion_controls: list[str]


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity; the machine's count where the
    platform has none): how many simulations, or figures, run side by side."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def cpu() -> CpuFacts:
    model = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    return {
        "model": model,
        "cores": os.cpu_count(),
        "kernel": platform.release(),
        "machine": platform.machine(),
    }


def sysctls(host: Host, keys: Iterable[str]) -> dict[str, str | None]:
    """Each sysctl's value (None: it could not be read), in one command (on an SSH host a
    command is a round trip): `sysctl -e` names each value it prints and skips the keys
    it does not know."""
    keys = list(keys)
    out: dict[str, str | None] = dict.fromkeys(keys)
    if not keys:
        return out
    res = host.run(["sysctl", "-e", *keys], check=False)
    for line in res.stdout.splitlines():
        name, sep, value = line.partition(" = ")
        if sep and name.strip() in out:
            out[name.strip()] = " ".join(value.split())
    return out


def offloads(host: Host, ifname: str) -> dict[str, str]:
    return _offloads(host.run(["ethtool", "-k", ifname], check=False).stdout)


def _offloads(text: str) -> dict[str, str]:
    found = {}
    for line in text.splitlines():
        m = re.match(r"\s*([a-z-]+): (on|off)", line)
        if m and m.group(1) in OFFLOADS:
            found[m.group(1)] = m.group(2)
    return found


def qdiscs(host: Host) -> list[str]:
    res = host.run(["tc", "qdisc", "show"], check=False)
    return [line.strip() for line in res.stdout.splitlines() if line.strip()]


def mtu(host: Host, ifname: str) -> int | None:
    res = host.run(["ip", "-o", "link", "show", ifname], check=False)
    m = re.search(r"mtu (\d+)", res.stdout)
    return int(m.group(1)) if m else None


# One command for all of a host's facts (over SSH a command is a round trip): each
# section's output after a line "@@name"; the interface is $1 ("" for none).
_FACTS = (
    'for s in cpuinfo:"cat /proc/cpuinfo" nproc:nproc kernel:"uname -r" '
    'machine:"uname -m" cc:"sysctl -n net.ipv4.tcp_available_congestion_control"; '
    'do echo "@@${s%%:*}"; sh -c "${s#*:}" 2>/dev/null; done; '
    'if [ -n "$1" ]; then '
    'echo @@driver; ethtool -i "$1" 2>/dev/null; '
    'echo @@speed; cat "/sys/class/net/$1/speed" 2>/dev/null; '
    'echo @@link; ip -o link show "$1" 2>/dev/null; '
    'echo @@offloads; ethtool -k "$1" 2>/dev/null; fi'
)


def _sections(text: str) -> dict[str, str]:
    out: dict[str, list[str]] = {}
    name = None
    for line in text.splitlines():
        if line.startswith("@@"):
            name = line[2:].strip()
            out[name] = []
        elif name is not None:
            out[name].append(line)
    return {k: "\n".join(v).strip() for k, v in out.items()}


def host_facts(host: CommandRunner, ifname: str | None) -> HostFacts:
    """CPU, kernel and NIC of a host reached through its `Host` (an SSH host: not this
    machine): the documents' calibration table, one row. One command."""
    got = _sections(host.run(["sh", "-c", _FACTS, "sh", ifname or ""], check=False).stdout)
    model = "unknown"
    for line in got.get("cpuinfo", "").splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    nproc = got.get("nproc", "")
    cpu_facts: CpuFacts = {
        "model": model,
        "cores": int(nproc) if nproc.isdigit() else None,
        "kernel": got.get("kernel") or None,
        "machine": got.get("machine") or None,
    }
    ccs = got.get("cc", "").split()
    if not ifname:
        return {"cpu": cpu_facts, "congestion_controls": ccs}
    driver: dict[str, str] = {}
    for line in got.get("driver", "").splitlines():
        k, _, v = line.partition(":")
        if k.strip() in ("driver", "version", "firmware-version", "bus-info"):
            driver[k.strip()] = v.strip()
    speed = got.get("speed", "")
    m = re.search(r"mtu (\d+)", got.get("link", ""))
    nic: dict[str, object] = {
        "ifname": ifname,
        **driver,
        "mtu": int(m.group(1)) if m else None,
        "speed_mbps": int(speed) if speed.lstrip("-").isdigit() else None,
        "offloads": _offloads(got.get("offloads", "")),
    }
    return {"cpu": cpu_facts, "nic": nic, "congestion_controls": ccs}


def inventory(src: Host, others: Sequence[Host], ifname: str, local: bool = True) -> dict:
    root: Host = NetnsHost("root", None) if local else src
    return {
        "cpu": cpu() if local else host_facts(src, None)["cpu"],
        "host": src.name,
        "sysctls": sysctls(src, HOST_SYSCTLS),
        "root_sysctls": sysctls(root, ROOT_SYSCTLS),
        "offloads": offloads(src, ifname),
        "mtu": mtu(src, ifname),
        "qdiscs": {h.name: qdiscs(h) for h in [src, *others]},
    }


def tcp_buffer_max(values: str | None) -> int | None:
    """Third field of tcp_rmem / tcp_wmem."""
    try:
        return int(values.split()[2]) if values else None
    except (IndexError, ValueError):
        return None
