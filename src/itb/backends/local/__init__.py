"""The local backend: every node is a network namespace on this machine, each emulated
link ITB's link emulator in a namespace of its own.

`build` makes and removes the namespaces and emulators (also for `itb testbed up|down`
and `itb clean`); `testbed.LocalTestbed` is the `Testbed` a run or a calibration uses.
"""

from itb.backends.local.build import (
    EmulatorHandle,
    clean,
    down,
    emulators_of,
    host,
    owned_namespaces,
    preflight,
    read_state,
    require_state,
    state_file,
    status,
    topology_of,
    up,
)

__all__ = [
    "EmulatorHandle",
    "clean",
    "down",
    "emulators_of",
    "host",
    "owned_namespaces",
    "preflight",
    "read_state",
    "require_state",
    "state_file",
    "status",
    "topology_of",
    "up",
]
