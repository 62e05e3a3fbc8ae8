"""Per-run metrics of ITB (docs/metrics.md): `run_metrics` combines the statistics
(`itb.analysis.statistics`) and the time series (`itb.analysis.series`) per repetition and
over repetitions into a `RunMetrics` (`itb.analysis.run_results`: metrics.json's model).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TypedDict

import numpy as np
import pandas as pd

from itb.analysis import tables
from itb.analysis.fairshare import (
    compare_to_ideal,
    fair_share_summary,
    source_cap_bps,
    tcp_payload_share,
)
from itb.analysis.run_results import RunMetrics
from itb.analysis.series import (
    DEFAULT_BIN_S,
    bottleneck_throughput,
    common_interval_s,
    completed_times,
    efficiency,
    fairness_goodput,
    finite_rate,
    goodput_distribution,
    link_utilisation,
    queueing_delay,
    select_link,
    transfer_goodput,
    utilisation,
)
from itb.analysis.statistics import completion_stats, floats, jain_index, margins


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


# --- one run -----------------------------------------------------------------------------


class RunContext(TypedDict, total=False):
    """What a run's metrics are computed against (`itb.analysis.summary.context_of`;
    metrics.json's `context`)."""

    capacity_bps: float | None  # the forward bottleneck's C (None: unlimited)
    reverse_capacity_bps: float | None
    mtu: int | None
    link: str | None  # which bottleneck link
    payload_share: float | None  # for the fair-share ideal (default: TCP/IPv4 at the MTU)


def _payload_share(context: RunContext) -> float:
    """context["payload_share"] if given, else TCP/IPv4 with timestamps at context["mtu"]."""
    share, mtu = context.get("payload_share"), context.get("mtu")
    if share is not None:
        return float(share)
    if mtu is not None:
        return tcp_payload_share(int(mtu))
    return 1.0


def _rate(value) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def _model_caps(fwd: pd.DataFrame, payload_share: float) -> list[float | None]:
    """Each forward transfer's cap for the model, as a wire rate (source_cap_bps: access
    link, or pacing cap / payload share). Tables from before access_link_bps and
    pacing_cap_bps have only access_rate_bps, taken as a wire rate."""
    if {"access_link_bps", "pacing_cap_bps"} <= set(fwd.columns):
        return [
            source_cap_bps(_rate(link), _rate(pacing), payload_share)
            for link, pacing in zip(fwd["access_link_bps"], fwd["pacing_cap_bps"])
        ]
    return [_rate(c) for c in fwd["access_rate_bps"]]


def _ignored(tr: pd.DataFrame) -> list[str]:
    """The traffic on the path that the model leaves out: "reverse", "background", or
    "<direction> <kind>" for ping-pongs and UDP."""
    rest = tr[tr["direction"] != "forward"]
    return sorted(
        {
            d if k in ("transfer", "background") else f"{d} {k}"
            for d, k in zip(rest["direction"], rest["kind"])
        }
    )


def _fair_share(
    tr: pd.DataFrame,
    fwd: pd.DataFrame,
    rep_start_ns: int,
    times: np.ndarray,
    capacity: float | None,
    payload_share: float,
) -> dict | None:
    """Fair-share ideal of the forward transfers; None when it is unbounded (no C, no cap)
    or when a forward flow is not a bulk transfer (ping-pong and UDP are not fluid flows),
    or when one never started (its date in the model is unknown)."""
    caps = _model_caps(fwd, payload_share)
    if fwd.empty or (capacity is None and any(c is None for c in caps)):
        return None
    if (fwd["kind"] != "transfer").any() or fwd["start_ns"].isna().any():
        return None
    starts = ((fwd["start_ns"] - rep_start_ns) / 1e9).tolist()
    out = fair_share_summary(
        starts,
        fwd["bytes_expected"].tolist(),
        caps,
        capacity,
        measured_s=times.tolist(),
        payload_share=payload_share,
        # one share per TCP connection: a transfer of N parallel streams gets N
        streams=fwd["streams"].fillna(1).clip(lower=1).astype(int).tolist(),
    )
    return out | {"ignores": _ignored(tr)}


