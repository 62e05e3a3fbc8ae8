"""The inventory of an SSH testbed: which machines, how to reach them, what each plays.

A TOML file (docs/ssh.md):

    [ssh]                        # defaults for every host
    user = "root"
    key = "id_ed25519"           # private key; relative paths are from the file's directory
    known_hosts = "known_hosts"  # host keys accepted so far (a first contact is refused)
    remote_dir = "/var/tmp/itb"  # where ITB puts its programs and logs on each host

    [[host]]
    name = "h1"
    address = "192.0.2.11"       # control: where its sshd listens
    port = 22
    role = "left"                # left | right (end hosts) | emulator
    data_iface = "eth1"          # data plane: the interface and address experiments use
    data_addr = "10.0.0.1/24"
    nodes = ["l1"]               # optional: the scenario hosts it plays (default: by side)

    [[host]]
    name = "em"
    role = "emulator"            # runs linkem as an L2 wire between two interfaces
    emulator_ifaces = ["eth1", "eth2"]   # faces left, faces right

Beyond a dumbbell, hosts sit on named L2 segments (`segment = "s1"`, role "host"; a
left or right host's segment is its role) and emulator hosts list their wires, each
joining two segments through two of its interfaces (`[[host.wire]]`: `ifaces`,
`between`, optionally the scenario `link` it runs); `emulator_ifaces` is one wire between
"left" and "right". The wires must join every segment into one tree (a loop would be an
L2 loop). itb.backends.ssh.segments maps a scenario's routers onto the segments.

Errors name the file, the field and the reason (`ScenarioError`).
"""

from __future__ import annotations

import ipaddress
import posixpath
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from itb import files
from itb.errors import ScenarioError

ROLES = ("left", "right", "host", "emulator")
# remote_dir may not be one of these (ITB's directory would sit among the system's
# files), nor lie under the first group at all
SYSTEM_TREES = (
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/proc",
    "/sbin",
    "/sys",
    "/usr",
)
SYSTEM_DIRS = (
    "/",
    "/home",
    "/media",
    "/mnt",
    "/opt",
    "/root",
    "/run",
    "/srv",
    "/tmp",
    "/var",
    "/var/cache",
    "/var/lib",
    "/var/log",
    "/var/mail",
    "/var/spool",
    "/var/tmp",
    "/var/run",
    "/var/opt",
    "/var/local",
)


def check_remote_dir(v: str | None) -> str | None:
    """An absolute, normalised path, neither a system directory nor under /etc, /usr, …
    (ValueError: why). ITB works in `<remote_dir>/<prefix>`, which it creates."""
    if v is None:
        return v
    if not v.startswith("/"):
        raise ValueError(f"{v!r} must be an absolute path (e.g. /var/tmp/itb)")
    if any(ord(c) < 32 or c == "\x7f" for c in v):
        raise ValueError(f"{v!r} holds a control character")
    norm = posixpath.normpath(v)
    if norm.startswith("//"):
        norm = "/" + norm.lstrip("/")
    if norm != v:
        raise ValueError(
            f"{v!r} is not normalised (no '..', '.', '//' nor trailing '/'): "
            f"write {norm!r} if that is the directory meant"
        )
    if v in SYSTEM_DIRS or v in SYSTEM_TREES or any(v.startswith(t + "/") for t in SYSTEM_TREES):
        raise ValueError(
            f"{v!r} is a system directory or lies in one: give ITB a directory "
            "of its own, such as /var/tmp/itb"
        )
    return v


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SshDefaults(_Strict):
    user: str = "root"
    key: str | None = None
    known_hosts: str = "known_hosts"
    remote_dir: str = "/var/tmp/itb"
    connect_timeout_s: float = 10.0

    _remote_dir = field_validator("remote_dir")(classmethod(lambda cls, v: check_remote_dir(v)))
    # a congestion control the host kernel lacks may be ITB's eBPF, registered there
    # (false: such a CC is refused instead, e.g. where loading BPF is not allowed)
    ebpf: bool = True
    # written by `itb lab up`: the lab these hosts are; a run holds it meanwhile, and
    # `itb lab down` refuses (itb.backends.ssh.labhold)
    lab: str | None = None


class Wire(_Strict):
    """One emulated link of an emulator host: linkem between two of its interfaces, each
    on an L2 segment."""

    ifaces: tuple[str, str]  # facing between[0], facing between[1]
    between: tuple[str, str] = ("left", "right")  # the segments it joins
    link: str | None = None  # the scenario's emulated link it runs (default: in order)

    @field_validator("ifaces", "between")
    @classmethod
    def _two(cls, v: tuple[str, str]) -> tuple[str, str]:
        if v[0] == v[1]:
            raise ValueError(f"{list(v)}: a wire joins two different ones")
        return v


