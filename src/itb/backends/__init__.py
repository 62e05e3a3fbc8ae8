"""Where a run's processes run and its links are emulated: the testbeds behind one
interface (`testbed.Testbed`): `local` (namespaces on this machine), `ssh` (real hosts),
`sim` (ns-3), each a backend of the registry (`registry`: what `--backend` names).
The programs ITB runs on their hosts are `hostside`.

A backend's package may also be `itb/backends/<name>/` under another entry of sys.path
(a backend kept outside ITB's tree): this package's path is extended to every such
directory, after ITB's own."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

__path__ += [  # (pkgutil.extend_path would look in the parent package's path only)
    d
    for d in (os.path.join(entry, "itb", "backends") for entry in sys.path if entry)
    if os.path.isdir(d) and os.path.realpath(d) not in map(os.path.realpath, __path__)
]

if TYPE_CHECKING:  # imported when used: a node worker (`-m itb.backends.hostside.worker`)
    from itb.backends.ssh.inventory import Inventory  # starts without them
    from itb.backends.testbed import CcSupport, Hosted, Say, Testbed
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
    hosted: Hosted | None = None,
) -> Testbed:
    """The local testbed, or the SSH testbed of `inventory` (`only`: just these nodes'
    hosts, as a calibration's pair), or with `simulate` the simulated one: the
    registry's backends of these names (`registry.named`), opened."""
    from itb.backends.registry import Backend, named

    if simulate:
        backend: Backend = named("sim")
    elif inventory is None:
        backend = named("local")
    else:
        from itb.backends.ssh.backend import Ssh

        backend = Ssh(str(inventory.source), inventory)
    return backend.open(topology, ccs, hosted=hosted, seed=seed, say=say, only=only)
