"""Readers of a sweep's cells (benchmark, studies) that the report and the drivers share."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def forward_completions(out: Path, cell: dict) -> list[float]:
    """Completion times (s) of a cell's completed forward transfers, all repetitions."""
    path = out / cell["run"] / "transfers.parquet"
    if not path.exists():
        return []
    tr = pd.read_parquet(path)
    tr = tr[(tr["direction"] == "forward") & tr["ok"]]
    return [float(x) for x in tr["completion_s"].dropna()]


def fit_loss(point: dict) -> float:
    """The loss rate a response-function point is fitted at: what the link applied, else
    the configured p."""
    return point.get("p_link") or point["p"]
