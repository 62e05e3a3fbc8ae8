"""The lab's hosts (`itb lab`): which there are (`hosts_for`: the emulator hosts, then the
end hosts), the L2 segments they sit on and the wires joining them (a dumbbell's left
and right; a chain's s0 … sN in a row; a star's b1 … bN around a hub), their namespaces
and control addresses (`LabHost`), their data plane, and the two inventories `itb lab
up` writes to describe them: ITB's (inventory.toml) and EnOSlib's static provider
(enoslib-static.toml). Building and removing the lab is itb.backends.ssh.lab's."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import tomli_w

from itb.emulation import naming

DATA_NET = "198.19.0"  # /24: the data plane (every end host, the segments joined at L2)
CONTROL_NET = "198.19.1"  # /30 per host: the engine's side .4k+1, the host's .4k+2
MAX_HOSTS = 60
TOPOLOGIES = ("dumbbell", "chain", "star")
MAX_LINKS = 8


@dataclass(frozen=True)
class LabHost:
    index: int  # control /30 number: emulator hosts first (0, …), end hosts from 1 after
    name: str
    role: str
    net: str = CONTROL_NET  # the control /24 (first three octets)
    segment: str = ""  # an end host's L2 segment
    data_index: int = 0  # an end host's data address: DATA_NET.<data_index>
    # an emulator host's wires: (its two interfaces, the two segments they face)
    wires: tuple[tuple[tuple[str, str], tuple[str, str]], ...] = ()

    @property
    def ns(self) -> str:
        return f"{naming.prefix()}lab-{self.name}"

    @property
    def root_if(self) -> str:
        return f"{naming.prefix()}lc{self.index}"[:15]

    @property
    def control_ip(self) -> str:
        return f"{self.net}.{4 * self.index + 2}"

    @property
    def root_ip(self) -> str:
        return f"{self.net}.{4 * self.index + 1}"


def segments_for(topology: str, links: int) -> tuple[list[str], list[tuple[str, str]]]:
    """The segments end hosts sit on, and the pairs of segments each wire joins."""
    if topology == "dumbbell":
        return ["left", "right"], [("left", "right")]
    if topology == "chain":
        segs = [f"s{i}" for i in range(links + 1)]
        return segs, list(zip(segs, segs[1:]))
    leaves = [f"b{i + 1}" for i in range(links)]  # star: the first leaf → hub, hub → others
    return leaves, [(leaves[0], "hub")] + [("hub", b) for b in leaves[1:]]


def hosts_for(
    n: int,
    net: str = CONTROL_NET,
    emulator: bool = True,
    topology: str = "dumbbell",
    links: int = 1,
    emulators: int = 1,
) -> list[LabHost]:
    """Emulator hosts (`em`, or em1 … emK sharing the wires in turn), then n end hosts:
    a dumbbell's first half left and the rest right; a chain's or star's dealt over its
    segments in turn (h1 on the first, h2 on the second, …)."""
    segs, joins = segments_for(topology, links)
    out: list[LabHost] = []
    if emulator:
        names = ["em"] if emulators == 1 else [f"em{k + 1}" for k in range(emulators)]
        for k, name in enumerate(names):
            mine = tuple(
                (("ea", "eb") if topology == "dumbbell" else (f"a{i + 1}", f"b{i + 1}"), join)
                for i, join in enumerate(joins)
                if i % len(names) == k
            )
            out.append(LabHost(k, name, "emulator", net, wires=mine))
    first = len(out)
    left = (n + 1) // 2
    for i in range(1, n + 1):
        if topology == "dumbbell":
            seg = "left" if i <= left else "right"
            role = seg
        else:
            seg, role = segs[(i - 1) % len(segs)], "host"
        out.append(LabHost(first + i - 1 + (0 if emulator else 1), f"h{i}", role, net, seg, i))
    return out


def _data_plane(d: Path, h: LabHost) -> dict:
    """A lab host's fields besides how to reach it (both inventories give them)."""
    # the lab's hosts share this machine's file system: one dir each
    out: dict = {"remote_dir": str(d / h.name / "fs")}
    if h.role == "emulator":
        if len(h.wires) == 1 and h.wires[0][1] == ("left", "right"):
            return out | {"emulator_ifaces": list(h.wires[0][0])}
        return out | {"wire": [{"ifaces": list(i), "between": list(b)} for i, b in h.wires]}
    plane = {"data_iface": "eth1", "data_addr": f"{DATA_NET}.{h.data_index}/24"}
    return out | plane | ({"segment": h.segment} if h.role == "host" else {})


def inventory(d: Path, hosts: list[LabHost]) -> str:
    data: dict = {
        "ssh": {
            "user": "root",
            "key": str(d / "id_ed25519"),
            "known_hosts": str(d / "known_hosts"),
            "lab": str(d),
        },
        "host": [
            {
                "name": h.name,
                "address": h.control_ip,
                "port": 22,
                "role": h.role,
                **_data_plane(d, h),
            }
            for h in hosts
        ],
    }
    return (
        "# Written by `itb lab up`: hosts are network namespaces of this machine, each\n"
        "# with its own sshd; see docs/ssh.md.\n" + tomli_w.dumps(data)
    )


def static_provider(d: Path, hosts: list[LabHost]) -> str:
    """The same hosts as an EnOSlib static-provider configuration: ITB reserves them
    through EnOSlib (a static reservation only lists them) and releases them after."""
    machines = [
        {
            "roles": [h.role],
            "address": h.control_ip,
            "alias": h.name,
            "user": "root",
            "keyfile": str(d / "id_ed25519"),
            "port": 22,
            "extra": _data_plane(d, h),
        }
        for h in hosts
    ]
    data = {
        "ssh": {"known_hosts": str(d / "known_hosts"), "key": str(d / "id_ed25519"), "lab": str(d)},
        "provider": {
            "kind": "static",
            "config": {
                "resources": {
                    "machines": machines,
                    "networks": [
                        {
                            "roles": ["data"],
                            "cidr": f"{DATA_NET}.0/24",
                            "start": f"{DATA_NET}.1",
                            "end": f"{DATA_NET}.{MAX_HOSTS}",
                            "gateway": f"{DATA_NET}.254",
                            "dns": f"{DATA_NET}.254",
                        }
                    ],
                }
            },
        },
    }
    return (
        "# Written by `itb lab up`: the lab's hosts through EnOSlib's static provider\n"
        "# (docs/enoslib.md).\n" + tomli_w.dumps(data)
    )
