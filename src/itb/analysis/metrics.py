"""Per-run metrics of ITB (docs/metrics.md): completion times, goodput, fairness, bottleneck use.

Pure functions over the tidy tables (see `itb.analysis.tables`); `run_metrics` combines
them per repetition and over repetitions into one JSON-serialisable dict.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from itb.analysis import tables
from itb.analysis.fairshare import compare_to_ideal, fair_share_summary, tcp_payload_share

MARGIN_LEVELS = (68, 95)
DEFAULT_BIN_S = 0.1  # bottleneck bin when no goodput interval is known

_GOODPUT_COLUMNS = ["repetition", "t_s", "goodput_bps", "bytes"]
_THROUGHPUT_COLUMNS = ["repetition", "t_s", "throughput_bps", "bytes", "packets",
                       "queue_bytes_max", "drops"]


# --- helpers -----------------------------------------------------------------------------


def _floats(values: Iterable[float | None]) -> np.ndarray:
    """1-d float array; None becomes NaN."""
    return pd.Series(list(values), dtype="float64").to_numpy()


def _finite_rate(value: float | None, what: str) -> float | None:
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


def _binned(df: pd.DataFrame, origin_ns: Mapping[int, int], bin_s: float,
            aggs: Mapping[str, tuple[str, str]]) -> pd.DataFrame:
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
        parts.append(sub.assign(repetition=int(rep),
                                t_s=sub.index.to_numpy(np.int64) * step / 1e9))
    return pd.concat(parts, ignore_index=True)


def _select_link(bottleneck: pd.DataFrame, direction: str, link: str | None) -> pd.DataFrame:
    """Rows of one link in one direction; several links without a choice is an error
    (summing them would count the same bytes more than once)."""
    rows = bottleneck[bottleneck["direction"] == direction]
    if link is not None:
        return rows[rows["link"] == link]
    links = sorted(rows["link"].dropna().unique())
    if len(links) > 1:
        raise ValueError(f"bottleneck has several links in direction {direction!r}: "
                         f"{links}; pass link=")
    return rows


def _completed_times(transfers: pd.DataFrame) -> np.ndarray:
    """completion_s where the transfer completed (ok and finite), NaN otherwise."""
    t = transfers["completion_s"].astype("float64").to_numpy()
    ok = transfers["ok"].astype("boolean").fillna(False).to_numpy(bool)
    return np.where(ok & np.isfinite(t), t, np.nan)


def _jsonable(obj):
    """Plain Python values for JSON: numpy scalars unwrapped, NaN/inf/NA become None."""
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, np.ndarray)):
        return [_jsonable(v) for v in obj]
    if obj is None or obj is pd.NA or obj is pd.NaT:
        return None
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if math.isfinite(f) else None
    if isinstance(obj, str):
        return obj
    raise TypeError(f"not JSON-serialisable: {type(obj).__name__}")


# --- completion times --------------------------------------------------------------------


def completion_stats(times: Iterable[float | None]) -> dict:
    """T_min, T_mean, T_max, σ_T (population std, 1/N) and CoV = σ_T / T_mean, in seconds;
    σ_T and CoV are None for a single transfer.

    NaN/None are failed transfers: left out of the statistics and counted in n_failed.
    With no completed transfer every statistic is None.
    """
    t = _floats(times)
    done = t[~np.isnan(t)]
    if np.isinf(done).any() or (done < 0).any():
        raise ValueError("completion times must be finite and >= 0 (NaN = failed)")
    out: dict = {"n": int(done.size), "n_failed": int(t.size - done.size)}
    if done.size == 0:
        return out | {"t_min": None, "t_mean": None, "t_max": None, "sigma_t": None,
                      "cov": None}
    mean = float(done.mean())
    # σ_T over the N transfers of one run, with 1/N as the documents define it; one
    # transfer has no spread: missing, never 0
    sigma = float(done.std(ddof=0)) if done.size > 1 else None
    return out | {"t_min": float(done.min()), "t_mean": mean, "t_max": float(done.max()),
                  "sigma_t": sigma, "cov": sigma / mean if sigma is not None and mean > 0 else None}


def margins(times: Iterable[float | None]) -> dict:
    """Margin over T_mean that covers 68 % and 95 % of completions (predictability).

    mX_s = max(0, qX - T_mean) with qX numpy's "linear" percentile; mX_pct = mX_s / T_mean
    in percent. NaN (failed) times are left out.
    """
    t = _floats(times)
    t = t[~np.isnan(t)]
    if t.size == 0:
        raise ValueError("margins need at least one completed transfer")
    if np.isinf(t).any():
        raise ValueError("completion times must be finite")
    mean = float(t.mean())
    out: dict = {"n": int(t.size), "t_mean": mean}
    for level in MARGIN_LEVELS:
        q = float(np.percentile(t, level, method="linear"))
        m = max(0.0, q - mean)
        out[f"q{level}_s"] = q
        out[f"m{level}_s"] = m
        out[f"m{level}_pct"] = m / mean * 100 if mean > 0 else None
    return out


# --- fairness and models -----------------------------------------------------------------


def jain_index(values: Iterable[float]) -> float:
    """Jain's fairness index J = (Σx)² / (n·Σx²), in (0, 1]; 1 means equal shares."""
    x = _floats(values)
    if x.size == 0:
        raise ValueError("jain_index of no values")
    if not np.isfinite(x).all() or (x < 0).any():
        raise ValueError("jain_index needs finite values >= 0")
    sq = float((x * x).sum())
    if sq == 0:
        raise ValueError("jain_index of all-zero values is undefined")
    if x.size == 1:
        return 1.0
    return float(x.sum()) ** 2 / (x.size * sq)


