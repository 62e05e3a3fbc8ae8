"""Host inventory: what of the machine and its configuration shapes the results."""

from __future__ import annotations

import os
import platform
import re
from pathlib import Path

from itb.backends.host import NetnsHost

HOST_SYSCTLS = ("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_congestion_control",
                "net.ipv4.tcp_available_congestion_control", "net.ipv4.tcp_no_metrics_save")
ROOT_SYSCTLS = ("net.core.rmem_max", "net.core.wmem_max", "net.core.netdev_max_backlog")
OFFLOADS = ("tcp-segmentation-offload", "generic-segmentation-offload",
            "generic-receive-offload")


def cpu() -> dict:
    model = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    return {"model": model, "cores": os.cpu_count(), "kernel": platform.release(),
            "machine": platform.machine()}


def sysctls(host: NetnsHost, keys) -> dict[str, str]:
    out = {}
    for k in keys:
        res = host.run(["sysctl", "-n", k], check=False)
        out[k] = " ".join(res.stdout.split()) if res.returncode == 0 else None
    return out


def offloads(host: NetnsHost, ifname: str) -> dict[str, str]:
    res = host.run(["ethtool", "-k", ifname], check=False)
    found = {}
    for line in res.stdout.splitlines():
        m = re.match(r"\s*([a-z-]+): (on|off)", line)
        if m and m.group(1) in OFFLOADS:
            found[m.group(1)] = m.group(2)
    return found


def qdiscs(host: NetnsHost) -> list[str]:
    res = host.run(["tc", "qdisc", "show"], check=False)
    return [line.strip() for line in res.stdout.splitlines() if line.strip()]


def mtu(host: NetnsHost, ifname: str) -> int | None:
    res = host.run(["ip", "-o", "link", "show", ifname], check=False)
    m = re.search(r"mtu (\d+)", res.stdout)
    return int(m.group(1)) if m else None


def host_facts(host, ifname: str | None) -> dict:
    """CPU, kernel and NIC of a host reached through its `Host` (an SSH host: not this
    machine): the documents' calibration table, one row."""
    def out(argv) -> str:
        res = host.run(argv, check=False)
        return res.stdout.strip() if res.returncode == 0 else ""

    model = "unknown"
    for line in out(["cat", "/proc/cpuinfo"]).splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    facts = {"cpu": {"model": model, "cores": int(out(["nproc"]) or 0) or None,
                     "kernel": out(["uname", "-r"]) or None, "machine": out(["uname", "-m"]) or None}}
    if ifname:
        driver = {}
        for line in out(["ethtool", "-i", ifname]).splitlines():
            k, _, v = line.partition(":")
            if k.strip() in ("driver", "version", "firmware-version", "bus-info"):
                driver[k.strip()] = v.strip()
        speed = out(["cat", f"/sys/class/net/{ifname}/speed"])
        facts["nic"] = {"ifname": ifname, **driver, "mtu": mtu(host, ifname),
                        "speed_mbps": int(speed) if speed.lstrip("-").isdigit() else None,
                        "offloads": offloads(host, ifname)}
    facts["congestion_controls"] = out(
        ["sysctl", "-n", "net.ipv4.tcp_available_congestion_control"]).split()
    return facts


def inventory(src: NetnsHost, others: list[NetnsHost], ifname: str, local: bool = True) -> dict:
    root = NetnsHost("root", None) if local else src
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
