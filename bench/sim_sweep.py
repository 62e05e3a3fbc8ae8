#!/usr/bin/env python3
"""Simulation sweeps in parallel (docs/simulation.md): one simulated benchmark of 8
cells (BU, classes B and F, reno, cubic, bic and htcp, one repetition each, scaled to
`--capacity`) run one cell at a time, then side by side on every core, then on a local
Dask cluster of as many workers; the wall times, the speed-up against one at a time
(target ≥ 1.8× on 2 cores), and whether the three tables are identical.

    python3 bench/sim_sweep.py [--capacity 200Mbit] [--transfer-time 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd


def bench(out: Path, a, *extra: str) -> tuple[float, pd.DataFrame]:
    argv = [sys.executable, "-m", "itb.cli", "bench", "--backend", "sim", "--app", "BU",
            "--class", "B,F", "--cc", "reno,cubic,bic,htcp", "--repeat", "1",
            "--transfer-time", str(a.transfer_time), "--capacity", a.capacity,
            "--out", str(out), *extra]  # fmt: skip
    t0 = time.monotonic()
    res = subprocess.run(argv, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if res.returncode != 0:
        sys.exit(res.stderr[-2000:])
    return wall, pd.read_csv(out / "table.csv").sort_values(["class", "cc"]).reset_index(drop=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--capacity", default="200Mbit")
    ap.add_argument("--transfer-time", type=float, default=2.0)
    a = ap.parse_args()
    cores = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as d:
        t1, one = bench(Path(d) / "one", a, "--jobs", "1")
        tn, many = bench(Path(d) / "many", a, "--jobs", str(cores))
        from dask.distributed import LocalCluster

        with LocalCluster(n_workers=cores, threads_per_worker=1, processes=True) as cluster:
            td, on_dask = bench(Path(d) / "dask", a, "--dask", cluster.scheduler_address)
    print(f"8 simulated cells: one at a time {t1:.1f} s; side by side on {cores} cores "
          f"{tn:.1f} s ({t1 / tn:.2f}×, target ≥ 1.8× on 2 cores); on a local Dask cluster "
          f"of {cores} workers {td:.1f} s ({t1 / td:.2f}×)")  # fmt: skip
    print("tables identical:", one.equals(many) and one.equals(on_dask))
    return 0


if __name__ == "__main__":
    sys.exit(main())