class InventoryHost(_Strict):
    name: str
    address: str
    port: int = 22
    user: str | None = None
    key: str | None = None
    role: Literal["left", "right", "host", "emulator"]
    segment: str | None = None  # the L2 segment of its data interface (left/right: the role)
    data_iface: str | None = None
    data_addr: str | None = None
    emulator_ifaces: tuple[str, str] | None = None
    wire: tuple[Wire, ...] | None = None  # [[host.wire]]: several links (instead of the above)
    nodes: tuple[str, ...] | None = None
    remote_dir: str | None = None  # default: [ssh].remote_dir
    ebpf: bool | None = None  # default: [ssh].ebpf
    # ITB adds data_addr to data_iface for the run (and removes it after); false: the
    # address must be there already (checked in preflight)
    add_address: bool = False

    _remote_dir = field_validator("remote_dir")(classmethod(lambda cls, v: check_remote_dir(v)))

    @field_validator("data_addr")
    @classmethod
    def _cidr(cls, v: str | None) -> str | None:
        if v is not None:
            iface = ipaddress.ip_interface(v)  # ValueError → a field error
            if iface.network.prefixlen == iface.max_prefixlen:
                raise ValueError(f"{v!r} needs its prefix length (e.g. 10.0.0.1/24)")
        return v

    @field_validator("port")
    @classmethod
    def _port(cls, v: int) -> int:
        if not 0 < v < 65536:
            raise ValueError("must be 1..65535")
        return v

    @property
    def iface(self) -> str | None:
        """Its data-plane interface (an emulator host's: its first wire's first)."""
        return self.data_iface or next(iter(self.wire_ifaces), None)

    @property
    def wires(self) -> tuple[Wire, ...]:
        """An emulator host's wires (`emulator_ifaces`: one, between left and right)."""
        if self.wire:
            return self.wire
        return (Wire(ifaces=self.emulator_ifaces),) if self.emulator_ifaces else ()

    @property
    def wire_ifaces(self) -> list[str]:
        """Every interface of its wires, in order."""
        return [i for w in self.wires for i in w.ifaces]

    @property
    def ifaces(self) -> list[str]:
        """Every data-plane interface it has: its wires' or its data_iface."""
        return self.wire_ifaces + ([self.data_iface] if self.data_iface else [])

    @property
    def ifaces_field(self) -> str:
        """The inventory field that names them (for messages)."""
        if self.role != "emulator":
            return "data_iface"
        return "wire" if self.wire else "emulator_ifaces"

    @property
    def seg(self) -> str | None:
        """The segment an end host is on."""
        if self.role == "emulator":
            return None
        return self.segment or (self.role if self.role in ("left", "right") else None)

    @property
    def ip(self) -> str:
        return str(ipaddress.ip_interface(self.data_addr).ip) if self.data_addr else ""


class Provider(_Strict):
    """A reservation through EnOSlib (itb.backends.ssh.enos)."""

    kind: Literal["static", "g5k", "chameleon", "vagrant"]
    config: dict = {}  # EnOSlib's configuration of that provider (+ data_networks)
    # freshly reserved machines have keys nobody has seen: accept them (said, never a
    # key that differs from a recorded one); false: they must be in known_hosts already
    accept_new_host_keys: bool = False


