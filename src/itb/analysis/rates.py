"""Goodput as rates a figure can draw (docs/metrics.md, "Goodput over time"): each
transfer's samples over intervals long enough to mean a rate, and their sum G(t) spread
over time bins by the time each sample covers.

A receiver logs the bytes its reader took in each interval (100 ms by default). Two
things in such a log are not rates: a transfer's last sample, which may cover
microseconds (the last bytes, read at once from the socket buffer: 101 kB over 16.7 µs
is not 48 Gbit/s), and a sample that ends just after a bin's edge, which `aggregate_goodput`
(itb.analysis.series) puts whole in the next bin, beside the next sample of the same
transfer (two samples' bytes in one bin: a spike of twice the rate). Here a sample shorter
than half the log's usual interval joins its neighbour of the same transfer (the one
before; a transfer's first, the one after), and a sample's bytes are spread uniformly over
the time it covers [t − interval, t] and split between the bins it overlaps."""

from __future__ import annotations

import numpy as np
import pandas as pd

from itb.analysis import tables
from itb.analysis.series import common_interval_s

MIN_INTERVAL_SHARE = 0.5  # of the log's usual interval, for a sample to stand alone
_KEY = ["repetition", "transfer"]


def goodput_rates(samples: pd.DataFrame) -> pd.DataFrame:
    """Each transfer's goodput samples with the short ones joined to a neighbour: columns
    repetition, transfer, start_ns, t_ns, bytes, goodput_bps (bytes · 8 over the time
    from start_ns to t_ns)."""
    gp = samples[(samples["series"] == "goodput") & samples["bytes"].notna()]
    gp = gp[gp["interval_s"] > 0].sort_values([*_KEY, "t_ns"])
    cols = [*_KEY, "start_ns", "t_ns", "bytes", "goodput_bps"]
    if gp.empty:
        return pd.DataFrame({c: pd.Series(dtype="float64") for c in cols})
    usual = common_interval_s(gp["interval_s"])
    short = (gp["interval_s"] < MIN_INTERVAL_SHARE * usual).to_numpy()
    flow = gp.groupby(_KEY, sort=False).ngroup().to_numpy()
    first = np.r_[True, flow[1:] != flow[:-1]]
    last = np.r_[flow[1:] != flow[:-1], True]
    # a block starts at every sample but a short one that is not its transfer's first;
    # a short first sample (with a next one) joins the block after it
    starts = ~short | first
    block = np.cumsum(starts)
    forward = short & first & ~last
    block[forward] += 1
    start_ns = gp["t_ns"].to_numpy(np.int64) - np.round(gp["interval_s"] * 1e9).astype(np.int64)
    out = (
        gp.assign(_block=block, start_ns=start_ns)
        .groupby("_block", sort=False)
        .agg(
            repetition=("repetition", "first"),
            transfer=("transfer", "first"),
            start_ns=("start_ns", "min"),
            t_ns=("t_ns", "max"),
            bytes=("bytes", "sum"),
        )
        .reset_index(drop=True)
    )
    out["goodput_bps"] = out["bytes"] * 8 / ((out["t_ns"] - out["start_ns"]) / 1e9)
    return out[cols]


