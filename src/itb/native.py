"""Where ITB's native programs (native/: linkem, flow) are: an environment variable,
else the workspace build next to the sources, else PATH."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from itb.errors import PreflightError

REPO = Path(__file__).resolve().parents[2]


def binary(name: str) -> str:
    env = os.environ.get(f"ITB_{name.upper()}")
    if env:
        return env
    built = REPO / "native" / "target" / "release" / name
    if built.exists():
        return str(built)
    found = shutil.which(name)
    if found:
        return found
    raise PreflightError(f"the native program {name!r} is not built: run `make setup` "
                         f"(cargo build --release in native/) or set ITB_{name.upper()}")
