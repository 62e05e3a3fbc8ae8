"""Congestion controls by canonical name: the kernel's when it has them, else ITB's
eBPF implementations (bpf/), registered and unregistered on demand."""

from itb.cc.ebpf import CcLoadError
from itb.cc.manage import Resolved, Status, clean, ensure, release, status, unload
from itb.scenario.algorithms import ALGORITHMS, KNOWN_CCS, Algorithm

__all__ = ["ALGORITHMS", "KNOWN_CCS", "Algorithm", "CcLoadError", "Resolved", "Status",
           "clean", "ensure", "release", "status", "unload"]
