"""Names of what the local backend creates, all derived from one prefix so that
`itb clean` can find everything again, even after the tool was killed mid-build."""

from __future__ import annotations

import os
from pathlib import Path


def prefix() -> str:
    return os.environ.get("ITB_PREFIX", "itb")


def node_ns(node: str) -> str:
    return f"{prefix()}-{node}"


def emulator_ns(link: str) -> str:
    return f"{prefix()}-em-{link}"


def owns_ns(name: str) -> bool:
    return name.startswith(prefix() + "-")


def state_dir() -> Path:
    base = Path(os.environ.get("ITB_STATE_DIR", "/run/itb"))
    return base / prefix()
