"""Time series and volumes of a run (docs/metrics.md): goodput per transfer and aggregate
G(t); the measured flows' efficiency and utilisation (from what their senders put on the
wire); the bottleneck link's throughput, load and queueing delay. Pure functions over the
tidy tables (`itb.analysis.tables`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from itb.analysis import tables
from itb.analysis.statistics import floats

DEFAULT_BIN_S = 0.1  # bottleneck bin when no goodput interval is known

_GOODPUT_COLUMNS = ["repetition", "t_s", "goodput_bps", "bytes"]
_THROUGHPUT_COLUMNS = [
    "repetition",
    "t_s",
    "throughput_bps",
    "bytes",
    "packets",
    "queue_bytes_max",
    "drops",
]


def finite_rate(value: float | None, what: str) -> float | None:
    """None/NaN = unlimited (None); otherwise a positive finite rate."""
    if value is None or pd.isna(value):
        return None
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{what} must be a positive finite rate or None, got {value!r}")
    return v


def _bin_ns(bin_s: float) -> int:
    """Bin width in integer nanoseconds (binning is done in integers, exact at edges)."""
    try:
        f = float(bin_s)
    except (TypeError, ValueError):
        f = math.nan
    if not (math.isfinite(f) and round(f * 1e9) >= 1):
        raise ValueError(f"bin_s must be a positive number of seconds (>= 1 ns), got {bin_s!r}")
    return round(f * 1e9)


def common_interval_s(interval_s: Iterable[float]) -> float:
    """Most common sampling interval (rounded to 1 µs, ties to the smallest).

    Measured intervals jitter by microseconds, so the mode is taken after rounding.
    """
    us = (pd.Series(list(interval_s), dtype="float64").dropna() * 1e6).round()
    us = us[us > 0]
    if us.empty:
        raise ValueError("no positive sampling interval to bin on")
    return float(us.mode().min()) / 1e6


def _binned(
    df: pd.DataFrame,
    origin_ns: Mapping[int, int],
    bin_s: float,
    aggs: Mapping[str, tuple[str, str]],
) -> pd.DataFrame:
    """Aggregate rows into bins of width bin_s per repetition, gaps filled with zeros.

    Bins are closed on the right, ((k-1)·bin, k·bin] after the origin, because t_ns ends
    an interval: a sample ending exactly on a bin edge belongs to the bin it completes.
    """
    step = _bin_ns(bin_s)
    origins = df["repetition"].map(origin_ns)
    if origins.isna().any():
        missing = sorted(set(df.loc[origins.isna(), "repetition"]))
        raise ValueError(f"no start time for repetition(s) {missing}")
    rel = df["t_ns"].to_numpy(np.int64) - origins.to_numpy(np.int64)
    k = -((-rel) // step)  # ceiling division in integers: no float rounding at edges
    grouped = df.assign(_bin=k).groupby(["repetition", "_bin"]).agg(**aggs)
    parts = []
    for rep, sub in grouped.groupby(level=0):
        sub = sub.droplevel(0)
        sub = sub.reindex(range(int(sub.index.min()), int(sub.index.max()) + 1), fill_value=0)
        parts.append(sub.assign(repetition=int(rep), t_s=sub.index.to_numpy(np.int64) * step / 1e9))
    return pd.concat(parts, ignore_index=True)


def select_link(bottleneck: pd.DataFrame, direction: str, link: str | None) -> pd.DataFrame:
    """Rows of one link in one direction; several links without a choice is an error
    (summing them would count the same bytes more than once)."""
    rows = bottleneck[bottleneck["direction"] == direction]
    if link is not None:
        return rows[rows["link"] == link]
    links = sorted(rows["link"].dropna().unique())
    if len(links) > 1:
        raise ValueError(
            f"bottleneck has several links in direction {direction!r}: {links}; pass link="
        )
    return rows


def completed_times(transfers: pd.DataFrame) -> np.ndarray:
    """completion_s where the transfer completed (ok and finite), NaN otherwise."""
    t = transfers["completion_s"].astype("float64").to_numpy()
    ok = transfers["ok"].astype("boolean").fillna(False).to_numpy(bool)
    return np.where(ok & np.isfinite(t), t, np.nan)


# --- goodput -----------------------------------------------------------------------------


def transfer_goodput(transfers: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """Per (repetition, transfer): mean goodput ḡ = bytes·8/completion_s and σ of g_i(t).

    sigma_goodput_bps is the population std (ddof=0) of the transfer's goodput samples;
    mean is NaN for transfers that did not complete, sigma NaN without samples.
    Columns: repetition, transfer, direction, cc, mean_goodput_bps, sigma_goodput_bps,
    n_samples.
    """
    tables.validate(transfers, "transfers")
    tables.validate(samples, "samples")
    t = completed_times(transfers)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(t > 0, transfers["bytes"].astype("float64").to_numpy() * 8 / t, np.nan)
    out = transfers[["repetition", "transfer", "direction", "cc"]].reset_index(drop=True)
    out["mean_goodput_bps"] = mean
    gp = samples[samples["series"] == "goodput"]
    stats = (
        gp.groupby(["repetition", "transfer"])["goodput_bps"]
        .agg(sigma_goodput_bps=lambda s: s.std(ddof=0), n_samples="count")
        .reset_index()
    )
    out = out.merge(stats, on=["repetition", "transfer"], how="left")
    out["n_samples"] = out["n_samples"].fillna(0).astype("int64")
    out.loc[out["n_samples"] == 0, "sigma_goodput_bps"] = np.nan
    return out


def goodput_distribution(goodput_bps: Iterable[float], access_rate_bps: float) -> list[float]:
    """Share of goodput samples in each 1 % bucket of C_a (101 buckets, sum 1).

    Bucket k holds k % ≤ g/C_a·100 < (k+1) %; samples at or above C_a go to bucket 100.
    NaN samples are ignored. Undefined (ValueError) for unlimited C_a or no samples.
    """
    ca = finite_rate(access_rate_bps, "access_rate_bps")
    if ca is None:
        raise ValueError("goodput distribution needs a finite access rate C_a")
    g = floats(goodput_bps)
    g = g[~np.isnan(g)]
    if g.size == 0:
        raise ValueError("goodput distribution of no samples")
    if np.isinf(g).any() or (g < 0).any():
        raise ValueError("goodput samples must be finite and >= 0")
    # g*100 // C_a rather than floor(g/C_a*100): 0.29*100 would land in bucket 28
    k = np.minimum(np.floor_divide(g * 100, ca), 100).astype(np.int64)
    counts = np.bincount(k, minlength=101)
    return [float(c) / g.size for c in counts]


def aggregate_goodput(
    samples: pd.DataFrame,
    transfers: pd.DataFrame,
    direction: str = "forward",
    bin_s: float | None = None,
) -> pd.DataFrame:
    """Aggregate goodput G(t) = Σ_i g_i(t) of the transfers of one direction, per repetition.

    Each goodput sample goes whole to the bin containing its t_ns; payload bytes are summed
    per bin and divided by bin_s. bin_s defaults to the samples' most common interval.
    t_s is the end of the bin relative to the repetition's rep_start_ns; bins between the
    first and last non-empty one are present (0 when idle).
    Columns: repetition, t_s, goodput_bps, bytes (payload bytes in the bin).
    """
    tables.validate(samples, "samples")
    tables.validate(transfers, "transfers")
    chosen = transfers.loc[transfers["direction"] == direction, ["repetition", "transfer"]]
    gp = samples[(samples["series"] == "goodput") & samples["bytes"].notna()]
    gp = gp.merge(chosen.drop_duplicates(), on=["repetition", "transfer"])
    if gp.empty:
        return pd.DataFrame({c: pd.Series(dtype="float64") for c in _GOODPUT_COLUMNS})
    if bin_s is None:
        bin_s = common_interval_s(gp["interval_s"])
    origin = transfers.groupby("repetition")["rep_start_ns"].min().to_dict()
    out = _binned(gp, origin, bin_s, {"bytes": ("bytes", "sum")})
    out["goodput_bps"] = out["bytes"] * 8 / bin_s
    return out[_GOODPUT_COLUMNS]


# --- bottleneck --------------------------------------------------------------------------


def interval_starts(rows: pd.DataFrame) -> pd.Series:
    """The start (ns) of each bottleneck row's interval: the table stamps a row with its
    interval's end (`t_ns`) and holds its length (`interval_s`; missing: 0)."""
    return rows["t_ns"] - (rows["interval_s"].fillna(0) * 1e9).round().astype("int64")