def fit_linear(x: Iterable[float], y: Iterable[float]) -> dict:
    """Least squares y = a·x + b with Pearson r and R² (= r² for one regressor).

    r and r2 are None when y is constant (no variance to explain).
    """
    xa, ya = _floats(x), _floats(y)
    if xa.size != ya.size:
        raise ValueError(f"x and y differ in length ({xa.size} vs {ya.size})")
    if not (np.isfinite(xa).all() and np.isfinite(ya).all()):
        raise ValueError("fit_linear needs finite x and y")
    if np.unique(xa).size < 2:
        raise ValueError("fit_linear needs at least 2 distinct x values")
    dx, dy = xa - xa.mean(), ya - ya.mean()
    sxx, sxy, syy = float(dx @ dx), float(dx @ dy), float(dy @ dy)
    a = sxy / sxx
    b = float(ya.mean()) - a * float(xa.mean())
    r = None if syy == 0 else max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))
    return {"a": a, "b": b, "r": r, "r2": None if r is None else r * r, "n": int(xa.size)}


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
    t = _completed_times(transfers)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(t > 0, transfers["bytes"].astype("float64").to_numpy() * 8 / t,
                        np.nan)
    out = transfers[["repetition", "transfer", "direction", "cc"]].reset_index(drop=True)
    out["mean_goodput_bps"] = mean
    gp = samples[samples["series"] == "goodput"]
    stats = (gp.groupby(["repetition", "transfer"])["goodput_bps"]
             .agg(sigma_goodput_bps=lambda s: s.std(ddof=0), n_samples="count")
             .reset_index())
    out = out.merge(stats, on=["repetition", "transfer"], how="left")
    out["n_samples"] = out["n_samples"].fillna(0).astype("int64")
    out.loc[out["n_samples"] == 0, "sigma_goodput_bps"] = np.nan
    return out


def goodput_distribution(goodput_bps: Iterable[float], access_rate_bps: float) -> list[float]:
    """Share of goodput samples in each 1 % bucket of C_a (101 buckets, sum 1).

    Bucket k holds k % ≤ g/C_a·100 < (k+1) %; samples at or above C_a go to bucket 100.
    NaN samples are ignored. Undefined (ValueError) for unlimited C_a or no samples.
    """
    ca = _finite_rate(access_rate_bps, "access_rate_bps")
    if ca is None:
        raise ValueError("goodput distribution needs a finite access rate C_a")
    g = _floats(goodput_bps)
    g = g[~np.isnan(g)]
    if g.size == 0:
        raise ValueError("goodput distribution of no samples")
    if np.isinf(g).any() or (g < 0).any():
        raise ValueError("goodput samples must be finite and >= 0")
    # g*100 // C_a rather than floor(g/C_a*100): 0.29*100 would land in bucket 28
    k = np.minimum(np.floor_divide(g * 100, ca), 100).astype(np.int64)
    counts = np.bincount(k, minlength=101)
    return [float(c) / g.size for c in counts]


def aggregate_goodput(samples: pd.DataFrame, transfers: pd.DataFrame,
                      direction: str = "forward", bin_s: float | None = None) -> pd.DataFrame:
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


