"""`--backend local`: the emulated WAN of network namespaces on this machine."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from itb.backends.registry import Kind, OfHosts

if TYPE_CHECKING:
    from itb.backends.testbed import CcSupport, Hosted, Say, Testbed
    from itb.scenario.testbed.model import Topology


@dataclass(frozen=True)
class Local(OfHosts):
    name: ClassVar[str] = "local"
    same_machine: ClassVar[bool] = True

    def open(
        self,
        topology: Topology,
        ccs: CcSupport,
        *,
        hosted: Hosted | None = None,
        seed: int = 1,
        say: Say | None = None,
        only: set[str] | None = None,
    ) -> Testbed:
        from itb.backends.local.testbed import LocalTestbed
        from itb.backends.testbed import quiet

        tb = LocalTestbed(topology, ccs, seed=seed, say=say or quiet)
        tb.hosted = hosted
        return tb


KIND = Kind(
    name="local",
    help="namespaces on this machine and ITB's link emulator (the default)",
    options=(),
    make=Local,
    from_key=lambda key: None,  # (the default: a key that names no other)
    order=0,
)