def fairness_goodput(transfers: pd.DataFrame) -> pd.Series:
    """Per transfer of one repetition (indexed as `transfers`), the goodput Jain's index is
    taken over: a completed transfer's ḡ = bytes·8 / completion_s; a failed one's as
    delivered, its bytes·8 over the time it ran, from its start to the repetition's last
    end (it was running until the awaited transfers were done or it timed out: a flow
    starved until it fails counts, at about 0). NaN where its bytes are unknown."""
    t = completed_times(transfers)
    nbytes = pd.to_numeric(transfers["bytes"], errors="coerce").astype("float64").to_numpy()
    start = pd.to_numeric(transfers["start_ns"], errors="coerce").astype("float64").to_numpy()
    end = pd.to_numeric(transfers["end_ns"], errors="coerce").astype("float64").to_numpy()
    last = np.nanmax(end) if np.isfinite(end).any() else np.nan
    ran_s = (np.fmax(end, last) - start) / 1e9
    with np.errstate(divide="ignore", invalid="ignore"):
        done = np.where(t > 0, nbytes * 8 / t, np.nan)
        failed = np.where(nbytes == 0, 0.0, np.where(ran_s > 0, nbytes * 8 / ran_s, np.nan))
    return pd.Series(np.where(np.isfinite(t), done, failed), index=transfers.index)


