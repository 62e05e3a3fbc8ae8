"""The programs ITB runs on a testbed's hosts, shipped as package data: each one file of
standard-library Python, started there as `python3 FILE` (copied over SSH) or here as
`python -m itb.backends.hostside.NAME`. They import nothing of ITB.

- `worker.py`: the node worker (spawns programs at absolute dates, reports dispatch,
  ready and exit; records what it started so a cleanup can stop it);
- `udprate.py`: the calibration's paced UDP source and sink.
"""

from __future__ import annotations

from importlib import resources

PROGRAMS = ("worker", "udprate")


def source(name: str) -> bytes:
    """The program's file as shipped (for copying to a host)."""
    if name not in PROGRAMS:
        raise KeyError(name)
    return (resources.files(__name__) / f"{name}.py").read_bytes()


def module(name: str) -> str:
    """Its module name, to run it here with `python -m`."""
    if name not in PROGRAMS:
        raise KeyError(name)
    return f"{__name__}.{name}"
