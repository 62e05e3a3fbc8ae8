"""Kernel counters sampled with their time, inside a namespace:

    python -m itb.calibration.counters SECONDS SPEC...

Every 50 ms until SECONDS pass or SIGTERM, one row [CLOCK_MONOTONIC ns, values...] of what
each SPEC names, in order; the clock is read right before the values, so a rate between
two rows is exact to microseconds (a stamp taken outside `ip netns exec` is not: starting
it takes milliseconds, more on a busy host). Prints {"specs": [...], "rows": [...]} once.

- `IF:COUNTER`: /sys/class/net/IF/statistics/COUNTER of the namespace it runs in (one value);
- `cpu`: idle + iowait and steal jiffies of /proc/stat, all cores (two values; idle time
  is measured, busy time only sampled by the tick, which a VM under load loses);
- `sched:PID` or `sched:PID:TID`: time run and time waited runnable for a CPU, in ns, of
  the thread or summed over every thread of the process (two values; /proc/…/schedstat).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

PERIOD_S = 0.05


def _schedstat(path: str) -> list[int]:
    try:
        with open(path) as f:
            run, wait, _ = f.read().split()
        return [int(run), int(wait)]
    except (FileNotFoundError, ProcessLookupError, ValueError):
        return [0, 0]  # the thread has gone: what it ran is no longer counted


def reader(spec: str):
    """A function returning the current value(s) of one SPEC, as a list."""
    if spec == "cpu":
        f = open("/proc/stat")

        def cpu() -> list[int]:
            f.seek(0)
            v = [int(x) for x in f.readline().split()[1:9]]  # user … steal
            return [v[3] + v[4], v[7]]

        return cpu
    if spec.startswith("sched:"):
        ids = [int(x) for x in spec.split(":")[1:]]
        if len(ids) == 2:
            return lambda: _schedstat(f"/proc/{ids[0]}/task/{ids[1]}/schedstat")

        def process() -> list[int]:
            try:
                tids = os.listdir(f"/proc/{ids[0]}/task")
            except FileNotFoundError:
                tids = []
            per = [_schedstat(f"/proc/{ids[0]}/task/{t}/schedstat") for t in tids]
            return [sum(p[0] for p in per), sum(p[1] for p in per)]

        return process
    ifname, counter = spec.split(":")
    f = open(f"/sys/class/net/{ifname}/statistics/{counter}")

    def counter_value() -> list[int]:
        f.seek(0)
        return [int(f.read())]

    return counter_value


def sample(seconds: float, specs: list[str]) -> dict:
    readers = [reader(s) for s in specs]
    stop = []
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    rows = []
    end = time.monotonic_ns() + int(seconds * 1e9)
    try:
        while not stop:
            now = time.monotonic_ns()
            rows.append([now, *(v for r in readers for v in r())])
            if now >= end:
                break
            time.sleep(PERIOD_S)
    finally:
        signal.signal(signal.SIGTERM, previous)
    return {"specs": specs, "rows": rows}


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    print(json.dumps(sample(float(argv[0]), argv[1:])), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