def bottleneck_throughput(bottleneck: pd.DataFrame, direction: str = "forward",
                          bin_s: float = DEFAULT_BIN_S,
                          rep_start: Mapping[int, int] | None = None,
                          link: str | None = None) -> pd.DataFrame:
    """Throughput on the wire at the bottleneck X(t) = Σ wire bytes·8 / bin_s, per repetition.

    t_s is the end of the bin relative to rep_start[repetition] (ns) when given, else to
    the start of the repetition's first bottleneck interval. With several links, `link`
    picks one. Columns: repetition, t_s, throughput_bps, bytes, packets, queue_bytes_max
    (highest occupancy within the bin), drops (queue + loss).
    """
    tables.validate(bottleneck, "bottleneck")
    rows = _select_link(bottleneck, direction, link)
    if rows.empty:
        return pd.DataFrame({c: pd.Series(dtype="float64") for c in _THROUGHPUT_COLUMNS})
    if rep_start is None:
        first = rows["t_ns"] - (rows["interval_s"].fillna(0) * 1e9).round().astype("int64")
        origin = first.groupby(rows["repetition"]).min().to_dict()
    else:
        origin = dict(rep_start)
    rows = rows.assign(drops=rows["drops_queue"] + rows["drops_loss"],
                       peak=np.maximum(rows["queue_bytes"], rows["queue_max_bytes"]))
    out = _binned(rows, origin, bin_s, {"bytes": ("bytes", "sum"),
                                        "packets": ("packets", "sum"),
                                        "queue_bytes_max": ("peak", "max"),
                                        "drops": ("drops", "sum")})
    out["throughput_bps"] = out["bytes"] * 8 / bin_s
    return out[_THROUGHPUT_COLUMNS]


def _busy_integrals(G: pd.DataFrame, X: pd.DataFrame) -> tuple[float, float]:
    """(payload bytes, wire bytes) summed over each repetition's common busy interval:
    from the later of the two first non-empty bins to the earlier of the two last ones."""
    payload = wire = 0.0
    for rep in sorted(set(G["repetition"]) & set(X["repetition"])):
        g, x = G[G["repetition"] == rep], X[X["repetition"] == rep]
        gb, xb = g.loc[g["bytes"] > 0, "t_s"], x.loc[x["bytes"] > 0, "t_s"]
        if gb.empty or xb.empty:
            continue
        lo, hi = max(gb.min(), xb.min()), min(gb.max(), xb.max())
        if lo > hi:
            continue
        payload += float(g.loc[g["t_s"].between(lo, hi), "bytes"].sum())
        wire += float(x.loc[x["t_s"].between(lo, hi), "bytes"].sum())
    return payload, wire


def efficiency(G: pd.DataFrame, X: pd.DataFrame) -> float:
    """E = Σ payload bytes / Σ wire bytes over the common busy interval (ratio of integrals).

    G and X as returned by aggregate_goodput and bottleneck_throughput (with a `bytes`
    column), ideally on the same bins; repetitions are pooled.
    """
    payload, wire = _busy_integrals(G, X)
    if wire == 0:
        raise ValueError("goodput and bottleneck have no common busy interval")
    return payload / wire


def utilisation(X: pd.DataFrame, capacity_bps: float | None) -> float | None:
    """Mean X(t) over the busy span divided by C; None when C is unlimited.

    The busy span runs from the first to the last bin that carried bytes (per repetition),
    idle bins inside it included: time before the first and after the last transfer does
    not count, a stall in mid-run does. A link that never carried anything has 0.
    """
    cap = _finite_rate(capacity_bps, "capacity_bps")
    if cap is None:
        return None
    if X.empty:
        raise ValueError("utilisation of an empty throughput series")
    total, bins = 0.0, 0
    groups = X.groupby("repetition") if "repetition" in X else [(None, X)]
    for _, x in groups:
        x = x.sort_values("t_s")
        busy = np.flatnonzero(x["throughput_bps"].to_numpy() > 0)
        if busy.size:
            span = x["throughput_bps"].to_numpy()[busy[0]:busy[-1] + 1]
            total, bins = total + float(span.sum()), bins + span.size
    return total / bins / cap if bins else 0.0


def queueing_delay(bottleneck: pd.DataFrame, capacity_bps: float | None,
                   direction: str = "forward", link: str | None = None) -> dict:
    """Queueing delay at the bottleneck, queue bytes·8 / C in seconds: mean and max.

    mean_s: time average of the end-of-interval occupancy over each repetition's busy
    span (first to last interval that forwarded bytes); max_s: from the highest
    occupancy within any interval (queue_max_bytes). Both None when C is unlimited.
    """
    tables.validate(bottleneck, "bottleneck")
    cap = _finite_rate(capacity_bps, "capacity_bps")
    if cap is None:
        return {"mean_s": None, "max_s": None}
    rows = _select_link(bottleneck, direction, link)
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
    return {"mean_s": float(span["queue_bytes"].mean()) * 8 / cap,
            "max_s": float(peak) * 8 / cap}


