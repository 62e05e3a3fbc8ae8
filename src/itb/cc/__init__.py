"""Congestion controls by canonical name: the kernel's when it has them, else ITB's
eBPF implementations (bpf/), registered and unregistered on demand."""

from collections.abc import Sequence

from itb.backends.testbed import CcSupport, Say
from itb.cc.ebpf import CcLoadError, object_path
from itb.cc.manage import Resolved, Status, clean, ensure, release, status, unload
from itb.scenario.experiment.algorithms import ALGORITHMS, KNOWN_CCS, Algorithm

__all__ = [
    "ALGORITHMS",
    "KNOWN_CCS",
    "Algorithm",
    "CcLoadError",
    "Resolved",
    "Status",
    "clean",
    "ensure",
    "release",
    "status",
    "support",
    "unload",
]


def _ensure(names: Sequence[str], say: Say) -> list[Resolved]:
    return ensure(names, progress=say)


def _release(resolved: list[Resolved], say: Say) -> None:
    release(resolved, progress=say)


def support() -> CcSupport:
    """What a testbed (itb.backends.testbed) needs of ITB's congestion controls."""
    return CcSupport(
        ensure=_ensure,
        release=_release,
        object_path=object_path,
        simulator_objects=_simulator_objects,
    )


def _simulator_objects() -> list:
    from itb.cc import simlinux

    return simlinux.objects()
