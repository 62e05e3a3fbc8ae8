"""A simulated benchmark's cells side by side: on two cores, and on a local Dask
cluster, the same tables as one at a time (a simulation is deterministic: the same
seeded start jitter, the same dates), every run ended."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

pytest.importorskip("ns3", reason="simulation needs the ns3 package (make setup)")

BENCH = ["bench", "--backend", "sim", "--app", "BU", "--class", "B", "--cc", "reno,cubic",
         "--repeat", "2", "--transfer-time", "0.5", "--capacity", "100Mbit"]  # fmt: skip


def bench(out, *extra: str) -> pd.DataFrame:
    res = subprocess.run(
        [sys.executable, "-m", "itb.cli", *BENCH, "--out", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr + res.stdout
    t = pd.read_csv(out / "table.csv")
    return (
        t.drop(columns=[c for c in t.columns if "wall" in c])
        .sort_values(["cc"])
        .reset_index(drop=True)
    )


def test_cells_side_by_side_and_on_dask_give_the_tables_of_one_at_a_time(tmp_path):
    import dask
    from dask.distributed import LocalCluster

    one = bench(tmp_path / "one", "--jobs", "1")
    two = bench(tmp_path / "two", "--jobs", "2")
    pd.testing.assert_frame_equal(one, two)
    # the cluster's scratch space in the test's directory, not /tmp/dask-scratch-space
    with (
        dask.config.set({"temporary-directory": str(tmp_path / "scratch")}),
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as cluster,
    ):
        on_dask = bench(tmp_path / "dask", "--dask", cluster.scheduler_address)
    pd.testing.assert_frame_equal(one, on_dask)
    assert len(one) == 2 and (one["repetitions"] == 2).all()
