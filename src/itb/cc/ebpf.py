"""ITB's eBPF congestion controls: the compiled objects, and registering them as
struct_ops through bpftool (argv lists on the host interface)."""

from __future__ import annotations

import json
import os
import platform
import re
from pathlib import Path

from itb import native
from itb.backends.host import Host
from itb.errors import CommandFailed, PreflightError

KERNEL_BTF = Path("/sys/kernel/btf/vmlinux")
# The first line of the verifier's log that says what it refused; libbpf prints the log
# between these markers.
_LOG_BEGIN, _LOG_END = "-- BEGIN PROG LOAD LOG --", "-- END PROG LOAD LOG --"


class CcLoadError(PreflightError):
    """An eBPF congestion control could not be registered."""

    def __init__(self, name: str, reason: str, detail: str = ""):
        self.name, self.reason, self.detail = name, reason, detail
        super().__init__(f"congestion control {name!r} could not be loaded: {reason}")


def object_dir() -> Path:
    """Where `make bpf` puts the objects built against this kernel's BTF."""
    env = os.environ.get("ITB_BPF_DIR")
    return Path(env) if env else native.REPO / "build" / "bpf" / platform.release()


def object_path(name: str) -> Path:
    return object_dir() / f"{name}.bpf.o"


def bpftool(host: Host, *args: str | Path, check: bool = True):
    # -d would flood; plain stderr carries libbpf's messages and the verifier log.
    try:
        return host.run(["bpftool", *map(str, args)], check=check)
    except CommandFailed as e:
        if e.returncode == 127:
            raise PreflightError(
                "bpftool is not installed: run `make setup` (Debian package bpftool)"
            ) from e
        raise


def registered(host: Host) -> dict[str, int]:
    """struct_ops congestion controls registered now: name -> map id."""
    res = bpftool(host, "-j", "struct_ops", "show")
    out = {}
    for entry in json.loads(res.stdout or "[]"):
        if entry.get("kernel_struct_ops") == "tcp_congestion_ops":
            out[entry["name"]] = entry["id"]
    return out


def register(host: Host, name: str, obj: Path) -> None:
    """Registers `obj` (one tcp_congestion_ops); a refusal names the verifier's reason."""
    if not KERNEL_BTF.exists():
        raise CcLoadError(
            name,
            f"this kernel has no BTF ({KERNEL_BTF} is missing); "
            "eBPF congestion controls need CONFIG_DEBUG_INFO_BTF",
        )
    if not obj.is_file():
        raise CcLoadError(name, f"{obj} is not built: run `make bpf` (part of `make setup`)")
    res = bpftool(host, "struct_ops", "register", obj, check=False)
    if res.returncode != 0 or "Registered" not in res.stdout + res.stderr:
        raise CcLoadError(name, first_failure_line(res.stderr or res.stdout), res.stderr)


def unregister(host: Host, kernel_name: str) -> None:
    bpftool(host, "struct_ops", "unregister", "name", kernel_name)


def first_failure_line(stderr: str) -> str:
    """The verifier's complaint (with the program it refused), else libbpf's, else
    bpftool's last line."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    if _LOG_BEGIN in stderr:
        head, rest = stderr.split(_LOG_BEGIN, 1)
        prog = re.search(r"prog '([^']+)'", head.splitlines()[-1] if head else "")
        complaint = None
        for ln in rest.split(_LOG_END, 1)[0].splitlines():
            ln = ln.strip()
            if ln.startswith("processed "):  # the summary after the refusal
                break
            # The log replays instructions ("12: (85) ...", "; source @ file:line");
            # the refusal is the last line that is neither.
            if ln and not re.match(r"^(\d+:|;)", ln):
                complaint = ln
        if complaint:
            where = f" (program {prog.group(1)})" if prog else ""
            return f"verifier: {complaint}{where}"
    for ln in lines:
        if ln.startswith("libbpf:") and ("failed" in ln or "error" in ln.lower()):
            return ln
    return lines[-1] if lines else "bpftool failed without a message"
