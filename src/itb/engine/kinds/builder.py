"""What building one event's processes needs: the repetition's directory, the testbed's
addresses, the receivers' ports (consecutive, in the events' order), the kernel's names
of the congestion controls, and how a process's files and spec are made."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from itb import native
from itb.engine.procspec import ProcSpec, endpoint
from itb.scenario.testbed.model import Topology


@dataclass
class Builder:
    topo: Topology
    rep_dir: Path
    interval_us: int
    prelude_s: float
    port: int  # the last port given (the next receiver listens on port + 1)
    cc_names: Mapping[str, str] | None = None
    flow: str = field(default_factory=lambda: str(native.binary("flow")))

    def kernel_cc(self, name: str) -> str:
        """The kernel's name of a congestion control here (ITB's eBPF ones: itb_<name>)."""
        return (self.cc_names or {}).get(name, name)

    def next_endpoint(self, node: str) -> str:
        """The next receiver's address and port on `node`."""
        self.port += 1
        return endpoint(self.topo, node, self.port)

    def common(self) -> list:
        return ["--interval-us", self.interval_us]

    def files(self, node: str, ident: str) -> dict:
        d = self.rep_dir / "nodes" / node
        d.mkdir(parents=True, exist_ok=True)
        stem = str(d / ident)
        return {
            "log": stem + ".csv",
            "summary": stem + ".json",
            "stdout": stem + ".out",
            "stderr": stem + ".err",
        }

    def spec(self, ident, e, role, node, at_us, argv, f, **kw) -> ProcSpec:
        return ProcSpec(
            id=ident,
            event=e.id,
            role=role,
            node=node,
            at_us=at_us,
            argv=tuple(str(a) for a in argv),
            stdout=f["stdout"],
            stderr=f["stderr"],
            files={"log": f["log"], "summary": f["summary"]},
            **kw,
        )