def bottleneck_throughput(
    bottleneck: pd.DataFrame,
    direction: str = "forward",
    bin_s: float = DEFAULT_BIN_S,
    rep_start: Mapping[int, int] | None = None,
    link: str | None = None,
) -> pd.DataFrame:
    """Throughput on the wire at the bottleneck X(t) = Σ wire bytes·8 / bin_s, per repetition.

    t_s is the end of the bin relative to rep_start[repetition] (ns) when given, else to
    the start of the repetition's first bottleneck interval. With several links, `link`
    picks one. Columns: repetition, t_s, throughput_bps, bytes, packets, queue_bytes_max
    (highest occupancy within the bin), drops (queue + loss).
    """
    tables.validate(bottleneck, "bottleneck")
    rows = select_link(bottleneck, direction, link)
    if rows.empty:
        return pd.DataFrame({c: pd.Series(dtype="float64") for c in _THROUGHPUT_COLUMNS})
    if rep_start is None:
        origin = interval_starts(rows).groupby(rows["repetition"]).min().to_dict()
    else:
        origin = dict(rep_start)
    rows = rows.assign(
        drops=rows["drops_queue"] + rows["drops_loss"],
        peak=np.maximum(rows["queue_bytes"], rows["queue_max_bytes"]),
    )
    out = _binned(
        rows,
        origin,
        bin_s,
        {
            "bytes": ("bytes", "sum"),
            "packets": ("packets", "sum"),
            "queue_bytes_max": ("peak", "max"),
            "drops": ("drops", "sum"),
        },
    )
    out["throughput_bps"] = out["bytes"] * 8 / bin_s
    return out[_THROUGHPUT_COLUMNS]


def _wire_rows(transfers: pd.DataFrame) -> pd.DataFrame:
    """Rows whose sender reported what it put on the wire (`wire_bytes` > 0)."""
    if "wire_bytes" not in transfers:
        return transfers.iloc[0:0]
    wire = pd.to_numeric(transfers["wire_bytes"], errors="coerce")
    return transfers[wire.notna() & (wire > 0)]


def efficiency(transfers: pd.DataFrame) -> float:
    """E = Σ payload delivered / Σ wire bytes sent, over the given flows (RR-6244's
    E = G/X with X = Σ x_i over the measured flows, as a ratio of integrals).

    Payload is `bytes` (counted at the receiver); wire bytes are `wire_bytes` (the
    sender's segments as framed on the link, retransmissions and headers included).
    Flows without wire bytes are left out of both sums; none left: ValueError.
    """
    rows = _wire_rows(transfers)
    rows = rows[pd.to_numeric(rows["bytes"], errors="coerce").notna()]
    if rows.empty:
        raise ValueError("efficiency needs flows with both delivered and wire bytes")
    return float(rows["bytes"].astype("float64").sum()) / float(
        rows["wire_bytes"].astype("float64").sum()
    )