def _maybe(f, *args):
    """f(*args), or None where the data cannot give it (ValueError)."""
    try:
        return f(*args)
    except ValueError:
        return None


def _transfer_rows(
    tr: pd.DataFrame, gput: pd.DataFrame, samples: pd.DataFrame, ideal: dict[str, float]
) -> list[dict]:
    """Per-transfer records of one repetition (every direction)."""
    by_id = gput.set_index("transfer")
    series = {
        k: v["goodput_bps"] for k, v in samples[samples["series"] == "goodput"].groupby("transfer")
    }
    rep_start = int(tr["rep_start_ns"].min())
    rows = []
    for r, t_done in zip(tr.itertuples(index=False), completed_times(tr)):
        g = by_id.loc[r.transfer]
        ca = None if pd.isna(r.access_rate_bps) else float(r.access_rate_bps)
        gs = series.get(r.transfer)
        dist = (
            goodput_distribution(gs, ca)
            if ca is not None and gs is not None and gs.notna().any()
            else None
        )
        rows.append(
            {
                "transfer": r.transfer,
                "kind": r.kind,
                "direction": r.direction,
                "src": r.src,
                "dst": r.dst,
                "cc": r.cc,
                "streams": r.streams,
                "bytes_expected": r.bytes_expected,
                "bytes": None if pd.isna(r.bytes) else int(r.bytes),
                "ok": r.ok,
                "error": None if pd.isna(r.error) else r.error,
                "corrupt_window": getattr(r, "corrupt_window", None) or None,
                "start_s": None if pd.isna(r.start_ns) else (r.start_ns - rep_start) / 1e9,
                "completion_s": t_done,
                "access_rate_bps": ca,
                "rtt_s": r.rtt_s,
                "mean_goodput_bps": g["mean_goodput_bps"],
                "sigma_goodput_bps": g["sigma_goodput_bps"],
                "n_samples": g["n_samples"],
                "goodput_distribution": dist,
                "ideal_s": ideal.get(r.transfer),
                "wire_bytes": getattr(r, "wire_bytes", None),
                "bytes_retrans": getattr(r, "bytes_retrans", None),
                "profile_s": getattr(r, "profile_s", None),
                "lateness_s": getattr(r, "lateness_s", None),
                "deadline_s": getattr(r, "deadline_s", None),
                "deadline_met": None
                if pd.isna(getattr(r, "deadline_met", None))
                else bool(r.deadline_met),
            }
        )
    return rows


def _jain(goodputs: pd.Series) -> float | None:
    """J over these mean goodputs; None with fewer than two (one flow has no share to
    compare) or none above 0."""
    return jain_index(goodputs) if len(goodputs) > 1 and (goodputs > 0).any() else None


