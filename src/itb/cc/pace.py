"""Holding an unmodified program to a rate: ITB's cgroup sock_ops program
(`bpf/pace.bpf.c`) attached to one cgroup, its rate set through its config map.

Every TCP socket of the cgroup's processes is paced (`SO_MAX_PACING_RATE`) at the rate
divided by the number of the cgroup's data sockets (those with 64 KiB of their own
acknowledged), and before it is one, by the number of its open connections; it picks a
new rate up at its next RTT sample. A connection with `skip_port` as its local or
remote port (a control connection) is neither paced nor counted; the congestion
control, when one is set, goes to every connection. The program is loaded on a private
bpffs mount that is removed at once: the cgroup attachment keeps it, and the maps are
reached by id. It is detached (and freed) by `detach` or when the cgroup is removed.
"""

from __future__ import annotations

import json
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path

from itb.backends.host import Host
from itb.cc.ebpf import bpftool, first_failure_line, object_path
from itb.errors import BackendError, PreflightError

CC_NAME_BYTES = 16
PROGRAM = "itb_pace"


@dataclass
class Pacer:
    host: Host
    cgroup: Path
    prog_id: int
    config_map: int  # itb_pace_config: rate, generation, cc, skip_port
    sockets_map: int  # itb_pace_sockets: the count of data sockets
    generation: int = 0

    def set(self, rate_bps: int | None, *, cc: str | None = None, skip_port: int = 0) -> None:
        """The total payload rate of the cgroup's data sockets (None: unpaced) and, when
        given, the congestion control its new connections get."""
        if cc is not None and len(cc.encode()) >= CC_NAME_BYTES:
            raise ValueError(f"congestion control name {cc!r} is too long")
        if rate_bps is not None and rate_bps <= 0:
            raise ValueError("a rate must be above 0 (None: unpaced)")
        self.generation += 1
        value = struct.pack(
            "<QII16sII",
            rate_bps or 0,
            self.generation,
            int(cc is not None),
            (cc or "").encode(),
            skip_port,
            0,
        )
        bpftool(
            self.host,
            "map",
            "update",
            "id",
            str(self.config_map),
            "key",
            "hex",
            "00",
            "00",
            "00",
            "00",
            "value",
            "hex",
            *(f"{b:02x}" for b in value),
        )

    def sockets(self) -> int:
        """The data sockets the program counts now."""
        return self._count(0)

    def open_sockets(self) -> int:
        """The connections it paces now, data sockets or not yet."""
        return self._count(1)

    def _count(self, key: int) -> int:
        res = bpftool(
            self.host,
            "-j",
            "map",
            "lookup",
            "id",
            str(self.sockets_map),
            "key",
            "hex",
            f"{key:02x}",
            "00",
            "00",
            "00",
        )
        doc = json.loads(res.stdout)
        if "formatted" in doc:  # with the map's BTF
            return int(doc["formatted"]["value"])
        return int.from_bytes(bytes(int(b, 16) for b in doc["value"]), "little", signed=True)

    def detach(self) -> None:
        bpftool(
            self.host,
            "cgroup",
            "detach",
            str(self.cgroup),
            "sock_ops",
            "id",
            str(self.prog_id),
            check=False,
        )


def require_object() -> Path:
    """The compiled program, or PreflightError."""
    obj = object_path("pace")
    if not obj.is_file():
        raise PreflightError(f"{obj} is not built: run `make bpf` (part of `make setup`)")
    return obj


def attach(host: Host, cgroup: Path) -> Pacer:
    """Loads the program and attaches it to `cgroup` (sock_ops); unpaced until `set`."""
    obj = require_object()
    mnt = Path(tempfile.mkdtemp(prefix="itb-bpffs-"))
    try:
        host.run(["mount", "-t", "bpf", "bpf", str(mnt)])
        try:
            res = bpftool(
                host,
                "prog",
                "load",
                obj,
                mnt / "prog",
                "type",
                "sockops",
                "pinmaps",
                mnt / "maps",
                check=False,
            )
            if res.returncode != 0:
                raise BackendError(
                    f"the pacing program could not be loaded: {first_failure_line(res.stderr)}"
                )
            bpftool(host, "cgroup", "attach", str(cgroup), "sock_ops", "pinned", mnt / "prog")
            prog = json.loads(bpftool(host, "-j", "prog", "show", "pinned", mnt / "prog").stdout)
            maps = {}
            for name in ("itb_pace_config", "itb_pace_sockets"):
                info = json.loads(
                    bpftool(host, "-j", "map", "show", "pinned", mnt / "maps" / name).stdout
                )
                maps[name] = int(info["id"])
        finally:
            host.run(["umount", str(mnt)], check=False)  # the attachment keeps what runs
    finally:
        mnt.rmdir()
    return Pacer(host, cgroup, int(prog["id"]), maps["itb_pace_config"], maps["itb_pace_sockets"])
