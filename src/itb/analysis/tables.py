"""Column contracts of the tidy tables that analysis reads (transfers, samples, bottleneck).

The engine writes these tables as Parquet in the run directory; analysis reads only them,
so the column names and dtypes below are the interface between the two.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

# dtypes are pandas names; "str" columns may hold missing values (None/NaN) where noted.
TRANSFERS_DTYPES: dict[str, str] = {
    "repetition": "int64",
    "transfer": "str",  # id, unique within a repetition
    "kind": "str",  # "transfer" | "pingpong" | "background"
    "direction": "str",  # "forward" | "reverse" | "background"
    "src": "str",
    "dst": "str",
    "cc": "str",
    "streams": "int64",
    "bytes_expected": "int64",
    "bytes": "int64",  # counted at the receiver
    "start_ns": "int64",  # first byte sent, CLOCK_MONOTONIC
    "end_ns": "int64",  # last byte received
    "completion_s": "float64",  # (end_ns - start_ns) / 1e9; NaN if not completed
    "ok": "bool",
    "error": "str",  # missing when ok
    "access_rate_bps": "float64",  # source's access capacity C_a; NaN = unlimited
    "rtt_s": "float64",  # configured path RTT
    "rep_start_ns": "int64",  # start of the repetition's timeline
}

SAMPLES_DTYPES: dict[str, str] = {
    "repetition": "int64",
    "transfer": "str",
    "series": "str",  # "goodput" | "tcp_info"
    "stream": "int64",  # -1 for goodput rows (per transfer)
    "t_ns": "int64",  # end of interval (goodput) or sample time (tcp_info)
    "interval_s": "float64",  # NaN for tcp_info
    "bytes": "float64",  # payload bytes received in the interval; NaN for tcp_info
    "goodput_bps": "float64",  # bytes * 8 / interval_s; NaN for tcp_info
    "cwnd": "float64",  # this and the following: NaN for goodput rows
    "ssthresh": "float64",
    "rtt_us": "float64",
    "total_retrans": "float64",
    "pacing_rate_bps": "float64",
    "delivery_rate_bps": "float64",
}

BOTTLENECK_DTYPES: dict[str, str] = {
    "repetition": "int64",
    "link": "str",
    "direction": "str",  # "forward" | "reverse"
    "t_ns": "int64",  # end of interval
    "interval_s": "float64",
    "bytes": "int64",  # wire bytes forwarded (Ethernet frames)
    "packets": "int64",
    "drops_queue": "int64",
    "drops_loss": "int64",
    "queue_bytes": "int64",  # occupancy at the end of the interval
    "queue_max_bytes": "int64",  # highest occupancy within the interval
    "late_packets": "int64",
    "max_lag_us": "int64",
}

TRANSFERS_COLUMNS: tuple[str, ...] = tuple(TRANSFERS_DTYPES)
SAMPLES_COLUMNS: tuple[str, ...] = tuple(SAMPLES_DTYPES)
BOTTLENECK_COLUMNS: tuple[str, ...] = tuple(BOTTLENECK_DTYPES)

TABLES: Mapping[str, tuple[str, ...]] = {
    "transfers": TRANSFERS_COLUMNS,
    "samples": SAMPLES_COLUMNS,
    "bottleneck": BOTTLENECK_COLUMNS,
}


def validate(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """Check that `df` has every column of table `name`; returns `df` unchanged.

    Extra columns are allowed (newer writers may add some). Raises ValueError naming
    the missing columns, or the table if `name` is unknown.
    """
    if name not in TABLES:
        raise ValueError(f"unknown table {name!r}; known: {', '.join(TABLES)}")
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"{name}: expected a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in TABLES[name] if c not in df.columns]
    if missing:
        raise ValueError(f"{name}: missing columns: {', '.join(missing)}")
    return df