def _repetition(
    rep: int,
    tr: pd.DataFrame,
    samples: pd.DataFrame,
    bottleneck: pd.DataFrame,
    gput: pd.DataFrame,
    context: RunContext,
) -> dict:
    """Every metric of one repetition (see run_metrics)."""
    capacity = finite_rate(context.get("capacity_bps"), "capacity_bps")
    link = context.get("link")
    rep_start = int(tr["rep_start_ns"].min())
    fwd = tr[tr["direction"] == "forward"]
    times = completed_times(fwd)
    fwd_ids = set(fwd["transfer"])

    # fairness, pooled over every forward transfer and among the transfers of each
    # congestion control (intra-protocol); a failed transfer with what it delivered
    share = fairness_goodput(fwd)
    jain = _jain(share.dropna())
    jain_by_cc = {
        str(cc): _jain(share[fwd["cc"] == cc].dropna()) for cc in sorted(set(fwd["cc"].dropna()))
    }

    fwd_samples = samples[(samples["series"] == "goodput") & samples["transfer"].isin(fwd_ids)]
    try:
        bin_s = common_interval_s(fwd_samples["interval_s"])
    except ValueError:  # no goodput samples: bottleneck bins keep their default
        bin_s = DEFAULT_BIN_S
    X = bottleneck_throughput(bottleneck, "forward", bin_s, {rep: rep_start}, link)
    has_fwd_link = not select_link(bottleneck, "forward", link).empty

    # Transfers that follow a rate profile are measured against it (lateness), not
    # against a fair share of the link, which they do not seek.
    profiled = "profile_s" in fwd and bool(fwd["profile_s"].notna().any())
    fair = (
        None
        if profiled
        else _fair_share(tr, fwd, rep_start, times, capacity, _payload_share(context))
    )
    ideal = dict(zip(fwd["transfer"], fair.pop("ideal_s"))) if fair else {}
    corrupt = fwd["corrupt_window"].notna() if "corrupt_window" in fwd else pd.Series(dtype=bool)
    return {
        "repetition": rep,
        "completion": completion_stats(times),
        "n_corrupt": int(corrupt.sum()),  # among n_failed: impossible window (analysis.window)
        "margins": margins(times) if np.isfinite(times).any() else None,
        "jain": jain,
        "jain_by_cc": jain_by_cc,
        "bin_s": bin_s,
        # over the measured (forward) flows, from what their senders put on the wire
        "efficiency": _maybe(efficiency, fwd),
        "utilisation": _maybe(utilisation, fwd, capacity),
        # everything on the forward bottleneck: the measured flows and the adverse traffic
        "link_utilisation": link_utilisation(X, capacity) if not X.empty else None,
        "queueing_delay": (
            queueing_delay(bottleneck, capacity, "forward", link)
            if has_fwd_link
            else {"mean_s": None, "max_s": None}
        ),
        "fair_share": fair,
        "transfers": _transfer_rows(tr, gput, samples, ideal),
    }


def _mean(values: Iterable[float | None]) -> float | None:
    v = [x for x in values if x is not None]
    return sum(v) / len(v) if v else None


