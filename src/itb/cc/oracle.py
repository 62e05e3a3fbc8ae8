"""Linux's own congestion-control code, the oracle of the differential test.

It comes from Debian's `linux-source-<version>` package (a tarball under /usr/src): the
five `net/ipv4/tcp_<name>.c` files, `tcp_cong.c` and `include/net/tcp.h` are extracted
into `build/difftest/<tarball>/src/`, never committed. From the last two, the stack
helpers the algorithms call are copied out verbatim, function by function, into
`tcp_inline.h` and `kfuncs.c` next to them, so that the oracle runs the kernel's own
slow start, additive increase, Reno functions and window helpers.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from itb import native
from itb.errors import PreflightError

ALGORITHM_FILES = {
    "bic": "tcp_bic.c",
    "highspeed": "tcp_highspeed.c",
    "htcp": "tcp_htcp.c",
    "scalable": "tcp_scalable.c",
    "vegas": "tcp_vegas.c",
}
# Linux's algorithms the simulator runs besides (itb-sim's Linux congestion controls;
# ITB has no eBPF one of its own to compare them with)
SIMULATOR_FILES = {"cubic": "tcp_cubic.c"}
# include/net/tcp.h's inline helpers the algorithms and the stack model call
INLINE_HELPERS = (
    "before",
    "between",
    "tcp_left_out",
    "tcp_packets_in_flight",
    "tcp_snd_cwnd",
    "tcp_snd_cwnd_set",
    "tcp_in_slow_start",
    "tcp_in_initial_slowstart",
    "tcp_in_cwnd_reduction",
    "tcp_current_ssthresh",
    "tcp_is_cwnd_limited",
    "tcp_ca_event",
)
# net/ipv4/tcp_cong.c's functions (the kfuncs a BPF congestion control calls, and the
# state setter that calls set_state)
CONG_FUNCTIONS = (
    "tcp_slow_start",
    "tcp_cong_avoid_ai",
    "tcp_reno_cong_avoid",
    "tcp_reno_ssthresh",
    "tcp_reno_undo_cwnd",
    "tcp_set_ca_state",
)
SOURCE_GLOB = "linux-source-*.tar.xz"
DEBIAN_PACKAGE = "linux-source-6.12"


class OracleError(PreflightError):
    """Linux's source, the differential test's oracle, is missing or not as expected."""


@dataclass(frozen=True)
class Oracle:
    version: str  # e.g. "6.12": from the tarball's name
    tarball: Path
    root: Path  # build/difftest/linux-source-<version>/
    src: Path  # the extracted tree (net/ipv4, include/net)
    generated: Path  # tcp_inline.h, kfuncs.c

    def algorithm_source(self, name: str) -> Path:
        return self.src / "net" / "ipv4" / {**ALGORITHM_FILES, **SIMULATOR_FILES}[name]


def _version_key(path: Path) -> tuple[int, ...]:
    m = re.search(r"linux-source-([\d.]+)\.tar", path.name)
    return tuple(int(x) for x in m.group(1).split(".")) if m else ()


def find_tarball() -> Path:
    """ITB_LINUX_SOURCE if set, else the newest /usr/src/linux-source-*.tar.xz."""
    env = os.environ.get("ITB_LINUX_SOURCE")
    if env:
        path = Path(env)
        if not path.is_file():
            raise OracleError(f"ITB_LINUX_SOURCE={env} is not a file")
        return path
    found = sorted(Path("/usr/src").glob(SOURCE_GLOB), key=_version_key)
    if not found:
        raise OracleError(
            "Linux's source, the oracle of the congestion-control differential test, is not "
            f"installed: no /usr/src/{SOURCE_GLOB}. `make setup` installs Debian's "
            f"{DEBIAN_PACKAGE} (apt-get install {DEBIAN_PACKAGE}); ITB_LINUX_SOURCE names "
            "another tarball"
        )
    return found[-1]


def extract_function(text: str, name: str, origin: str) -> str:
    """The definition of function `name` in C source `text`: from its header line to the
    first line that is a lone closing brace."""
    lines = text.splitlines()
    head = re.compile(rf"^(?:static\s+inline\s+|__bpf_kfunc\s+)?[A-Za-z_][\w\s\*]*?\b{name}\(")
    for i, line in enumerate(lines):
        if head.match(line) and not line.rstrip().endswith(";"):
            for j in range(i, len(lines)):
                if lines[j] == "}":
                    return "\n".join(lines[i : j + 1]) + "\n"
            break
    raise OracleError(f"{origin}: no definition of {name}() found; is this a Linux tree?")


def _extract(tarball: Path, src: Path) -> None:
    top = tarball.name.removesuffix(".tar.xz")
    members = [
        f"{top}/net/ipv4/{f}"
        for f in (*ALGORITHM_FILES.values(), *SIMULATOR_FILES.values(), "tcp_vegas.h", "tcp_cong.c")
    ]
    members.append(f"{top}/include/net/tcp.h")
    src.mkdir(parents=True, exist_ok=True)
    res = subprocess.run(
        ["tar", "-xJf", str(tarball), "-C", str(src), "--strip-components=1", *members],
        capture_output=True,
        text=True,
    )
    if res.returncode != 0:
        raise OracleError(f"{tarball}: could not extract the TCP sources: {res.stderr.strip()}")


def _generate(src: Path, out: Path) -> None:
    tcp_h = (src / "include" / "net" / "tcp.h").read_text()
    cong = (src / "net" / "ipv4" / "tcp_cong.c").read_text()
    note = "/* Copied out of {} by itb.cc.oracle for the differential test. */\n"
    inline = [
        note.format("include/net/tcp.h"),
        "#ifndef CCDIFF_TCP_INLINE_H\n",
        "#define CCDIFF_TCP_INLINE_H\n",
    ]
    inline += [extract_function(tcp_h, n, "include/net/tcp.h") for n in INLINE_HELPERS]
    inline.append("#endif\n")
    kfuncs = [note.format("net/ipv4/tcp_cong.c"), '#include "kernel.h"\n']
    kfuncs += [extract_function(cong, n, "net/ipv4/tcp_cong.c") for n in CONG_FUNCTIONS]
    out.mkdir(parents=True, exist_ok=True)
    (out / "tcp_inline.h").write_text("\n".join(inline))
    (out / "kfuncs.c").write_text("\n".join(kfuncs))


def prepare(tarball: Path | None = None, build_root: Path | None = None) -> Oracle:
    """Extracts (once per tarball) and returns the oracle's tree."""
    tarball = tarball or find_tarball()
    m = re.search(r"linux-source-([\d.]+)\.tar", tarball.name)
    version = m.group(1) if m else "unknown"
    root = (build_root or native.REPO / "build" / "difftest") / tarball.name.removesuffix(".tar.xz")
    src, generated = root / "src", root / "generated"
    stamp = root / ".extracted"
    # (what was extracted: a tree from before a file was added is extracted again)
    done = f"{tarball.stat().st_mtime_ns} {sorted({**ALGORITHM_FILES, **SIMULATOR_FILES})}"
    if not stamp.exists() or stamp.read_text() != done:
        _extract(tarball, src)
        _generate(src, generated)
        stamp.write_text(done)
    return Oracle(version, tarball, root, src, generated)
