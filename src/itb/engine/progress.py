"""Progress of a running repetition: bytes received per transfer and an ETA, read from
the receivers' goodput logs as they grow (never from the processes themselves)."""

from __future__ import annotations

import time

from itb.engine.processes import ProcSpec


class _Tail:
    """Sums the `bytes` column of a growing CSV (t_ns,bytes,...) without rereading it."""

    def __init__(self, path: str):
        self.path, self.offset, self.total, self.partial = path, 0, 0, b""

    def update(self) -> int:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                chunk = f.read()
        except FileNotFoundError:
            return self.total
        self.offset += len(chunk)
        lines = (self.partial + chunk).split(b"\n")
        self.partial = lines.pop()
        for line in lines:
            parts = line.split(b",")
            if len(parts) > 1 and parts[1].isdigit():
                self.total += int(parts[1])
        return self.total


class TransferProgress:
    def __init__(self, procs: list[ProcSpec]):
        self.items: list[tuple[str, int, _Tail]] = []  # (event id, expected bytes, tail)
        for p in procs:
            if p.role == "recv" and "--bytes" in p.argv:
                expected = int(p.argv[p.argv.index("--bytes") + 1])
                self.items.append((p.event, expected, _Tail(p.files["log"])))
        self.started: dict[str, int] = {}  # event id → when its first bytes were seen (ns)

    def line(self, zero_ns: int) -> str:
        now = time.monotonic_ns()
        # before the timeline's zero (the prelude: listeners starting) there is no time to
        # show yet, and a negative one reads as a fault
        parts = ["starting" if now < zero_ns else f"t = {(now - zero_ns) / 1e9:6.1f} s"]
        done = 0
        for event, expected, tail in self.items:
            got = tail.update()
            if got >= expected:
                done += 1
                continue
            if got > 0:
                first = self.started.setdefault(event, now)
                rate = got / max(1e-9, (now - first) / 1e9)
                eta = (expected - got) / rate if rate > 0 else float("inf")
                parts.append(f"{event} {got / 1e6:.1f}/{expected / 1e6:.0f} MB ETA {eta:.0f} s")
        if self.items:
            parts.insert(1, f"{done}/{len(self.items)} transfers done")
        return " · ".join(parts[:6]) + (" …" if len(parts) > 6 else "")