def utilisation(transfers: pd.DataFrame, capacity_bps: float | None) -> float | None:
    """U = X̄ / C with X(t) = Σ x_i(t) over the given flows (RR-6244: "the used bandwidth
    over the provided capacity"): the wire bits of theirs that crossed the bottleneck,
    over their busy span, divided by C. None when C is unlimited.

    What crossed is the sender's wire bytes without its retransmissions (each payload
    byte once, with its share of the headers): a segment dropped in a queue and its
    retransmission cross once, so counting both (the sender's view) could make U exceed
    1 (seen: 1.015 for BBR with heavy loss). A spurious retransmission, which crossed
    twice, is counted once. Without `bytes_sent`/`bytes_retrans`, all its wire bytes.

    The busy span of a repetition runs from the flows' first start_ns to their last end_ns
    (idle time between flows counts: capacity the application left unused); repetitions
    are pooled (total bits / total span / C). Every flow needs its wire_bytes (a missing
    one would make U look lower), and a span needs a finite end: ValueError.
    """
    cap = finite_rate(capacity_bps, "capacity_bps")
    if cap is None:
        return None
    if transfers.empty:
        raise ValueError("utilisation of no flows")
    known = "wire_bytes" in transfers  # 0 is known: a flow that sent nothing
    if not known or pd.to_numeric(transfers["wire_bytes"], errors="coerce").isna().any():
        raise ValueError("utilisation needs every flow's wire bytes")
    bits = span_s = 0.0
    for _, rep in transfers.groupby("repetition"):
        start = pd.to_numeric(rep["start_ns"], errors="coerce").min()
        end = pd.to_numeric(rep["end_ns"], errors="coerce").max()
        if pd.isna(start) or pd.isna(end) or end <= start:
            raise ValueError("utilisation needs each repetition's first start and last end")
        bits += float(crossed_wire_bytes(rep).sum()) * 8
        span_s += (float(end) - float(start)) / 1e9
    return bits / span_s / cap


def crossed_wire_bytes(transfers: pd.DataFrame) -> pd.Series:
    """Per flow, its wire bytes without the share of its retransmitted payload:
    wire_bytes × (1 − bytes_retrans / bytes_sent) (`bytes_sent` counts retransmissions,
    as tcp_info's does); its whole wire_bytes where either count is missing."""
    wire = pd.to_numeric(transfers["wire_bytes"], errors="coerce").astype("float64")
    if "bytes_sent" not in transfers or "bytes_retrans" not in transfers:
        return wire
    sent = pd.to_numeric(transfers["bytes_sent"], errors="coerce").astype("float64")
    retrans = pd.to_numeric(transfers["bytes_retrans"], errors="coerce").astype("float64")
    known = sent.notna() & retrans.notna() & (sent > 0)
    share = (retrans / sent.where(known)).clip(0, 1).fillna(0.0)
    return wire * (1 - share)


def link_utilisation(X: pd.DataFrame, capacity_bps: float | None) -> float | None:
    """Load of the bottleneck link: mean X_link(t) over its busy span divided by C, with
    every frame on the link counted (measured flows, adverse traffic, ACKs); None when C
    is unlimited.

    The busy span runs from the first to the last bin that carried bytes (per repetition),
    idle bins inside it included: time before the first and after the last frame does not
    count, a stall in mid-run does. A link that never carried anything has 0.
    """
    cap = finite_rate(capacity_bps, "capacity_bps")
    if cap is None:
        return None
    if X.empty:
        raise ValueError("link utilisation of an empty throughput series")
    total, bins = 0.0, 0
    groups = X.groupby("repetition") if "repetition" in X else [(None, X)]
    for _, x in groups:
        x = x.sort_values("t_s")
        busy = np.flatnonzero(x["throughput_bps"].to_numpy() > 0)
        if busy.size:
            span = x["throughput_bps"].to_numpy()[busy[0] : busy[-1] + 1]
            total, bins = total + float(span.sum()), bins + span.size
    return total / bins / cap if bins else 0.0


def queueing_delay(
    bottleneck: pd.DataFrame,
    capacity_bps: float | None,
    direction: str = "forward",
    link: str | None = None,
) -> dict:
    """Queueing delay at the bottleneck, queue bytes·8 / C in seconds: mean and max.

    mean_s: time average of the end-of-interval occupancy over each repetition's busy
    span (first to last interval that forwarded bytes); max_s: from the highest
    occupancy within any interval (queue_max_bytes). Both None when C is unlimited.
    """
    tables.validate(bottleneck, "bottleneck")
    cap = finite_rate(capacity_bps, "capacity_bps")
    if cap is None:
        return {"mean_s": None, "max_s": None}
    rows = select_link(bottleneck, direction, link)
    if rows.empty:
        raise ValueError(f"no bottleneck rows in direction {direction!r}")
    spans = []
    for _, rep_rows in rows.groupby("repetition"):
        busy_t = rep_rows.loc[rep_rows["bytes"] > 0, "t_ns"]
        if not busy_t.empty:  # never busy: the whole (idle) series is the span
            rep_rows = rep_rows[rep_rows["t_ns"].between(busy_t.min(), busy_t.max())]
        spans.append(rep_rows)
    span = pd.concat(spans)
    peak = max(span["queue_bytes"].max(), span["queue_max_bytes"].max())
    return {"mean_s": float(span["queue_bytes"].mean()) * 8 / cap, "max_s": float(peak) * 8 / cap}