class Inventory(_Strict):
    ssh: SshDefaults = SshDefaults()
    host: tuple[InventoryHost, ...] = ()
    provider: Provider | None = None
    source: str | None = None  # the file it was read from (not in the file)

    @property
    def base(self) -> Path:
        return Path(self.source).parent if self.source else Path(".")

    def path(self, value: str) -> Path:
        p = Path(value).expanduser()
        return p if p.is_absolute() else self.base / p

    def user(self, h: InventoryHost) -> str:
        return h.user or self.ssh.user

    def key(self, h: InventoryHost) -> Path | None:
        k = h.key or self.ssh.key
        return None if k is None else self.path(k)

    def remote_dir(self, h: InventoryHost) -> str:
        """ITB's directory on the host, one per prefix."""
        from itb.emulation import naming

        return f"{(h.remote_dir or self.ssh.remote_dir).rstrip('/')}/{naming.prefix()}"

    def ebpf(self, h: InventoryHost) -> bool:
        return self.ssh.ebpf if h.ebpf is None else h.ebpf

    def known_hosts(self) -> Path:
        return self.path(self.ssh.known_hosts)

    def by_role(self, role: str) -> list[InventoryHost]:
        return [h for h in self.host if h.role == role]

    def emulator(self) -> InventoryHost | None:
        found = self.by_role("emulator")
        return found[0] if found else None

    def all_wires(self) -> list[tuple[str, Wire]]:
        """(emulator host, wire) of every wire, in the file's order."""
        return [(h.name, w) for h in self.by_role("emulator") for w in h.wires]

    def get(self, name: str) -> InventoryHost:
        for h in self.host:
            if h.name == name:
                return h
        raise KeyError(name)

    def data_plane(self, name: str) -> tuple[str, str]:
        """(data_iface, data_addr) of a left or right host (`from_dict` requires both)."""
        h = self.get(name)
        if h.data_iface is None or h.data_addr is None:
            f = "data_iface" if h.data_iface is None else "data_addr"
            raise ScenarioError(
                self.source, f"host {h.name!r}.{f}", f"a {h.role} host needs its data-plane {f}"
            )
        return h.data_iface, h.data_addr


def _field(loc: tuple, data: dict) -> str:
    """`host[2].data_addr` → `host "em".data_addr` when the host has a name."""
    parts = [str(p) for p in loc]
    if len(parts) >= 2 and parts[0] == "host" and parts[1].isdigit():
        hosts = data.get("host") or []
        i = int(parts[1])
        if i < len(hosts) and isinstance(hosts[i], dict) and "name" in hosts[i]:
            return f"host {hosts[i]['name']!r}" + "".join(f".{p}" for p in parts[2:])
        return f"host[{i}]" + "".join(f".{p}" for p in parts[2:])
    return ".".join(parts) or "(file)"


def _checks(inv: Inventory, source: str | None) -> None:
    """What involves several fields or hosts, each error naming its own field."""
    seen: set[str] = set()
    endpoints: dict[tuple[str, int], str] = {}
    for h in inv.host:
        if h.name in seen:
            raise ScenarioError(source, f"host {h.name!r}.name", "host names must be unique")
        seen.add(h.name)
        key = (h.address.lower(), h.port)
        if key in endpoints:
            raise ScenarioError(
                source,
                f"host {h.name!r}.address",
                f"{h.address}:{h.port} is "
                f"also host {endpoints[key]!r}'s: one machine listed twice "
                "(its ITB directory and state would be shared)",
            )
        endpoints[key] = h.name
        if h.role == "emulator" and not h.wires:
            raise ScenarioError(
                source,
                f"host {h.name!r}.emulator_ifaces",
                "an emulator host needs it: [interface facing left, interface facing right] "
                "(or its [[host.wire]] entries)",
            )
        if h.emulator_ifaces and h.wire:
            raise ScenarioError(
                source, f"host {h.name!r}.wire", "give emulator_ifaces or [[host.wire]], not both"
            )
        if h.role != "emulator" and (h.wire or h.emulator_ifaces):
            f = "wire" if h.wire else "emulator_ifaces"
            raise ScenarioError(source, f"host {h.name!r}.{f}", "only an emulator host has wires")
        if h.role == "host" and h.segment is None:
            raise ScenarioError(source, f"host {h.name!r}.segment", 'a "host" names its L2 segment')
        for f in ("data_iface", "data_addr"):
            if h.role != "emulator" and getattr(h, f) is None:
                raise ScenarioError(
                    source, f"host {h.name!r}.{f}", f"a {h.role} host needs its data-plane {f}"
                )
    from itb.backends.ssh import segments

    segments.check(inv, source)


def from_dict(data: dict, source: str | None = None) -> Inventory:
    if "source" in data:
        raise ScenarioError(source, "source", "Extra inputs are not permitted")
    try:
        inv = Inventory.model_validate({**data, "source": source})
    except ValidationError as e:
        err = e.errors()[0]
        msg = err["msg"].removeprefix("Value error, ")
        raise ScenarioError(source, _field(err["loc"], data), msg) from None
    _checks(inv, source)
    if not inv.host and inv.provider is None:
        raise ScenarioError(
            source,
            "host",
            "no host: an inventory lists [[host]] entries "
            "(or names a [provider] that reserves them)",
        )
    return inv


def load(path: str | Path) -> Inventory:
    path = Path(path)
    try:
        data = tomllib.loads(files.read_text(path, "inventory"))
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(str(path), "(file)", f"not valid TOML: {e}") from None
    return from_dict(data, str(path))