def _table(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """The table checked; a frame without rows (nothing was logged: no emulator, or a
    timeline of commands only, no transfer) stands for an empty table of that schema."""
    if isinstance(df, pd.DataFrame) and df.empty:
        dtypes = {
            "transfers": tables.TRANSFERS_DTYPES,
            "samples": tables.SAMPLES_DTYPES,
            "bottleneck": tables.BOTTLENECK_DTYPES,
        }[name]
        schema = pd.DataFrame({c: pd.Series(dtype=t) for c, t in dtypes.items()})
        return schema.assign(**{c: df[c] for c in df.columns if c not in schema})
    return tables.validate(df, name)


def _overall_fair_share(reps: list[dict]) -> dict | None:
    """The repetitions' fair-share blocks pooled: ideal over every forward transfer, measured
    vs ideal over the completed ones (paired), the traffic the model left out."""
    blocks = [r["fair_share"] for r in reps if r["fair_share"]]
    pairs = [
        (t["completion_s"], t["ideal_s"])
        for r in reps
        for t in r["transfers"]
        if t["ideal_s"] is not None
    ]
    if not blocks or not pairs:
        return None
    ideal = [i for _, i in pairs]
    return (
        {
            "ideal_mean_s": sum(ideal) / len(ideal),
            "ideal_max_s": max(ideal),
            "payload_share": blocks[0]["payload_share"],
        }
        | compare_to_ideal([m for m, _ in pairs], ideal)
        | {"ignores": sorted(set().union(*(b["ignores"] for b in blocks)))}
    )


def lateness_stats(values: list[float | None]) -> dict | None:
    """Lateness of the transfers with a profile (None: failed); None without any."""
    if not values:
        return None
    v = floats(values)
    done = v[~np.isnan(v)]
    out: dict[str, int | float | None] = {"n": int(done.size), "n_failed": int(v.size - done.size)}
    if done.size:
        out |= {
            "mean_s": float(done.mean()),
            "min_s": float(done.min()),
            "max_s": float(done.max()),
            "sigma_s": float(done.std(ddof=1)) if done.size > 1 else None,
        }
    return out


def deadline_counts(met: list[bool | None]) -> dict | None:
    """Transfers with a deadline: how many, how many made it (None: none had one)."""
    given = [m for m in met if m is not None]
    if not given:
        return None
    return {"n": len(given), "met": sum(given), "missed": len(given) - sum(given)}


def run_metrics(
    transfers: pd.DataFrame, samples: pd.DataFrame, bottleneck: pd.DataFrame, context: RunContext
) -> RunMetrics:
    """All metrics of one run: per repetition and aggregated over repetitions.

    context: {"capacity_bps": forward C or None, "reverse_capacity_bps", "mtu", and
    optionally "link" (which bottleneck link) and "payload_share" (for the fair-share
    ideal; default TCP/IPv4 with timestamps at mtu)}. Forward transfers are those with
    direction "forward"; a transfer counts as completed when ok and completion_s is
    finite. A table with no rows and no columns counts as empty. Returns the typed
    metrics with the context they used (NaN becomes None; no dispatch error).
    """
    transfers = _table(transfers, "transfers")
    samples = _table(samples, "samples")
    bottleneck = _table(bottleneck, "bottleneck")
    gput = transfer_goodput(transfers, samples)
    reps = []
    for rep in sorted(int(r) for r in transfers["repetition"].unique()):
        reps.append(
            _repetition(
                rep,
                transfers[transfers["repetition"] == rep],
                samples[samples["repetition"] == rep],
                bottleneck[bottleneck["repetition"] == rep],
                gput[gput["repetition"] == rep],
                context,
            )
        )

    fwd_all = transfers[transfers["direction"] == "forward"]
    times = completed_times(fwd_all)
    rep_means = completion_stats([r["completion"]["t_mean"] for r in reps])
    # across repetitions the spread estimates run-to-run variability: the sample σ (1/(n−1))
    means = floats(r["completion"]["t_mean"] for r in reps)
    means = means[~np.isnan(means)]
    if means.size > 1:
        rep_means["sigma_t"] = float(means.std(ddof=1))
        rep_means["cov"] = (
            rep_means["sigma_t"] / rep_means["t_mean"] if rep_means["t_mean"] else None
        )
    overall = {
        "n_repetitions": len(reps),
        "completion": completion_stats(times),
        "n_corrupt": sum(r["n_corrupt"] for r in reps),
        "t_mean_mean": rep_means["t_mean"],
        "t_mean_sigma": rep_means["sigma_t"],
        "t_mean_cov": rep_means["cov"],
        "margins": margins(times) if np.isfinite(times).any() else None,
        "jain_mean": _mean(r["jain"] for r in reps),
        "jain_by_cc_mean": {
            cc: _mean(r["jain_by_cc"].get(cc) for r in reps)
            for cc in sorted({cc for r in reps for cc in r["jain_by_cc"]})
        },
        "efficiency_mean": _mean(r["efficiency"] for r in reps),
        "utilisation_mean": _mean(r["utilisation"] for r in reps),
        "link_utilisation_mean": _mean(r["link_utilisation"] for r in reps),
        "fair_share": _overall_fair_share(reps),
        "lateness": lateness_stats(
            [
                t["lateness_s"]
                for r in reps
                for t in r["transfers"]
                if t["profile_s"] is not None and np.isfinite(t["profile_s"])
            ]
        ),
        "deadlines": deadline_counts([t["deadline_met"] for r in reps for t in r["transfers"]]),
    }
    return RunMetrics.model_validate(
        _jsonable({"repetitions": reps, "overall": overall, "context": dict(context)})
    )
