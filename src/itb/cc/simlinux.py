"""Linux's own congestion controls for the simulator (itb-sim, docs/simulation.md): the
same files the differential test runs as its oracle (`net/ipv4/tcp_<name>.c` from
Debian's linux-source, built as C against bpf/difftest's kernel shim, with Linux's
tcp_cong.c helpers), plus tcp_cubic.c and Reno from tcp_cong.c; one source of truth for
"Linux's algorithm" in the differential test and in simulation. Compiled once per
kernel source and tick rate into build/sim/linux-<version>-hz<HZ>/; itb-sim links them
with its adapter (native/sim/linux_cc.cc)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from itb import native
from itb.cc.difftest import CFLAGS, HARNESS, DifftestBuildError
from itb.cc.oracle import ALGORITHM_FILES, SIMULATOR_FILES, prepare

HZ = 250  # Debian's kernels' (CONFIG_HZ), this machine's: what `itb cc verify` tests first
GLUE = native.REPO / "native" / "sim" / "linux_glue.c"
NAMES = ("reno", *sorted({**ALGORITHM_FILES, **SIMULATOR_FILES}))


def objects(hz: int = HZ) -> list[Path]:
    """The object files (built now if missing or older than their sources)."""
    oracle = prepare()
    out = native.REPO / "build" / "sim" / f"linux-{oracle.version}-hz{hz}"
    out.mkdir(parents=True, exist_ok=True)
    inc = ["-I", str(HARNESS / "kernel"), "-I", str(oracle.generated), f"-DCCDIFF_HZ={hz}"]
    units = [
        (oracle.algorithm_source(n), ["-I", str(oracle.src / "net" / "ipv4")]) for n in NAMES[1:]
    ]
    units += [(oracle.generated / "kfuncs.c", []), (GLUE, [])]
    objs = []
    for src, extra in units:
        o = out / (src.stem + ".o")
        if not o.exists() or o.stat().st_mtime < max(
            src.stat().st_mtime, (HARNESS / "ktypes.h").stat().st_mtime,
            (HARNESS / "kernel" / "kernel.h").stat().st_mtime,
        ):  # fmt: skip
            res = subprocess.run(
                ["gcc", *CFLAGS, "-fPIC", *inc, *extra, "-c", str(src), "-o", str(o)],
                capture_output=True,
                text=True,
            )
            if res.returncode != 0:
                raise DifftestBuildError(f"gcc {src.name} for itb-sim:\n{res.stderr[-3000:]}")
        objs.append(o)
    return objs
