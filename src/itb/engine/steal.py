"""CPU steal time: the share of this machine's CPU time that its hypervisor gave to other
guests while a repetition ran (the `steal` column of /proc/stat's `cpu` line, proc(5)).
On a virtual machine whose host is oversubscribed, the testbed's processes and its link
emulator wait without knowing it, and a repetition's timings are not the path's; the
repetition records the share, and warns from STEAL_WARN on."""

from __future__ import annotations

from pathlib import Path

STEAL_WARN = 0.05
PROC_STAT = Path("/proc/stat")


def cpu_times(text: str) -> tuple[int, int] | None:
    """(steal, total) in clock ticks from /proc/stat's aggregate `cpu` line; None when it
    has no steal column (kernels before 2.6.11) or is not there. Guest time is already
    counted in user and nice, so it is left out of the total."""
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == "cpu":
            ticks = [int(x) for x in f[1:9]]
            return (ticks[7], sum(ticks)) if len(ticks) == 8 else None
    return None


def read_cpu_times(path: Path = PROC_STAT) -> tuple[int, int] | None:
    try:
        return cpu_times(path.read_text())
    except (OSError, ValueError):
        return None


def steal_share(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    """The share of the CPU time between two readings that was stolen; None without
    both readings or without time between them."""
    if before is None or after is None or after[1] <= before[1]:
        return None
    return max(0.0, (after[0] - before[0]) / (after[1] - before[1]))


def steal_warning(share: float | None) -> str | None:
    if share is None or share < STEAL_WARN:
        return None
    return (
        f"the hypervisor gave {100 * share:.0f} % of this machine's CPU time to other guests "
        "during this repetition (steal time, /proc/stat): its timings may not be the path's"
    )
