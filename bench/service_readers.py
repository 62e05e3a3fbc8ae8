#!/usr/bin/env python3
"""Quotes beside schedule readers (docs/service.md, "Measured"): a store of `--plans`
(20 000) held and committed plans served by a real `itb serve`, one client quoting
`--quotes` (300) times while `--readers` (5) clients, processes of their own, read the
link's schedule in a loop or every `--every` seconds (the page: 5)
(tests/service/readers.py); the quotes' p50 / p99 answer time beside the same without
readers, and the schedules read. Issue 42 measured quotes' p50 at 6.4 s with five
readers at 14–20 k plans, p99 2.7 s with three open pages.

    python3 bench/service_readers.py [--plans 20000] [--readers 5] [--quotes 300] [--every 0]

Exit status 0 once printed (figures reported, not asserted).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # (tests.service helpers)

from tests.service import readers  # noqa: E402
from tests.service.server import Server  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plans", type=int, default=20_000)
    ap.add_argument("--readers", type=int, default=5)
    ap.add_argument("--quotes", type=int, default=300)
    ap.add_argument(
        "--every",
        type=float,
        default=0.0,
        help="seconds between a reader's reads (0: in a loop; the page reloads every 5 s)",
    )
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="itb-readers-") as tmp:
        db = Path(tmp) / "service.db"
        t0 = time.perf_counter()
        readers.fill(db, args.plans)
        print(f"{args.plans} plans stored in {time.perf_counter() - t0:.0f} s")
        s = Server(db, rate="10Gbit")
        try:
            for n in (0, args.readers):
                got, reads = asyncio.run(readers.measure(s.url, n, args.quotes, args.every))
                got.sort()
                print(
                    f"  {n} readers: quote p50 {statistics.median(got) * 1e3:.1f} ms, p99 "
                    f"{got[int(0.99 * len(got))] * 1e3:.1f} ms; {reads} schedules read",
                    flush=True,
                )
        finally:
            s.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
