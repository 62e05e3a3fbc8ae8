"""A sweep cell's tables as the benchmark and the studies read them."""

import pandas as pd

from itb import rundir
from itb.analysis.cells import cell_table, forward_completions
from itb.sweep.index import IndexCell


def test_a_cell_whose_runs_left_no_rows_reads_as_nothing_yet(tmp_path):
    cell = IndexCell(name="a")  # its run: cells/a
    assert cell_table(tmp_path, cell, "transfers") is None  # not run yet
    (tmp_path / "cells" / "a").mkdir(parents=True)
    # every repetition so far interrupted: the run wrote a table without rows or columns
    rundir.write_table(tmp_path / "cells" / "a" / "transfers.parquet", pd.DataFrame())
    assert cell_table(tmp_path, cell, "transfers") is None
    assert forward_completions(tmp_path, cell) == []
    # (or with only the column a later step adds)
    rundir.write_table(
        tmp_path / "cells" / "a" / "transfers.parquet",
        pd.DataFrame({"corrupt_window": pd.Series([], dtype=object)}),
    )
    assert forward_completions(tmp_path, cell) == []
    rundir.write_table(
        tmp_path / "cells" / "a" / "transfers.parquet",
        pd.DataFrame(
            {
                "direction": ["forward", "reverse", "forward"],
                "ok": [True, True, False],
                "completion_s": [1.5, 2.0, float("nan")],
            }
        ),
    )
    assert forward_completions(tmp_path, cell) == [1.5]
