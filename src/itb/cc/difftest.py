"""The differential test: ITB's eBPF congestion controls against Linux's own code.

For an algorithm and a tick rate, one program (`ccdiff-<name>-hz<HZ>`) links Linux's
`net/ipv4/tcp_<name>.c` (the oracle, see itb.cc.oracle) and ITB's `bpf/<name>.bpf.c`,
both built as ordinary C against the kernel types of `bpf/difftest/`, with a TCP model
that calls their hooks as Linux's stack does. It runs scripts (window growth, periodic
losses, timeouts, undone losses, pacing, idle restart, application limits) through both
in lockstep and reports, per script, the first event after which cwnd, ssthresh, the
window counter or the recovery state differ, or what the script covered.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from itb import native
from itb.cc.oracle import ALGORITHM_FILES, SIMULATOR_FILES, Oracle, OracleError, prepare

HARNESS = native.REPO / "bpf" / "difftest"
BPF_SOURCES = native.REPO / "bpf"
ALGORITHMS = tuple(ALGORITHM_FILES)
SUPPORTED_HZ = (100, 250, 1000)  # tick rates that divide 1000, as the shim's jiffies need
CFLAGS = ("-O2", "-g", "-std=gnu11", "-Wall", "-Wno-unused-function", "-Werror=implicit")


class DifftestBuildError(OracleError):
    """A harness program could not be built."""


@dataclass(frozen=True)
class ScriptResult:
    """One script's outcome, as the harness printed it."""

    script: str
    algorithm: str
    hz: int
    ok: bool
    detail: dict = field(default_factory=dict)

    @property
    def summary(self) -> str:
        d = self.detail
        if "differs" in d:
            return (
                f"{self.algorithm} (HZ {self.hz}), script {self.script}: {d['differs']} "
                f"differs after event {d['event']} ({d['what']}): Linux {d['linux']}, "
                f"ITB {d['itb']}"
            )
        if not self.ok:
            return (
                f"{self.algorithm} (HZ {self.hz}), script {self.script}: "
                f"{d.get('coverage', 'failed')}"
            )
        return (
            f"{self.algorithm} (HZ {self.hz}), script {self.script}: identical over "
            f"{d['events']} events, {d['t_s']} s; max cwnd {d['max_cwnd']}, "
            f"{d['recoveries']} recoveries, {d['rtos']} RTOs, {d['undos']} undos"
        )


def _cc(argv: list[str]) -> None:
    res = subprocess.run(["gcc", *argv], capture_output=True, text=True)
    if res.returncode != 0:
        raise DifftestBuildError(f"gcc {' '.join(argv)}:\n{res.stderr.strip()[-3000:]}")


def build(
    name: str,
    hz: int,
    oracle: Oracle | None = None,
    itb_source: Path | None = None,
    out_dir: Path | None = None,
    adapter: bool = False,
) -> Path:
    """Builds the harness program for one algorithm and tick rate; `itb_source` replaces
    ITB's bpf/<name>.bpf.c (a copy with a change, to show the test catches it). With
    `adapter`, the compared side is not ITB's eBPF program but Linux's own algorithm
    through the simulator's translation (bpf/difftest/adapter.c; cubic too)."""
    known = ADAPTED if adapter else ALGORITHM_FILES
    if name not in known:
        raise DifftestBuildError(f"no differential test for {name!r}: one of {', '.join(known)}")
    if hz not in SUPPORTED_HZ:
        raise DifftestBuildError(
            f"HZ {hz} is not supported: one of {', '.join(map(str, SUPPORTED_HZ))}"
        )
    oracle = oracle or prepare()
    kernel_inc = ["-I", str(HARNESS / "kernel"), "-I", str(oracle.generated), f"-DCCDIFF_HZ={hz}"]
    if adapter:  # Linux's algorithm through the simulator's translation
        tag, ops = "-adapter", "itb_adapter"
        side = (HARNESS / "adapter.c", [*kernel_inc, "-I", str(SIM_SOURCES), "-I", str(HARNESS)])
    else:  # ITB's eBPF program, built as C
        tag, ops = "", f"itb_{name}"
        side = (
            itb_source or BPF_SOURCES / f"{name}.bpf.c",
            ["-I", str(HARNESS / "bpf"), "-I", str(BPF_SOURCES)],
        )
    out = out_dir or oracle.root / "bin"
    obj = out / f"obj-{name}{tag}-hz{hz}"
    obj.mkdir(parents=True, exist_ok=True)
    objects = []
    for src, extra in (
        (oracle.algorithm_source(name), kernel_inc + ["-I", str(oracle.src / "net" / "ipv4")]),
        (oracle.generated / "kfuncs.c", kernel_inc),
        (HARNESS / "model.c", kernel_inc),
        (HARNESS / "scripts.c", kernel_inc),
        (HARNESS / "main.c", kernel_inc + [f"-DITB_OPS={ops}"]),
        side,
    ):
        o = obj / (src.stem.replace(".", "_") + ("-itb" if src == side[0] else "") + ".o")
        _cc([*CFLAGS, *extra, "-c", str(src), "-o", str(o)])
        objects.append(str(o))
    binary = out / f"ccdiff-{name}{tag}-hz{hz}"
    _cc([*objects, "-o", str(binary)])
    return binary


ADAPTED = (*ALGORITHM_FILES, *SIMULATOR_FILES)  # what itb-sim runs of Linux's (Reno aside)
SIM_SOURCES = native.REPO / "native" / "sim"  # linux_state.h: the adapter's translation


def run(
    binary: Path, scripts: list[str] | None = None, timeout: float = 1800
) -> list[ScriptResult]:
    """Runs a harness program; one result per script."""
    res = subprocess.run(
        [str(binary), *(scripts or [])], capture_output=True, text=True, timeout=timeout
    )
    if res.returncode not in (0, 1):
        raise DifftestBuildError(f"{binary.name} exited {res.returncode}: {res.stderr.strip()}")
    out = []
    for line in res.stdout.splitlines():
        d = json.loads(line)
        out.append(ScriptResult(d.pop("script"), d.pop("algorithm"), d.pop("hz"), d.pop("ok"), d))
    return out


def linux_highspeed_table(oracle: Oracle) -> list[tuple[int, int]]:
    """(window, decrease in 1/256) rows of Linux's tcp_highspeed.c."""
    text = oracle.algorithm_source("highspeed").read_text()
    return [(int(w), int(b)) for w, b in re.findall(r"\{\s*(\d+),\s*(\d+),\s*/\*", text)]
