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
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

from itb import native
from itb.backends.sim import libraries
from itb.errors import PreflightError

SOURCE = native.REPO / "native" / "sim" / "itb_sim.cc"
ADAPTER = native.REPO / "native" / "sim" / "linux_cc.cc"
# ns-3's TcpTxBuffer::NextSeg without its walk when nothing is lost (exact; -rdynamic: the
# library's calls find it)
NEXTSEG = native.REPO / "native" / "sim" / "tx_buffer.cc"
# ns-3's TcpRxBuffer::Add with its walks started where they can find something (exact)
RXBUFFER = native.REPO / "native" / "sim" / "rx_buffer.cc"
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
    """ns-3's version ("3.44"), once every library itb-sim links is there."""
    libs = sorted((root / "lib64").glob("libns3.*-core.so"))  # libns3.44-core.so: "3.44"
    m = re.match(r"libns(3\.[0-9.]+)-core\.so", libs[0].name) if libs else None
    if m is None:
        raise PreflightError(
            f"{root}/lib64: no libns3.<version>-core.so: the ns3 package is without its "
            "libraries (reinstall it: `pip install --force-reinstall ns3`)"
        )
    v = m.group(1)
    missing = [mod for mod in MODULES if not (root / "lib64" / f"libns{v}-{mod}.so").is_file()]
    if missing:
        raise PreflightError(
            f"{root}/lib64: ns-3 {v} without its libraries "
            f"{', '.join(f'libns{v}-{mod}.so' for mod in missing)} (itb-sim needs them; "
            "reinstall it: `pip install --force-reinstall ns3`)"
        )
    return v


def program(linux_objects: list[Path], say: Callable[[str], None] = lambda m: None) -> Path:
    """The built driver with Linux's algorithms (`linux_objects`, itb.cc.simlinux) linked
    in (built now, saying so, if missing or older than a source), checked to run."""
    override = os.environ.get("ITB_SIM")
    if override:
        return check_runs(Path(override), "$ITB_SIM")
    root = ns3_root()
    v = version(root)
    out = native.REPO / "build" / "native" / f"itb-sim-{v}"
    # (and the wheel's internet library, which itb-sim runs a copy of: itb.backends.sim.
    # libraries; and this module, which says how it is built)
    inputs = [SOURCE, ADAPTER, NEXTSEG, RXBUFFER, *SOURCE.parent.glob("*.h"),
              *linux_objects,
              root / "lib64" / f"libns{v}-internet.so", Path(libraries.__file__),
              Path(__file__)]  # fmt: skip

    def current() -> bool:
        return out.exists() and out.stat().st_mtime >= max(p.stat().st_mtime for p in inputs)

    if not current():
        out.parent.mkdir(parents=True, exist_ok=True)
        # one build at a time (a sweep's workers may all find it stale): the others wait
        # for it, then find it current
        with open(str(out) + ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not current():
                say(f"building itb-sim against ns-3 {v} into {out} (once)")
                _build(root, v, linux_objects, out)
    return check_runs(out, "itb-sim")


_RAN: dict[tuple[str, float], None] = {}  # the programs seen to run (path, mtime)


def check_runs(prog: Path, what: str) -> Path:
    """`prog` if it starts as itb-sim does (run without arguments it prints its usage and
    exits 2); else a `PreflightError` that says what happened: not there, not
    executable, killed by a signal (its name), or its loader's message (ns-3's libraries
    not found)."""
    try:
        key = (str(prog), prog.stat().st_mtime)
    except OSError as e:
        raise PreflightError(f"{what} {prog}: {e.strerror or e}") from None
    if key in _RAN:
        return prog
    try:
        res = subprocess.run([str(prog)], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise PreflightError(
            f"{what} {prog}: run without arguments, it did not answer in 30 s (itb-sim "
            "prints its usage at once): not the simulator"
        ) from None
    except OSError as e:
        raise PreflightError(f"{what} {prog} cannot be run: {e.strerror or e}") from None
    if res.returncode == 2 and "usage: itb-sim" in res.stderr:
        _RAN[key] = None
        return prog
    said = (res.stderr.strip() or res.stdout.strip() or "nothing").splitlines()[-1][:300]
    raise PreflightError(f"{what} {prog} does not run: {ended(res.returncode)}; it said: {said}")


def ended(returncode: int) -> str:
    """How a program ended, for people: "killed by SIGSEGV (signal 11)", "exited 127"."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "a signal"
        return f"killed by {name} (signal {-returncode})"
    return f"exited {returncode}"


# gperftools' allocator, when installed (`make setup` installs libtcmalloc-minimal4): ns-3
# allocates and frees objects per packet and event; with it one 10 Gbit/s flow simulates
# in three quarters of the time (bench/simulator.py), the logs byte for byte the same
TCMALLOC_LIB = Path("/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4")
TCMALLOC = [f"-l:{TCMALLOC_LIB.name}"] if TCMALLOC_LIB.exists() else []


def _build(root: Path, v: str, linux_objects: list[Path], out: Path) -> None:
    lib = root / "lib64"
    run_from = libraries.directory(lib, v)  # the wheel's, but for one assertion's cost
    argv = [
        "g++", "-O2", "-std=c++20", "-Wall", f"-I{root / 'include'}", f"-I{KTYPES}",
        f"-DCCDIFF_HZ={HZ}", str(SOURCE), str(ADAPTER), str(NEXTSEG), str(RXBUFFER),
        *map(str, linux_objects),
        "-o", str(out) + ".tmp", f"-L{lib}", "-Wl,--no-as-needed",
        *(f"-lns{v}-{m}" for m in MODULES), f"-Wl,-rpath,{run_from}", "-rdynamic", "-ldl",
        *TCMALLOC,
    ]  # fmt: skip
    res = subprocess.run(argv, capture_output=True, text=True)
    if res.returncode != 0:
        raise PreflightError(f"building itb-sim against ns-3 {v} failed:\n{res.stderr[-2000:]}")
    os.replace(str(out) + ".tmp", out)
