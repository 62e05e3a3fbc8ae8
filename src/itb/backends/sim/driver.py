"""itb-sim, the ns-3 program that runs one repetition (native/sim/itb_sim.cc): where
ns-3 is, and the program built against it when missing or older than its source.

ns-3 comes from PyPI's `ns3` wheel (its C++ headers and libraries; nothing of its Python
bindings is used, so no per-packet Python): `pip install ns3` (in ITB's `test` extras).
The program is built once per ns-3 version into build/native/itb-sim-<version>, and runs
the wheel's libraries but for one assertion's cost (itb.backends.sim.libraries).
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import re
import subprocess
from pathlib import Path

from itb import native
from itb.backends.sim import libraries
from itb.errors import PreflightError

SOURCE = native.REPO / "native" / "sim" / "itb_sim.cc"
ADAPTER = native.REPO / "native" / "sim" / "linux_cc.cc"
# ns-3's TcpTxBuffer::NextSeg without its walk when nothing is lost (exact; -rdynamic: the
# library's calls find it)
NEXTSEG = native.REPO / "native" / "sim" / "tx_buffer.cc"
KTYPES = native.REPO / "bpf" / "difftest"  # ktypes.h: Linux's tcp_sock as the shim has it
HZ = 250  # as itb.cc.simlinux builds Linux's algorithms
MODULES = ("core", "network", "internet", "point-to-point", "applications")


def ns3_root() -> Path:
    """The installed ns3 package's directory (include/, lib64/); PreflightError if none."""
    spec = importlib.util.find_spec("ns3")
    if spec is None or not spec.submodule_search_locations:
        raise PreflightError(
            "simulation needs ns-3: `pip install ns3` (PyPI's wheel brings its C++ "
            "headers and libraries; `make setup` installs it)"
        )
    root = Path(next(iter(spec.submodule_search_locations)))
    if not (root / "include" / "ns3").is_dir():
        raise PreflightError(f"{root}: an ns3 package without its C++ headers (include/ns3)")
    return root


def version(root: Path) -> str:
    libs = sorted((root / "lib64").glob("libns3.*-core.so"))  # libns3.44-core.so: "3.44"
    m = re.match(r"libns(3\.[0-9.]+)-core\.so", libs[0].name) if libs else None
    if m is None:
        raise PreflightError(f"{root}/lib64: no libns3.<version>-core.so")
    return m.group(1)


def program(linux_objects: list[Path]) -> Path:
    """The built driver with Linux's algorithms (`linux_objects`, itb.cc.simlinux) linked
    in (built now if missing or older than a source)."""
    override = os.environ.get("ITB_SIM")
    if override:
        return Path(override)
    root = ns3_root()
    v = version(root)
    out = native.REPO / "build" / "native" / f"itb-sim-{v}"
    # (and the wheel's internet library, which itb-sim runs a copy of: itb.backends.sim.
    # libraries)
    inputs = [SOURCE, ADAPTER, NEXTSEG, SOURCE.with_name("linux_cc.h"), SOURCE.with_name("udp.h"),
              *linux_objects,
              root / "lib64" / f"libns{v}-internet.so", Path(libraries.__file__)]  # fmt: skip

    def current() -> bool:
        return out.exists() and out.stat().st_mtime >= max(p.stat().st_mtime for p in inputs)

    if current():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    # one build at a time (a sweep's workers may all find it stale): the others wait for
    # it, then find it current
    with open(str(out) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not current():
            _build(root, v, linux_objects, out)
    return out


def _build(root: Path, v: str, linux_objects: list[Path], out: Path) -> None:
    lib = root / "lib64"
    run_from = libraries.directory(lib, v)  # the wheel's, but for one assertion's cost
    argv = [
        "g++", "-O2", "-std=c++20", "-Wall", f"-I{root / 'include'}", f"-I{KTYPES}",
        f"-DCCDIFF_HZ={HZ}", str(SOURCE), str(ADAPTER), str(NEXTSEG), *map(str, linux_objects),
        "-o", str(out) + ".tmp", f"-L{lib}", "-Wl,--no-as-needed",
        *(f"-lns{v}-{m}" for m in MODULES), f"-Wl,-rpath,{run_from}", "-rdynamic", "-ldl",
    ]  # fmt: skip
    res = subprocess.run(argv, capture_output=True, text=True)
    if res.returncode != 0:
        raise PreflightError(f"building itb-sim against ns-3 {v} failed:\n{res.stderr[-2000:]}")
    os.replace(str(out) + ".tmp", out)
