"""Typed configuration steps. Each renders as the argv a person would type (the plan,
eWAN's "generated scripts", and what a remote backend runs) and applies itself to a
local namespace through netlink (pyroute2), so both forms come from one definition.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from pyroute2 import NetNS, netns

IFA_F_NODAD = 0x02  # no duplicate address detection: addresses are usable at once


class Netlink:
    """Caches one netlink handle per namespace while a plan is applied."""

    def __init__(self) -> None:
        self._handles: dict[str, NetNS] = {}

    def __call__(self, ns: str) -> NetNS:
        if ns not in self._handles:
            self._handles[ns] = NetNS(ns)
        return self._handles[ns]

    def index(self, ns: str, ifname: str) -> int:
        found = self(ns).link_lookup(ifname=ifname)
        if not found:
            raise LookupError(f"no interface {ifname} in {ns}")
        return found[0]

    def close(self) -> None:
        for h in self._handles.values():
            h.close()
        self._handles.clear()


@dataclass(frozen=True)
class Action:
    node: str  # the node (or emulator) whose script this step belongs to
    ns: str

    def argv(self) -> list[str]:
        raise NotImplementedError

    def apply(self, nl: Netlink, runner) -> None:
        """Default: run the argv in the root namespace (for steps netlink does not cover)."""
        runner(self.argv())


@dataclass(frozen=True)
class CreateNetns(Action):
    def argv(self):
        return ["ip", "netns", "add", self.ns]

    def apply(self, nl, runner):
        netns.create(self.ns)
        lo = nl.index(self.ns, "lo")
        nl(self.ns).link("set", index=lo, state="up")


@dataclass(frozen=True)
class AddVeth(Action):
    ifname: str
    peer_ns: str
    peer_ifname: str
    mtu: int

    def argv(self):
        return [
            "ip",
            "-n",
            self.ns,
            "link",
            "add",
            self.ifname,
            "mtu",
            str(self.mtu),
            "type",
            "veth",
            "peer",
            "name",
            self.peer_ifname,
            "netns",
            self.peer_ns,
            "mtu",
            str(self.mtu),
        ]

    def apply(self, nl, runner):
        nl(self.ns).link(
            "add",
            ifname=self.ifname,
            kind="veth",
            mtu=self.mtu,
            peer={"ifname": self.peer_ifname, "net_ns_fd": self.peer_ns, "mtu": self.mtu},
        )


@dataclass(frozen=True)
class LinkUp(Action):
    ifname: str

    def argv(self):
        return ["ip", "-n", self.ns, "link", "set", self.ifname, "up"]

    def apply(self, nl, runner):
        nl(self.ns).link("set", index=nl.index(self.ns, self.ifname), state="up")


@dataclass(frozen=True)
class AddAddress(Action):
    ifname: str
    cidr: str

    def argv(self):
        extra = ["nodad"] if ":" in self.cidr else []
        return ["ip", "-n", self.ns, "addr", "add", self.cidr, "dev", self.ifname, *extra]

    def apply(self, nl, runner):
        iface = ipaddress.ip_interface(self.cidr)
        kw = {"flags": IFA_F_NODAD} if iface.version == 6 else {}
        nl(self.ns).addr(
            "add",
            index=nl.index(self.ns, self.ifname),
            address=str(iface.ip),
            prefixlen=iface.network.prefixlen,
            **kw,
        )


@dataclass(frozen=True)
class AddRoute(Action):
    dst: str  # CIDR or "default"
    via: str
    family: int  # 4 or 6
    quickack: bool = False  # RTAX_QUICKACK: TCP on this route ACKs every segment at once
    # RTAX_INITRWND: the receive window (segments) TCP on this route advertises at first
    initrwnd: int | None = None

    def metrics(self) -> dict[str, int]:
        out = {"quickack": 1} if self.quickack else {}
        if self.initrwnd:
            out["initrwnd"] = self.initrwnd
        return out

    def argv(self):
        flag = ["-6"] if self.family == 6 else []
        extra = [str(x) for kv in self.metrics().items() for x in kv]
        return ["ip", "-n", self.ns, *flag, "route", "add", self.dst, "via", self.via, *extra]

    def apply(self, nl, runner):
        dst = self.dst if self.dst != "default" else ("::/0" if self.family == 6 else "0.0.0.0/0")
        kw = {"metrics": self.metrics()} if self.metrics() else {}
        nl(self.ns).route(
            "add", dst=dst, gateway=self.via, family=10 if self.family == 6 else 2, **kw
        )


@dataclass(frozen=True)
class NoSegmentationOffload(Action):
    """TSO and GSO off: TCP hands the interface one MTU-sized segment per packet."""

    ifname: str

    def argv(self):
        return [
            "ip",
            "netns",
            "exec",
            self.ns,
            "ethtool",
            "-K",
            self.ifname,
            "tso",
            "off",
            "gso",
            "off",
        ]


@dataclass(frozen=True)
class Sysctl(Action):
    key: str
    value: str

    def argv(self):
        return ["ip", "netns", "exec", self.ns, "sysctl", "-qw", f"{self.key}={self.value}"]

    def apply(self, nl, runner):
        # procps' sysctl exits 0 even when the kernel refuses the value: read it back.
        runner(self.argv())
        got = runner(["ip", "netns", "exec", self.ns, "sysctl", "-n", self.key]).stdout
        if got.split() != self.value.split():
            raise RuntimeError(
                f"{self.key} is {' '.join(got.split())!r} after setting "
                f"{self.value!r} (read-only in a namespace?)"
            )


def apply_sysctls(steps: list[Sysctl], runner) -> None:
    """Consecutive Sysctl steps of one namespace as one write and one read-back (two
    programs, not two per key: ~5 ms each, a second of a dumbbell's build); read back
    short or different, each step again alone, which names the key refused. `runner`
    takes an argv and `check` (a Host's run)."""
    ns = steps[0].ns
    if len(steps) > 1 and all(st.ns == ns for st in steps):
        keys = [f"{st.key}={st.value}" for st in steps]
        runner(["ip", "netns", "exec", ns, "sysctl", "-qw", *keys], check=False)
        got = runner(
            ["ip", "netns", "exec", ns, "sysctl", "-n", *(st.key for st in steps)], check=False
        )
        lines = got.stdout.splitlines()
        if len(lines) == len(steps) and all(
            line.split() == st.value.split() for line, st in zip(lines, steps, strict=True)
        ):
            return
    for st in steps:
        st.apply(None, runner)


@dataclass(frozen=True)
class ShapeEgress(Action):
    """Access-link capacity: a token bucket (tbf) on the interface's egress."""

    ifname: str
    rate_bps: int
    burst_bytes: int
    limit_bytes: int

    def argv(self):
        return [
            "tc",
            "-n",
            self.ns,
            "qdisc",
            "replace",
            "dev",
            self.ifname,
            "root",
            "tbf",
            "rate",
            f"{self.rate_bps}bit",
            "burst",
            str(self.burst_bytes),
            "limit",
            str(self.limit_bytes),
        ]

    def apply(self, nl, runner):
        nl(self.ns).tc(
            "replace",
            "tbf",
            nl.index(self.ns, self.ifname),
            rate=f"{self.rate_bps}bit",
            burst=self.burst_bytes,
            limit=self.limit_bytes,
        )


@dataclass(frozen=True)
class StartEmulator(Action):
    """Starts the link emulator between the two interfaces of an emulator namespace."""

    binary: str
    config_path: Path
    config: dict  # written to config_path before start (shown by the plan)

    def command(self) -> list[str]:
        return [self.binary, "--config", str(self.config_path)]

    def argv(self):
        return ["ip", "netns", "exec", self.ns, *self.command()]

    def apply(self, nl, runner):
        raise RuntimeError("emulators are started by the backend, not as a plain step")

    def __hash__(self):  # config is a dict
        return hash((self.node, self.ns, str(self.config_path)))
