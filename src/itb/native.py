"""Where ITB's native programs (native/: linkem, flow, itb-udt) are: an environment
variable (ITB_LINKEM, ITB_FLOW, ITB_ITB_UDT), else the build next to the sources
(cargo's native/target/release, make's build/native), else PATH."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from itb.errors import PreflightError

REPO = Path(__file__).resolve().parents[2]


def binary(name: str) -> str:
    var = f"ITB_{name.upper().replace('-', '_')}"
    env = os.environ.get(var)
    if env:
        return env
    for built in (REPO / "native" / "target" / "release" / name, REPO / "build" / "native" / name):
        if built.exists():
            return str(built)
    found = shutil.which(name)
    if found:
        return found
    raise PreflightError(
        f"the native program {name!r} is not built: run `make setup` (`make native`) or set {var}"
    )
