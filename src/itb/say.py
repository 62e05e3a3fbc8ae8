"""The one type of a progress callback, `Say`: a line for the user that the CLI prints
(a driver, a testbed, a calibration say what they do through it), and `quiet`, the one
that says nothing."""

from __future__ import annotations

from collections.abc import Callable

Say = Callable[[str], None]


def quiet(_line: str) -> None:
    pass
