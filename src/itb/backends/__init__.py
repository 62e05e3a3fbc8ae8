"""Where a run's processes run and its links are emulated: the testbeds behind one
interface (`testbed.Testbed`): `local` (namespaces on this machine), `ssh` (real hosts),
`sim` (ns-3).
The programs ITB runs on their hosts are `hostside`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported when used: a node worker (`-m itb.backends.hostside.worker`)
    from itb.backends.ssh.inventory import Inventory  # starts without them
    from itb.backends.testbed import CcSupport, Say, Testbed
    from itb.scenario.testbed.model import Topology


def open_testbed(
    topology: Topology,
    ccs: CcSupport,
    *,
    inventory: Inventory | None = None,
    seed: int = 1,
    say: Say | None = None,
    only: set[str] | None = None,
    simulate: bool = False,
) -> Testbed:
    """The local testbed, or the SSH testbed of `inventory` (`only`: just these nodes'
    hosts, as a calibration's pair), or with `simulate` the simulated one."""
    from itb.backends.testbed import quiet

    say = say or quiet
    if simulate:
        from itb.backends.sim.testbed import SimTestbed

        return SimTestbed(topology, ccs, seed=seed, say=say)
    if inventory is None:
        from itb.backends.local.testbed import LocalTestbed

        return LocalTestbed(topology, ccs, seed=seed, say=say)
    from itb.backends.ssh.testbed import SshTestbed

    return SshTestbed(inventory, topology, ccs, seed=seed, say=say, only=only)
