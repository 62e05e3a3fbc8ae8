"""The local backend: every node is a network namespace on this machine, each emulated
link ITB's link emulator in a namespace of its own.

`build` makes and removes the namespaces and emulators (also for `itb testbed up|down`
and `itb clean`); `testbed.LocalTestbed` is the `Testbed` a run or a calibration uses;
`backend` declares it to the registry (`--backend local`). `build`'s functions are
read from here when first used (`local.up`, …): declaring the backend imports nothing
of the emulator.
"""

from __future__ import annotations

from typing import Any

# what is imported from outside itb.backends besides the names below (the CLI's `itb
# testbed` and `itb clean`): its declaration; the rest is its own (tests/unit/test_layers.py)
PUBLIC = ("backend",)

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


def __getattr__(name: str) -> Any:
    if name in __all__:
        from itb.backends.local import build

        return getattr(build, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
