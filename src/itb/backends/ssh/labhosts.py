"""The lab's hosts (`itb lab`): which there are (`hosts_for`: the emulator host, then the
left and right ones), their namespaces and control addresses (`LabHost`), their data
plane, and the two inventories `itb lab up` writes to describe them: ITB's
(inventory.toml) and EnOSlib's static provider (enoslib-static.toml). Building and
removing the lab is itb.backends.ssh.lab's."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import tomli_w

from itb.emulation import naming

DATA_NET = "198.19.0"  # /24: the data plane (left and right hosts on one L2 segment)
CONTROL_NET = "198.19.1"  # /30 per host: the engine's side .4k+1, the host's .4k+2
MAX_HOSTS = 60


@dataclass(frozen=True)
class LabHost:
    index: int  # 0: the emulator host
    name: str
    role: str
    net: str = CONTROL_NET  # the control /24 (first three octets)

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


def hosts_for(n: int, net: str = CONTROL_NET, emulator: bool = True) -> list[LabHost]:
    left = (n + 1) // 2
    out = [LabHost(0, "em", "emulator", net)] if emulator else []
    out += [LabHost(i, f"h{i}", "left" if i <= left else "right", net) for i in range(1, n + 1)]
    return out


def _data_plane(d: Path, h: LabHost) -> dict:
    """A lab host's fields besides how to reach it (both inventories give them)."""
    # the lab's hosts share this machine's file system: one dir each
    out: dict = {"remote_dir": str(d / h.name / "fs")}
    if h.role == "emulator":
        return out | {"emulator_ifaces": ["ea", "eb"]}
    return out | {"data_iface": "eth1", "data_addr": f"{DATA_NET}.{h.index}/24"}


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