# --- one run -----------------------------------------------------------------------------


def _payload_share(context: Mapping) -> float:
    """context["payload_share"] if given, else TCP/IPv4 with timestamps at context["mtu"]."""
    if context.get("payload_share") is not None:
        return float(context["payload_share"])
    if context.get("mtu") is not None:
        return tcp_payload_share(int(context["mtu"]))
    return 1.0


def _fair_share(fwd: pd.DataFrame, rep_start_ns: int, times: np.ndarray,
                capacity: float | None, payload_share: float) -> dict | None:
    """Fair-share ideal of the forward transfers; None when it is unbounded (no C, no C_a)
    or when a forward flow is not a bulk transfer (ping-pong and UDP are not fluid flows)."""
    caps = [None if pd.isna(c) else float(c) for c in fwd["access_rate_bps"]]
    if fwd.empty or (capacity is None and any(c is None for c in caps)):
        return None
    if (fwd["kind"] != "transfer").any():
        return None
    starts = ((fwd["start_ns"] - rep_start_ns) / 1e9).tolist()
    return fair_share_summary(starts, fwd["bytes_expected"].tolist(), caps, capacity,
                              measured_s=times.tolist(), payload_share=payload_share)


def _transfer_rows(tr: pd.DataFrame, gput: pd.DataFrame, samples: pd.DataFrame,
                   ideal: dict[str, float]) -> list[dict]:
    """Per-transfer records of one repetition (every direction)."""
    by_id = gput.set_index("transfer")
    series = {k: v["goodput_bps"] for k, v in
              samples[samples["series"] == "goodput"].groupby("transfer")}
    rep_start = int(tr["rep_start_ns"].min())
    rows = []
    for r, t_done in zip(tr.itertuples(index=False), _completed_times(tr)):
        g = by_id.loc[r.transfer]
        ca = None if pd.isna(r.access_rate_bps) else float(r.access_rate_bps)
        gs = series.get(r.transfer)
        dist = (goodput_distribution(gs, ca)
                if ca is not None and gs is not None and gs.notna().any() else None)
        rows.append({
            "transfer": r.transfer, "kind": r.kind, "direction": r.direction,
            "src": r.src, "dst": r.dst, "cc": r.cc, "streams": r.streams,
            "bytes_expected": r.bytes_expected, "bytes": r.bytes, "ok": r.ok,
            "error": None if pd.isna(r.error) else r.error,
            "corrupt_window": getattr(r, "corrupt_window", None) or None,
            "start_s": (r.start_ns - rep_start) / 1e9, "completion_s": t_done,
            "access_rate_bps": ca, "rtt_s": r.rtt_s,
            "mean_goodput_bps": g["mean_goodput_bps"],
            "sigma_goodput_bps": g["sigma_goodput_bps"], "n_samples": g["n_samples"],
            "goodput_distribution": dist, "ideal_s": ideal.get(r.transfer),
        })
    return rows


def _repetition(rep: int, tr: pd.DataFrame, samples: pd.DataFrame,
                bottleneck: pd.DataFrame, gput: pd.DataFrame, context: Mapping) -> dict:
    """Every metric of one repetition (see run_metrics)."""
    capacity = _finite_rate(context.get("capacity_bps"), "capacity_bps")
    link = context.get("link")
    rep_start = int(tr["rep_start_ns"].min())
    fwd = tr[tr["direction"] == "forward"]
    times = _completed_times(fwd)
    fwd_ids = set(fwd["transfer"])

    g_fwd = gput[gput["transfer"].isin(fwd_ids)]["mean_goodput_bps"].dropna()
    # fairness needs at least two flows: one flow has no share to compare
    jain = jain_index(g_fwd) if len(g_fwd) > 1 and (g_fwd > 0).any() else None

    fwd_samples = samples[(samples["series"] == "goodput") & samples["transfer"].isin(fwd_ids)]
    try:
        bin_s = common_interval_s(fwd_samples["interval_s"])
    except ValueError:  # no goodput samples: bottleneck bins keep their default
        bin_s = DEFAULT_BIN_S
    G = aggregate_goodput(samples, tr, "forward", bin_s)
    X = bottleneck_throughput(bottleneck, "forward", bin_s, {rep: rep_start}, link)
    payload, wire = _busy_integrals(G, X) if not (G.empty or X.empty) else (0.0, 0.0)
    has_fwd_link = not _select_link(bottleneck, "forward", link).empty

    fair = _fair_share(fwd, rep_start, times, capacity, _payload_share(context))
    ideal = dict(zip(fwd["transfer"], fair.pop("ideal_s"))) if fair else {}
    corrupt = fwd["corrupt_window"].notna() if "corrupt_window" in fwd else pd.Series(dtype=bool)
    return {
        "repetition": rep,
        "completion": completion_stats(times),
        "n_corrupt": int(corrupt.sum()),  # among n_failed: impossible window (engine.window)
        "margins": margins(times) if np.isfinite(times).any() else None,
        "jain": jain,
        "bin_s": bin_s,
        "efficiency": payload / wire if wire > 0 else None,
        "utilisation": utilisation(X, capacity) if not X.empty else None,
        "queueing_delay": (queueing_delay(bottleneck, capacity, "forward", link)
                           if has_fwd_link else {"mean_s": None, "max_s": None}),
        "fair_share": fair,
        "transfers": _transfer_rows(tr, gput, samples, ideal),
    }


