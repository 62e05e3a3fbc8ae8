"""What the running kernel offers: congestion controls registered now, and modules."""

from __future__ import annotations

from pathlib import Path

from itb.backends.host import Host
from itb.errors import CommandFailed

AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
MODULES = Path("/proc/modules")


def available(path: Path = AVAILABLE) -> list[str]:
    """Every congestion control a socket can select now (built-in, module or BPF)."""
    return path.read_text().split()


def loaded_modules(path: Path = MODULES) -> set[str]:
    try:
        return {line.split()[0] for line in path.read_text().splitlines() if line.strip()}
    except FileNotFoundError:  # a kernel without module support
        return set()


def module_exists(host: Host, module: str) -> bool:
    """Whether modprobe could load `module` (dry run); False where there is no modprobe."""
    try:
        return host.run(["modprobe", "-n", "-q", module], check=False).returncode == 0
    except CommandFailed:  # modprobe itself is missing
        return False


def load_module(host: Host, module: str) -> None:
    host.run(["modprobe", module])
