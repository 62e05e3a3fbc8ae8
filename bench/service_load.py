#!/usr/bin/env python3
"""`itb serve` under load (docs/service.md, "Measured"): a real server on loopback, a
store in a temporary directory, `--clients` concurrent HTTP clients for `--seconds`
(tests/service/load.py: 10 B – 20 MB requests, 60 % of holds committed, one commitment
in ten cancelled, one schedule read in twenty), then every stored plan re-checked
exactly (itb.service.intplan.violations). Prints the requests, the answers' status
codes, the quotes' p50 / p99 answer time and the plans failing the checker (target 0).

    python3 bench/service_load.py [--clients 100] [--seconds 30]

Exit status 0 once printed (figures reported, not asserted).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # (tests.service helpers)

from tests.service import load  # noqa: E402
from tests.service.server import GBIT, MARGIN, Server  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="itb-load-") as tmp:
        s = Server(Path(tmp) / "service.db")
        try:
            got = asyncio.run(load.run(s.url, args.clients, args.seconds, args.seed))
        finally:
            s.stop()
        planned, failing, bad = load.check_store(s.db, GBIT, MARGIN)
    n = len(got.quotes_s)
    print(f"{args.clients} clients for {args.seconds:g} s: {n} quotes ({n / args.seconds:.0f}/s)")
    print(f"answers: {dict(sorted((f'{k[0]} {k[1]}', v) for k, v in got.codes.items()))}")
    print(f"quote states: {dict(got.states)}")
    print(
        f"quote answer time p50 {got.quantile(0.5) * 1e3:.1f} ms, p99 {got.quantile(0.99) * 1e3:.1f} ms"
    )
    print(f"stored plans {planned}, failing the checker {failing}")
    for line in bad[:10]:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
