"""ns-3's congestion controls by name, from ns-3's own TypeId registry: a scenario's
`ns3:<model>` is checked against it before anything is written, instead of itb-sim
stopping on it after the run directory was made.

The registry is asked by a small program built once per ns-3 version against the same
libraries itb-sim links (its TypeIds are registered when they load): it lists every
constructible type derived from `ns3::TcpCongestionOps`. Its answer is kept beside it
(build/native/ns3-tcp-ccs-<version>.txt), and in memory for the process.
"""

from __future__ import annotations

import os
import subprocess
from functools import cache
from pathlib import Path

from itb import native
from itb.errors import PreflightError

# what the lister prints: one name a line, e.g. ns3::TcpCubic
LISTER = r"""
#include "ns3/type-id.h"
#include <iostream>
int main()
{
    using ns3::TypeId;
    TypeId base = TypeId::LookupByName("ns3::TcpCongestionOps");
    for (uint16_t i = 0; i < TypeId::GetRegisteredN(); i++)
    {
        TypeId t = TypeId::GetRegistered(i);
        if (t == base || !t.HasConstructor())
            continue;
        for (TypeId p = t; p != p.GetParent(); p = p.GetParent())
            if (p.GetParent() == base)
            {
                std::cout << t.GetName() << "\n";
                break;
            }
    }
}
"""


@cache
def congestion_controls() -> frozenset[str]:
    """ns-3's congestion-control models as a scenario names them (`ns3:TcpCubic`, …)."""
    from itb.backends.sim import driver

    root = driver.ns3_root()
    v = driver.version(root)
    out = native.REPO / "build" / "native" / f"ns3-tcp-ccs-{v}.txt"
    lib = root / "lib64"
    if not out.exists() or out.stat().st_mtime < (lib / f"libns{v}-core.so").stat().st_mtime:
        out.parent.mkdir(parents=True, exist_ok=True)
        text = _ask(root, v, out.with_suffix(""))
        tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, out)
    names = out.read_text().split()
    return frozenset("ns3:" + n.removeprefix("ns3::") for n in names)


def _ask(root: Path, v: str, program: Path) -> str:
    """The lister built (into `program`) and run: its output."""
    from itb.backends.sim import driver

    source = program.with_suffix(".cc")
    source.write_text(LISTER)
    lib = root / "lib64"
    argv = [
        "g++", "-O1", "-std=c++20", f"-I{root / 'include'}", str(source), "-o", str(program),
        f"-L{lib}", "-Wl,--no-as-needed", *(f"-lns{v}-{m}" for m in driver.MODULES),
        f"-Wl,-rpath,{lib}",
    ]  # fmt: skip
    try:
        built = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise PreflightError(f"cannot build ns-3's type lister (g++): {e}") from None
    if built.returncode != 0:
        raise PreflightError(f"building ns-3's type lister failed:\n{built.stderr[-2000:]}")
    try:
        res = subprocess.run([str(program)], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise PreflightError(f"ns-3's type lister did not run: {e}") from None
    if res.returncode != 0 or "ns3::" not in res.stdout:
        raise PreflightError(
            f"ns-3's type lister failed (exit {res.returncode}): {res.stderr.strip()[-500:]}"
        )
    return res.stdout
