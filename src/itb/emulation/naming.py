"""Names of what the local backend creates, all derived from one prefix so that
`itb clean` can find everything again, even after the tool was killed mid-build."""

from __future__ import annotations

import os
import re
from pathlib import Path

from itb.errors import ScenarioError

# Names of namespaces and interfaces, and a directory on remote hosts, are built from
# it: a plain name, never a path (ITB_PREFIX="" or ".." would name a host's directory
# itself or its parent).
PREFIX_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,32}")


def prefix() -> str:
    """ITB_PREFIX (default "itb"); `ScenarioError` (exit 2) unless 1–32 letters, digits,
    "-" or "_"."""
    value = os.environ.get("ITB_PREFIX", "itb")
    if not PREFIX_PATTERN.fullmatch(value):
        raise ScenarioError(
            "<environment>",
            "ITB_PREFIX",
            f"{value!r} is not a prefix: 1 to 32 letters, digits, '-' or '_' "
            "(it names namespaces, interfaces and ITB's directories)",
        )
    return value


def node_ns(node: str) -> str:
    return f"{prefix()}-{node}"


def emulator_ns(link: str) -> str:
    return f"{prefix()}-em-{link}"


def owns_ns(name: str) -> bool:
    return name.startswith(prefix() + "-")


def state_dir() -> Path:
    base = Path(os.environ.get("ITB_STATE_DIR", "/run/itb"))
    return base / prefix()
