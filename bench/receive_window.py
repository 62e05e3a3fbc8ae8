#!/usr/bin/env python3
"""The receive window's autotuning, the testbed's beside itb-sim's (docs/simulation.md,
"Outside the study's cells"): a scenario is run once on the local testbed with Linux's
`tcp:tcp_rcvbuf_grow` tracepoint on, and once simulated with ITB_SIM_TRACE_RCVBUF set
(itb-sim prints each growth as the tracepoint does); the first growths of the first
transfer's receiver are printed side by side (the bytes read over the receiver round
trip that grew the buffer, less those still unread; the last measure's; the buffer and
its window clamp before the growth), then every transfer's completion time on each
side and the difference. One repetition a side: the testbed's vary (the staggered
scenario's second transfer took 3.7 s, 9.2-10.1 s and 14.6 s in nine repetitions on
2026-12-07, docs/simulation.md), the simulation's do not.

    python3 bench/receive_window.py [SCENARIO] [--growths N]

SCENARIO defaults to scenarios/crossval/staggered-3x150M-reno.toml. Needs root (the
testbed and tracefs at /sys/kernel/tracing); traffic only between ITB's namespaces.
Exit status 0 once the figures are printed.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parent.parent
ITB = Path(sys.executable).parent / "itb"
TRACEFS = Path("/sys/kernel/tracing")
EVENT = TRACEFS / "events" / "tcp" / "tcp_rcvbuf_grow" / "enable"
FIELDS = re.compile(r"(\w+)=(\S+)")


def run(scenario: Path, out: Path, *extra: str, env: dict | None = None) -> None:
    res = subprocess.run(
        [str(ITB), "run", str(scenario), "--out", str(out), *extra],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    if res.returncode != 0:
        sys.exit(f"itb run {' '.join(extra)} failed:\n{res.stdout}{res.stderr}")


def traced_testbed_run(scenario: Path, out: Path) -> list[dict]:
    """The scenario on the testbed with the tracepoint on: the first receiver's growths."""
    on = TRACEFS / "tracing_on"
    was_on = on.read_text().strip()
    (TRACEFS / "trace").write_text("")
    EVENT.write_text("1")
    on.write_text("1")
    try:
        run(scenario, out)
        text = (TRACEFS / "trace").read_text()
    finally:
        EVENT.write_text("0")
        on.write_text(was_on)
        (TRACEFS / "trace").write_text("")
    return first_receivers_growths(text)


def first_receivers_growths(text: str) -> list[dict]:
    """The tcp_rcvbuf_grow lines of the receiver on the first transfer's port (ITB
    numbers them from 20001), as dicts of their fields."""
    rows = [dict(FIELDS.findall(line)) for line in text.splitlines() if "tcp_rcvbuf_grow:" in line]
    return [r for r in rows if r.get("sport") == "20001"]


def simulated_run(scenario: Path, out: Path) -> list[dict]:
    run(scenario, out, "--backend", "sim", env={**os.environ, "ITB_SIM_TRACE_RCVBUF": "1"})
    return first_receivers_growths((out / "rep-001" / "sim.err").read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "scenario",
        nargs="?",
        type=Path,
        default=REPO / "scenarios" / "crossval" / "staggered-3x150M-reno.toml",
    )
    ap.add_argument("--growths", type=int, default=6, help="growths shown (default 6)")
    a = ap.parse_args()  # fmt: skip
    if not EVENT.exists():
        sys.exit(f"{EVENT}: no tcp_rcvbuf_grow tracepoint (needs root and kernel ≥ 6.17)")
    with tempfile.TemporaryDirectory(prefix="itb-rwnd-") as d:
        emu = traced_testbed_run(a.scenario, Path(d) / "emu")
        sim = simulated_run(a.scenario, Path(d) / "sim")
        print("first transfer's receiver, autotuning growths (testbed | itb-sim):")
        print(f"{'#':>2} {'read (B)':>10} {'space':>8} {'rcvbuf':>9} {'clamp':>9} | "
              f"{'read (B)':>10} {'space':>8} {'rcvbuf':>9} {'clamp':>9}")  # fmt: skip
        for k in range(min(a.growths, max(len(emu), len(sim)))):
            cells = []
            for rows in (emu, sim):
                if k < len(rows):
                    r = rows[k]
                    got = int(r["copied"]) - int(r["inq"])
                    cells.append(
                        f"{got:>10} {r['space']:>8} {r['rcvbuf']:>9} {r['window_clamp']:>9}"
                    )
                else:
                    cells.append(" " * 39)
            print(f"{k + 1:>2} {cells[0]} | {cells[1]}")
        te = pd.read_parquet(Path(d) / "emu" / "transfers.parquet").set_index("transfer")
        ts = pd.read_parquet(Path(d) / "sim" / "transfers.parquet").set_index("transfer")
        print("\ncompletion time (s): transfer, testbed, itb-sim, difference")
        for tid in te.index:
            e, s = te.at[tid, "completion_s"], ts.at[tid, "completion_s"]
            print(f"  {tid}: {e:.3f} {s:.3f} {100 * (s - e) / e:+.1f} %")
        me, ms = te["completion_s"].mean(), ts["completion_s"].mean()
        print(f"  mean: {me:.3f} {ms:.3f} {100 * (ms - me) / me:+.1f} %")


if __name__ == "__main__":
    main()