def aggregate_rate(
    samples: pd.DataFrame, transfers: pd.DataFrame, direction: str | None = "forward",
    bin_s: float | None = None, per_transfer: bool = False,
) -> pd.DataFrame:  # fmt: skip
    """G(t) per repetition from `goodput_rates`: each sample's bytes spread over its
    covered time and split between the bins it overlaps (bin_s: the log's usual interval
    by default). Columns repetition, t_s (the bin's end after the repetition's
    rep_start_ns), goodput_bps, bytes; with `per_transfer`, each transfer's own (and its
    `transfer` column)."""
    tables.validate(samples, "samples")
    tables.validate(transfers, "transfers")
    which = transfers if direction is None else transfers[transfers["direction"] == direction]
    chosen = which[_KEY].drop_duplicates()
    rates = goodput_rates(samples).merge(chosen, on=_KEY)
    keys = _KEY if per_transfer else ["repetition"]
    cols = [*keys, "t_s", "goodput_bps", "bytes"]
    if rates.empty:
        return pd.DataFrame({c: pd.Series(dtype="float64") for c in cols})
    gp = samples[samples["series"] == "goodput"]
    step = round((bin_s or common_interval_s(gp["interval_s"])) * 1e9)
    origin = transfers.groupby("repetition")["rep_start_ns"].min()
    parts = []
    for key, r in rates.groupby(keys):
        rep = key[0]
        zero = int(origin[rep])
        a = r["start_ns"].to_numpy(np.int64) - zero
        b = r["t_ns"].to_numpy(np.int64) - zero
        nbytes = r["bytes"].to_numpy(float)
        first, last = a // step, (b - 1) // step  # bins [k·step, (k+1)·step)
        lo, hi = int(first.min()), int(last.max())
        acc = np.zeros(hi - lo + 1)
        for k in range(int((last - first).max()) + 1):  # each bin a sample overlaps
            bin_ = first + k
            inside = bin_ <= last
            overlap = np.minimum(b, (bin_ + 1) * step) - np.maximum(a, bin_ * step)
            share = np.where(inside, overlap / (b - a), 0.0)
            np.add.at(acc, (bin_ - lo)[inside], (nbytes * share)[inside])
        ks = np.arange(lo, hi + 1)
        parts.append(
            pd.DataFrame(
                {
                    **dict(zip(keys, key)),
                    "t_s": (ks + 1) * step / 1e9,
                    "goodput_bps": acc * 8 / (step / 1e9),
                    "bytes": acc,
                }
            )  # fmt: skip
        )
    return pd.concat(parts, ignore_index=True)[cols]


BINS_S = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
OVER_LINK = 1.01  # a drawn rate may exceed the link's by 1 % (its log's own jitter)


def aggregate_within(
    samples: pd.DataFrame, transfers: pd.DataFrame, capacity_bps: float | None,
    direction: str = "forward",
) -> tuple[pd.DataFrame, float]:  # fmt: skip
    """G(t) over the shortest bins of BINS_S (from the log's interval up) in which it
    stays within the link's rate (+1 %), and that bin. Receivers that fall behind (their
    reader short of CPU) take their socket buffers' backlog at once when they catch up:
    over short bins their reads then exceed what the link carried."""
    usual = common_interval_s(samples.loc[samples["series"] == "goodput", "interval_s"])
    bins = [usual, *(b for b in BINS_S if b > usual * 1.0001)]
    for b in bins:
        G = aggregate_rate(samples, transfers, direction, b)
        if capacity_bps is None or G.empty or G["goodput_bps"].max() <= OVER_LINK * capacity_bps:
            break
    return G, b


def per_transfer_within(samples: pd.DataFrame, transfers: pd.DataFrame,
                        capacity_bps: float | None) -> tuple[pd.DataFrame, float]:  # fmt: skip
    """Each transfer's goodput (columns repetition, transfer, t_s after the repetition's
    start, goodput_bps) at the log's interval, or over the shortest bins of BINS_S in
    which no transfer exceeds the link (its reader catching up, as for G(t)), and that
    bin."""
    rates = goodput_rates(samples)
    if rates.empty:
        return rates.assign(t_s=rates["t_ns"])[[*_KEY, "t_s", "goodput_bps"]], 0.0
    usual = common_interval_s(samples.loc[samples["series"] == "goodput", "interval_s"])
    if capacity_bps is None or rates["goodput_bps"].max() <= OVER_LINK * capacity_bps:
        origin = transfers.groupby("repetition")["rep_start_ns"].min()
        t_s = (rates["t_ns"] - rates["repetition"].map(origin)) / 1e9
        return rates.assign(t_s=t_s)[[*_KEY, "t_s", "goodput_bps"]], usual
    b, each = usual, rates.iloc[0:0]
    for b in (x for x in BINS_S if x > usual * 1.0001):
        each = aggregate_rate(samples, transfers, None, b, per_transfer=True)
        if each.empty or each["goodput_bps"].max() <= OVER_LINK * capacity_bps:
            break
    return each[[*_KEY, "t_s", "goodput_bps"]], b