def _mean(values: Iterable[float | None]) -> float | None:
    v = [x for x in values if x is not None]
    return sum(v) / len(v) if v else None


def _table(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """The table checked; a frame with neither rows nor columns (nothing was logged, e.g. no
    emulator) stands for an empty table of that schema."""
    if isinstance(df, pd.DataFrame) and df.empty and len(df.columns) == 0:
        dtypes = {"transfers": tables.TRANSFERS_DTYPES, "samples": tables.SAMPLES_DTYPES,
                  "bottleneck": tables.BOTTLENECK_DTYPES}[name]
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in dtypes.items()})
    return tables.validate(df, name)


def _overall_fair_share(reps: list[dict]) -> dict | None:
    """Measured vs ideal over the completed forward transfers of all repetitions (paired)."""
    pairs = [(t["completion_s"], t["ideal_s"]) for r in reps for t in r["transfers"]
             if t["ideal_s"] is not None]
    if not pairs:
        return None
    return compare_to_ideal([m for m, _ in pairs], [i for _, i in pairs])


def run_metrics(transfers: pd.DataFrame, samples: pd.DataFrame, bottleneck: pd.DataFrame,
                context: Mapping) -> dict:
    """All metrics of one run: per repetition and aggregated over repetitions.

    context: {"capacity_bps": forward C or None, "reverse_capacity_bps", "mtu", and
    optionally "link" (which bottleneck link) and "payload_share" (for the fair-share
    ideal; default TCP/IPv4 with timestamps at mtu)}. Forward transfers are those with
    direction "forward"; a transfer counts as completed when ok and completion_s is
    finite. A table with no rows and no columns counts as empty. Returns plain JSON
    values (NaN becomes None).
    """
    transfers = _table(transfers, "transfers")
    samples = _table(samples, "samples")
    bottleneck = _table(bottleneck, "bottleneck")
    gput = transfer_goodput(transfers, samples)
    reps = []
    for rep in sorted(int(r) for r in transfers["repetition"].unique()):
        reps.append(_repetition(
            rep, transfers[transfers["repetition"] == rep],
            samples[samples["repetition"] == rep],
            bottleneck[bottleneck["repetition"] == rep],
            gput[gput["repetition"] == rep], context))

    fwd_all = transfers[transfers["direction"] == "forward"]
    times = _completed_times(fwd_all)
    rep_means = completion_stats([r["completion"]["t_mean"] for r in reps])
    # across repetitions the spread estimates run-to-run variability: the sample σ (1/(n−1))
    means = _floats(r["completion"]["t_mean"] for r in reps)
    means = means[~np.isnan(means)]
    if means.size > 1:
        rep_means["sigma_t"] = float(means.std(ddof=1))
        rep_means["cov"] = rep_means["sigma_t"] / rep_means["t_mean"] if rep_means["t_mean"] else None
    overall = {
        "n_repetitions": len(reps),
        "completion": completion_stats(times),
        "n_corrupt": sum(r["n_corrupt"] for r in reps),
        "t_mean_mean": rep_means["t_mean"],
        "t_mean_sigma": rep_means["sigma_t"],
        "t_mean_cov": rep_means["cov"],
        "margins": margins(times) if np.isfinite(times).any() else None,
        "jain_mean": _mean(r["jain"] for r in reps),
        "efficiency_mean": _mean(r["efficiency"] for r in reps),
        "utilisation_mean": _mean(r["utilisation"] for r in reps),
        "fair_share": _overall_fair_share(reps),
    }
    return _jsonable({"repetitions": reps, "overall": overall})
