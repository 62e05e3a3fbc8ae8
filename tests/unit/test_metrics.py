"""Metrics on tiny hand-built tables; every expected value is worked out by hand."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from itb.analysis import tables
from itb.analysis.metrics import run_metrics
from itb.analysis.series import (
    aggregate_goodput,
    bottleneck_throughput,
    efficiency,
    goodput_distribution,
    link_utilisation,
    queueing_delay,
    transfer_goodput,
    utilisation,
)
from itb.analysis.statistics import completion_stats, fit_linear, jain_index, margins

NAN = math.nan
S = 1_000_000_000  # ns per second


# --- table builders: only the columns a test cares about, the rest defaulted -------------


def transfers_df(*rows: dict) -> pd.DataFrame:
    """The table's columns, plus any optional one a row names (wire_bytes, pacing_cap_bps…)."""
    base = {
        "repetition": 1,
        "transfer": "t",
        "kind": "transfer",
        "direction": "forward",
        "src": "a1",
        "dst": "b1",
        "cc": "cubic",
        "streams": 1,
        "bytes_expected": 0,
        "bytes": 0,
        "start_ns": 0,
        "end_ns": 0,
        "completion_s": NAN,
        "ok": True,
        "error": None,
        "access_rate_bps": NAN,
        "rtt_s": 0.02,
        "rep_start_ns": 0,
    }
    extra = [c for r in rows for c in r if c not in base]
    columns = list(tables.TRANSFERS_COLUMNS) + list(dict.fromkeys(extra))
    return pd.DataFrame([base | r for r in rows], columns=columns)


def goodput_row(rep: int, transfer: str, t_ns: int, interval_s: float, nbytes: float) -> dict:
    return {
        "repetition": rep,
        "transfer": transfer,
        "series": "goodput",
        "stream": -1,
        "t_ns": t_ns,
        "interval_s": interval_s,
        "bytes": nbytes,
        "goodput_bps": nbytes * 8 / interval_s,
    }


def samples_df(*rows: dict) -> pd.DataFrame:
    base = dict.fromkeys(tables.SAMPLES_COLUMNS, NAN)
    return pd.DataFrame([base | r for r in rows], columns=list(tables.SAMPLES_COLUMNS))


def tcp_info_row(rep: int, transfer: str, t_ns: int) -> dict:
    return {
        "repetition": rep,
        "transfer": transfer,
        "series": "tcp_info",
        "stream": 0,
        "t_ns": t_ns,
        "cwnd": 10.0,
        "rtt_us": 20000.0,
    }


def bottleneck_df(*rows: dict) -> pd.DataFrame:
    base = {
        "repetition": 1,
        "link": "bn",
        "direction": "forward",
        "t_ns": 0,
        "interval_s": 0.1,
        "bytes": 0,
        "packets": 0,
        "drops_queue": 0,
        "drops_loss": 0,
        "queue_bytes": 0,
        "queue_max_bytes": 0,
        "late_packets": 0,
        "max_lag_us": 0,
    }
    return pd.DataFrame([base | r for r in rows], columns=list(tables.BOTTLENECK_COLUMNS))


# --- tables ------------------------------------------------------------------------------


def test_table_constants_match_dtypes():
    assert tables.TRANSFERS_COLUMNS == tuple(tables.TRANSFERS_DTYPES)
    assert tables.SAMPLES_COLUMNS == tuple(tables.SAMPLES_DTYPES)
    assert tables.BOTTLENECK_COLUMNS == tuple(tables.BOTTLENECK_DTYPES)
    assert "completion_s" in tables.TRANSFERS_COLUMNS
    assert "queue_max_bytes" in tables.BOTTLENECK_COLUMNS


def test_validate_names_missing_columns():
    df = transfers_df({}).drop(columns=["cc", "rtt_s"])
    with pytest.raises(ValueError, match="transfers: missing columns: cc, rtt_s"):
        tables.validate(df, "transfers")
    full = transfers_df({}).assign(extra=1)  # extra columns are allowed
    assert tables.validate(full, "transfers") is full
    with pytest.raises(ValueError, match="unknown table"):
        tables.validate(full, "nope")


# --- completion times --------------------------------------------------------------------


def test_completion_stats():
    # 10, 12, 14 s and one failure: mean 12, sample σ = sqrt((4 + 0 + 4) / 2) = 2
    s = completion_stats([10.0, 12.0, NAN, 14.0])
    assert s == {
        "n": 3,
        "n_failed": 1,
        "t_min": 10.0,
        "t_mean": 12.0,
        "t_max": 14.0,
        "sigma_t": pytest.approx(math.sqrt(8 / 3)),  # 1/N: (4 + 0 + 4) / 3
        "cov": pytest.approx(math.sqrt(8 / 3) / 12),
    }


def test_completion_stats_edges():
    one = completion_stats([5.0])
    assert one["sigma_t"] is None and one["cov"] is None and one["n"] == 1  # no spread
    none = completion_stats([NAN, None])
    assert none["n"] == 0 and none["n_failed"] == 2 and none["t_mean"] is None
    assert completion_stats([])["n"] == 0
    with pytest.raises(ValueError):
        completion_stats([1.0, -1.0])
    with pytest.raises(ValueError):
        completion_stats([1.0, math.inf])


def test_margins():
    # 10..14: mean 12; q68 at position 0.68·4 = 2.72 → 12 + 0.72 = 12.72 → m68 = 0.72 (6 %)
    #                  q95 at position 0.95·4 = 3.8  → 13 + 0.8  = 13.8  → m95 = 1.8 (15 %)
    m = margins([14.0, 10.0, 12.0, NAN, 11.0, 13.0])
    assert m["n"] == 5 and m["t_mean"] == 12.0
    assert m["m68_s"] == pytest.approx(0.72) and m["m68_pct"] == pytest.approx(6.0)
    assert m["m95_s"] == pytest.approx(1.8) and m["m95_pct"] == pytest.approx(15.0)


def test_margins_clamped_at_zero():
    # 1,1,1,1,100: mean 20.8; q68 (position 2.72) = 1 < mean → m68 = 0
    # q95 (position 3.8) = 1 + 0.8·99 = 80.2 → m95 = 59.4
    m = margins([1.0, 1.0, 1.0, 1.0, 100.0])
    assert m["m68_s"] == 0.0 and m["m68_pct"] == 0.0
    assert m["m95_s"] == pytest.approx(59.4)
    with pytest.raises(ValueError):
        margins([NAN])


# --- fairness and models -----------------------------------------------------------------


def test_jain_index():
    assert jain_index([3.0, 3.0]) == 1.0
    assert jain_index([1.0, 0.0]) == 0.5  # 1² / (2·1)
    assert jain_index([1.0, 2.0, 3.0]) == pytest.approx(36 / 42)  # 6² / (3·14)
    assert jain_index([7.0]) == 1.0
    for bad in ([], [0.0, 0.0], [1.0, -1.0], [1.0, NAN]):
        with pytest.raises(ValueError):
            jain_index(bad)


def test_fit_linear_exact_and_noisy():
    f = fit_linear([0, 1, 2], [1, 3, 5])
    assert f["a"] == pytest.approx(2.0) and f["b"] == pytest.approx(1.0)
    assert f["r"] == pytest.approx(1.0) and f["r2"] == pytest.approx(1.0) and f["n"] == 3
    # x̄ = 2.5, ȳ = 4.75; Sxx = 5, Sxy = 9.5, Syy = 18.75
    # a = 9.5/5 = 1.9, b = 4.75 - 1.9·2.5 = 0, r = 9.5/sqrt(5·18.75), r² = 90.25/93.75
    f = fit_linear([1, 2, 3, 4], [2, 4, 5, 8])
    assert f["a"] == pytest.approx(1.9) and f["b"] == pytest.approx(0.0, abs=1e-12)
    assert f["r"] == pytest.approx(9.5 / math.sqrt(93.75))
    assert f["r2"] == pytest.approx(90.25 / 93.75)


def test_fit_linear_edges():
    flat = fit_linear([1, 2], [3, 3])
    assert flat["a"] == 0.0 and flat["b"] == 3.0 and flat["r"] is None and flat["r2"] is None
    with pytest.raises(ValueError, match="distinct"):
        fit_linear([1, 1, 1], [1, 2, 3])
    with pytest.raises(ValueError):
        fit_linear([1, 2], [1])


# --- goodput -----------------------------------------------------------------------------


def test_transfer_goodput():
    tr = transfers_df(
        {"transfer": "a", "bytes": 1_000_000, "completion_s": 2.0},
        {"transfer": "b", "bytes": 300_000, "ok": False, "error": "timeout"},
    )
    sm = samples_df(
        goodput_row(1, "a", 1 * S, 1.0, 375_000),  # 3 Mbit/s
        goodput_row(1, "a", 2 * S, 1.0, 625_000),  # 5 Mbit/s
        goodput_row(1, "a", 3 * S, 1.0, 500_000),  # 4 Mbit/s
        tcp_info_row(1, "a", 2 * S),
    )
    g = transfer_goodput(tr, sm).set_index("transfer")
    # ḡ_a = 1e6 B · 8 / 2 s = 4 Mbit/s; σ over 3, 5, 4 Mbit/s: sqrt((1 + 1 + 0) / 3) Mbit/s
    assert g.loc["a", "mean_goodput_bps"] == 4e6
    assert g.loc["a", "sigma_goodput_bps"] == pytest.approx(math.sqrt(2 / 3) * 1e6)
    assert g.loc["a", "n_samples"] == 3
    assert math.isnan(g.loc["b", "mean_goodput_bps"])  # failed: no mean
    assert g.loc["b", "n_samples"] == 0 and math.isnan(g.loc["b", "sigma_goodput_bps"])


def test_goodput_distribution():
    # C_a = 100 Mbit/s: 0 and 0.5 % → bucket 0; 29 % and 29.999 % → 29; 100 % and 150 % → 100
    d = goodput_distribution([0.0, 0.5e6, 29e6, 29.999e6, 100e6, 150e6, NAN], 100e6)
    assert len(d) == 101
    assert d[0] == pytest.approx(2 / 6) and d[29] == pytest.approx(2 / 6)
    assert d[100] == pytest.approx(2 / 6) and sum(d) == pytest.approx(1.0)
    assert sum(d[k] for k in range(101) if k not in (0, 29, 100)) == 0.0


def test_goodput_distribution_bucket_edge_is_exact():
    # 0.29 · 100 = 28.999999999999996 in floating point, yet 29 % of C_a belongs to bucket 29
    d = goodput_distribution([290_000.0], 1_000_000.0)
    assert d[29] == 1.0


def test_goodput_distribution_needs_finite_ca_and_samples():
    for ca in (None, NAN, 0.0):
        with pytest.raises(ValueError):
            goodput_distribution([1.0], ca)
    with pytest.raises(ValueError):
        goodput_distribution([NAN], 1e6)


def _aggregate_tables():
    start = 5 * S  # the repetition starts 5 s after the monotonic clock's zero
    tr = transfers_df(
        {"transfer": "a", "rep_start_ns": start},
        {"transfer": "b", "rep_start_ns": start},
        {"transfer": "c", "direction": "reverse", "rep_start_ns": start},
    )
    ms = S // 1000
    sm = samples_df(
        goodput_row(1, "a", start + 100 * ms, 0.1, 1000),
        goodput_row(1, "a", start + 200 * ms, 0.1, 2000),
        goodput_row(1, "a", start + 300 * ms, 0.1, 3000),
        goodput_row(1, "b", start + 150 * ms, 0.1, 500),
        goodput_row(1, "b", start + 250 * ms, 0.1, 500),
        goodput_row(1, "b", start + 550 * ms, 0.3, 700),
        goodput_row(1, "c", start + 100 * ms, 0.1, 9999),  # reverse: not in G
        tcp_info_row(1, "a", start + 120 * ms),
    )
    return tr, sm


def test_aggregate_goodput_on_sample_interval():
    tr, sm = _aggregate_tables()
    G = aggregate_goodput(sm, tr)
    # bins (0,0.1], (0.1,0.2], ... by the most common interval 0.1 s; a sample ending on an
    # edge belongs to the bin it completes:
    #   0.1: a 1000 | 0.2: a 2000 + b 500 | 0.3: a 3000 + b 500 | 0.4, 0.5: idle | 0.6: b 700
    assert G["t_s"].tolist() == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    assert G["bytes"].tolist() == [1000, 2500, 3500, 0, 0, 700]
    # bit/s = bytes · 8 / 0.1
    assert G["goodput_bps"].tolist() == pytest.approx([80e3, 200e3, 280e3, 0, 0, 56e3])
    assert set(G["repetition"]) == {1}


def test_aggregate_goodput_explicit_bin():
    tr, sm = _aggregate_tables()
    G = aggregate_goodput(sm, tr, bin_s=0.2)
    # (0,0.2]: 1000 + 2000 + 500; (0.2,0.4]: 3000 + 500; (0.4,0.6]: 700; bit/s = bytes · 40
    assert G["t_s"].tolist() == pytest.approx([0.2, 0.4, 0.6])
    assert G["goodput_bps"].tolist() == pytest.approx([140e3, 140e3, 28e3])
    Gr = aggregate_goodput(sm, tr, direction="reverse")
    assert Gr["bytes"].tolist() == [9999]
    assert aggregate_goodput(sm, tr, direction="background").empty
    with pytest.raises(ValueError):
        aggregate_goodput(sm, tr, bin_s=0.0)


def test_aggregate_goodput_per_repetition():
    tr = transfers_df(
        {"repetition": 1, "transfer": "a", "rep_start_ns": 0},
        {"repetition": 2, "transfer": "a", "rep_start_ns": 100 * S},
    )
    sm = samples_df(
        goodput_row(1, "a", S // 10, 0.1, 100), goodput_row(2, "a", 100 * S + S // 5, 0.1, 200)
    )
    G = aggregate_goodput(sm, tr)
    # each repetition on its own timeline: rep 1 has t 0.1, rep 2 has t 0.2 only
    assert G[G.repetition == 1]["t_s"].tolist() == pytest.approx([0.1])
    assert G[G.repetition == 2]["t_s"].tolist() == pytest.approx([0.2])
    assert G[G.repetition == 2]["bytes"].tolist() == [200]


# --- bottleneck --------------------------------------------------------------------------


def _bottleneck_rows(base: int):
    ms = S // 1000
    return bottleneck_df(
        {
            "t_ns": base + 50 * ms,
            "interval_s": 0.05,
            "bytes": 1000,
            "packets": 1,
            "queue_bytes": 5,
            "queue_max_bytes": 10,
            "drops_queue": 1,
        },
        {
            "t_ns": base + 100 * ms,
            "interval_s": 0.05,
            "bytes": 2000,
            "packets": 2,
            "queue_bytes": 15,
            "queue_max_bytes": 20,
            "drops_loss": 1,
        },
        {
            "t_ns": base + 150 * ms,
            "interval_s": 0.05,
            "bytes": 3000,
            "packets": 2,
            "queue_bytes": 25,
            "queue_max_bytes": 30,
        },
        {
            "t_ns": base + 200 * ms,
            "interval_s": 0.05,
            "bytes": 4000,
            "packets": 3,
            "queue_bytes": 0,
            "queue_max_bytes": 5,
            "drops_queue": 2,
        },
        {"t_ns": base + 100 * ms, "direction": "reverse", "bytes": 99_999},
    )


def test_bottleneck_throughput():
    b = _bottleneck_rows(base=7 * S)
    X = bottleneck_throughput(b, bin_s=0.1)
    # origin = start of the first interval (7.05 s - 0.05 s); bins of 0.1 s:
    #   (0,0.1]: 1000 + 2000 B → 3000·8/0.1 = 240 kbit/s, queue max 20, drops 1 + 1
    #   (0.1,0.2]: 3000 + 4000 B → 560 kbit/s, queue max 30, drops 2; reverse row ignored
    assert X["t_s"].tolist() == pytest.approx([0.1, 0.2])
    assert X["throughput_bps"].tolist() == pytest.approx([240e3, 560e3])
    assert X["bytes"].tolist() == [3000, 7000]
    assert X["packets"].tolist() == [3, 5]
    assert X["queue_bytes_max"].tolist() == [20, 30]
    assert X["drops"].tolist() == [2, 2]


def test_bottleneck_throughput_with_rep_start_and_links():
    b = _bottleneck_rows(base=7 * S)
    X = bottleneck_throughput(b, bin_s=0.1, rep_start={1: 7 * S - S // 10})
    # the repetition began 0.1 s before the first interval: the same bins, 0.1 s later
    assert X["t_s"].tolist() == pytest.approx([0.2, 0.3])
    with pytest.raises(ValueError, match="repetition"):
        bottleneck_throughput(b, rep_start={2: 0})
    two = pd.concat([b, b.assign(link="access")])
    with pytest.raises(ValueError, match="several links"):
        bottleneck_throughput(two)
    assert bottleneck_throughput(two, link="bn")["bytes"].tolist() == [3000, 7000]
    rev = bottleneck_throughput(b, direction="reverse", bin_s=0.1)
    assert rev["bytes"].tolist() == [99_999]


def _series(t, nbytes, rate_col):
    return pd.DataFrame(
        {"repetition": 1, "t_s": t, "bytes": nbytes, rate_col: [x * 8 / 0.1 for x in nbytes]}
    )


def test_efficiency_of_the_measured_flows():
    # a: 1000 B delivered for 1100 B on the wire; b: 3000 for 3300; c left no wire count
    # (older sender) and is left out of both sums: 4000 / 4400
    tr = transfers_df(
        {"transfer": "a", "bytes": 1000, "wire_bytes": 1100},
        {"transfer": "b", "bytes": 3000, "wire_bytes": 3300},
        {"transfer": "c", "bytes": 5000, "wire_bytes": NAN},
    )
    assert efficiency(tr) == pytest.approx(4000 / 4400)
    # one 1448-byte segment per 1514-byte frame and nothing else: 1448/1514
    seg = transfers_df({"bytes": 1448 * 1000, "wire_bytes": 1514 * 1000})
    assert efficiency(seg) == pytest.approx(1448 / 1514)
    with pytest.raises(ValueError, match="wire bytes"):
        efficiency(tr.drop(columns=["wire_bytes"]))
    with pytest.raises(ValueError, match="wire bytes"):
        efficiency(tr[tr["transfer"] == "c"])


def test_utilisation_of_the_measured_flows():
    ms = S // 1000
    # rep 1: a sends 0–200 ms, b 100–400 ms: span 0.4 s; 2.5 MB + 2.5 MB on the wire
    # = 40 Mbit / 0.4 s = 100 Mbit/s on C = 200 Mbit/s → 0.5
    tr = transfers_df(
        {"transfer": "a", "start_ns": 0, "end_ns": 200 * ms, "wire_bytes": 2_500_000},
        {"transfer": "b", "start_ns": 100 * ms, "end_ns": 400 * ms, "wire_bytes": 2_500_000},
    )
    assert utilisation(tr, 200e6) == pytest.approx(0.5)
    assert utilisation(tr, None) is None
    # an idle gap between flows counts: b starting at 1.8 s makes the span 2 s → 0.1
    gap = tr.assign(start_ns=[0, 1800 * ms], end_ns=[200 * ms, 2000 * ms])
    assert utilisation(gap, 200e6) == pytest.approx(0.1)
    # repetitions pooled: rep 2 moves 10 Mbit in 0.1 s; (40 + 10) Mbit / 0.5 s / 200 Mbit/s
    rep2 = transfers_df(
        {
            "repetition": 2,
            "transfer": "a",
            "start_ns": 5 * S,
            "end_ns": 5 * S + 100 * ms,
            "wire_bytes": 1_250_000,
        }
    )
    assert utilisation(pd.concat([tr, rep2]), 200e6) == pytest.approx(0.5)
    # what crossed the bottleneck: a's 2.5 MB held 1 MB of payload sent twice out of
    # 2.4 MB sent (its first copies were dropped): 2.5 × (1 − 1/2.4) = 1.458333 MB;
    # (1.458333 + 2.5) MB × 8 / 0.4 s / 200 Mbit/s = 0.395833
    lossy = tr.assign(bytes_sent=[2_400_000, NAN], bytes_retrans=[1_000_000, NAN])
    assert utilisation(lossy, 200e6) == pytest.approx(0.395833, abs=1e-6)
    # a sender's view over C (everything sent twice at 1.6 × C) crosses once: 0.8, not 1.6
    twice = transfers_df(
        {
            "transfer": "a",
            "start_ns": 0,
            "end_ns": 100 * ms,
            "wire_bytes": 4_000_000,
            "bytes_sent": 3_800_000,
            "bytes_retrans": 1_900_000,
        }
    )
    assert utilisation(twice, 200e6) == pytest.approx(0.8)
    with pytest.raises(ValueError, match="every flow"):
        utilisation(tr.assign(wire_bytes=[2_500_000, NAN]), 200e6)
    with pytest.raises(ValueError, match="first start and last end"):
        utilisation(tr.assign(end_ns=[NAN, NAN]), 200e6)


def test_link_utilisation():
    X = _series([0.1, 0.2, 0.3, 0.4], [0, 625_000, 1_250_000, 0], "throughput_bps")
    # busy bins at 50 and 100 Mbit/s: mean 75 Mbit/s on C = 100 Mbit/s
    assert link_utilisation(X, 100e6) == pytest.approx(0.75)
    assert link_utilisation(X, None) is None
    assert link_utilisation(_series([0.1], [0], "throughput_bps"), 100e6) == 0.0
    # an idle bin between busy ones counts (a stall is lost capacity); the edges do not:
    # (50 + 0 + 100) / 3 Mbit/s on C = 100 Mbit/s
    stall = _series([0.1, 0.2, 0.3, 0.4, 0.5], [0, 625_000, 0, 1_250_000, 0], "throughput_bps")
    assert link_utilisation(stall, 100e6) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        link_utilisation(X, 0.0)


def test_queueing_delay():
    b = bottleneck_df(
        {"t_ns": 1, "bytes": 0, "queue_bytes": 0, "queue_max_bytes": 3000},  # before busy
        {"t_ns": 2, "bytes": 100, "queue_bytes": 1000, "queue_max_bytes": 1500},
        {"t_ns": 3, "bytes": 100, "queue_bytes": 2000, "queue_max_bytes": 2500},
        {"t_ns": 4, "bytes": 0, "queue_bytes": 0, "queue_max_bytes": 100},
        {"t_ns": 5, "bytes": 100, "queue_bytes": 1000, "queue_max_bytes": 1200},
        {"t_ns": 6, "bytes": 0, "queue_bytes": 0, "queue_max_bytes": 0},  # after busy
    )
    # busy span t 2..5: queue 1000, 2000, 0, 1000 → mean 1000 B → 8000 bit / 8 Mbit/s = 1 ms
    # max within the span: 2500 B → 20000 bit / 8 Mbit/s = 2.5 ms
    q = queueing_delay(b, 8e6)
    assert q["mean_s"] == pytest.approx(1e-3) and q["max_s"] == pytest.approx(2.5e-3)
    assert queueing_delay(b, None) == {"mean_s": None, "max_s": None}
    with pytest.raises(ValueError):
        queueing_delay(b, 8e6, direction="reverse")


# --- one run -----------------------------------------------------------------------------


def _run_tables():
    """Two repetitions; C = 100 Mbit/s, C_a = 50 Mbit/s, 1.25 MB (10 Mbit) per transfer."""
    ms = S // 1000
    r2 = 100 * S  # repetition 2's timeline starts at 100 s
    fwd = {"bytes_expected": 1_250_000, "access_rate_bps": 50e6}
    tr = transfers_df(
        fwd
        | {
            "repetition": 1,
            "transfer": "a",
            "bytes": 1_250_000,
            "end_ns": 250 * ms,
            "completion_s": 0.25,
            "wire_bytes": 1_320_000,
        },
        fwd
        | {
            "repetition": 1,
            "transfer": "b",
            "bytes": 1_250_000,
            "end_ns": 500 * ms,
            "completion_s": 0.5,
            "cc": "bbr",
            "wire_bytes": 1_330_000,
        },
        {
            "repetition": 1,
            "transfer": "r",
            "direction": "reverse",
            "bytes": 100_000,
            "bytes_expected": 100_000,
            "completion_s": 0.3,
            "end_ns": 300 * ms,
            "wire_bytes": 110_000,
        },
        fwd
        | {
            "repetition": 2,
            "transfer": "a",
            "bytes": 1_250_000,
            "start_ns": r2,
            "end_ns": r2 + 300 * ms,
            "completion_s": 0.3,
            "rep_start_ns": r2,
            "wire_bytes": 1_300_000,
        },
        fwd
        | {
            "repetition": 2,
            "transfer": "b",
            "bytes": 600_000,
            "start_ns": r2,
            "end_ns": r2 + 200 * ms,
            "ok": False,
            "error": "timeout",
            "rep_start_ns": r2,
            "wire_bytes": 700_000,
        },
    )
    sm = samples_df(
        goodput_row(1, "a", 100 * ms, 0.1, 500_000),
        goodput_row(1, "a", 200 * ms, 0.1, 500_000),
        goodput_row(1, "a", 250 * ms, 0.05, 250_000),
        *(goodput_row(1, "b", k * 100 * ms, 0.1, 250_000) for k in range(1, 6)),
        goodput_row(1, "r", 100 * ms, 0.1, 100_000),
        tcp_info_row(1, "a", 50 * ms),
        goodput_row(2, "a", r2 + 100 * ms, 0.1, 400_000),
        goodput_row(2, "a", r2 + 200 * ms, 0.1, 400_000),
        goodput_row(2, "a", r2 + 300 * ms, 0.1, 450_000),
        goodput_row(2, "b", r2 + 100 * ms, 0.1, 300_000),
        goodput_row(2, "b", r2 + 200 * ms, 0.1, 300_000),
    )
    wire1 = [800_000, 800_000, 520_000, 260_000, 260_000, 100]
    queue1 = [10_000, 20_000, 5_000, 0, 0, 0]
    peak1 = [12_000, 25_000, 6_000, 0, 0, 0]
    rows = [
        {
            "repetition": 1,
            "t_ns": (k + 1) * 100 * ms,
            "bytes": w,
            "queue_bytes": q,
            "queue_max_bytes": p,
        }
        for k, (w, q, p) in enumerate(zip(wire1, queue1, peak1))
    ]
    rows += [
        {"repetition": 2, "t_ns": r2 + (k + 1) * 100 * ms, "bytes": w}
        for k, w in enumerate([750_000, 750_000, 480_000])
    ]
    rows += [{"repetition": 1, "direction": "reverse", "t_ns": 100 * ms, "bytes": 50_000}]
    return tr, sm, bottleneck_df(*rows)


CONTEXT = {"capacity_bps": 100e6, "reverse_capacity_bps": 100e6, "mtu": 1500, "payload_share": 1.0}


def test_run_metrics_per_repetition():
    tr, sm, bn = _run_tables()
    m = run_metrics(tr, sm, bn, CONTEXT)
    json.dumps(m.model_dump(mode="json"), allow_nan=False)  # plain JSON, no NaN
    r1, r2 = m.repetitions
    assert (r1.repetition, r2.repetition) == (1, 2)

    # rep 1: forward 0.25 and 0.5 s → mean 0.375, σ = sqrt(2 · 0.125² / 1) = 0.125·√2
    c = r1.completion
    assert (c.n, c.n_failed, c.t_min, c.t_max) == (2, 0, 0.25, 0.5)
    assert c.t_mean == 0.375 and c.sigma_t == pytest.approx(0.125)
    # ḡ: a = 10 Mbit / 0.25 s = 40 Mbit/s, b = 10 / 0.5 = 20 → J = 60² / (2·(40² + 20²)) = 0.9
    assert r1.jain == pytest.approx(0.9)
    # pooled over cubic's a and bbr's b; intra-protocol, each cc has one flow: no J
    assert r1.jain_by_cc == {"bbr": None, "cubic": None}
    # the forward flows a and b (r is reverse): 2.5 MB delivered for 1.32 + 1.33 MB sent
    assert r1.bin_s == 0.1
    assert r1.efficiency == pytest.approx(2500 / 2650)
    # their 2.65 MB = 21.2 Mbit over their span 0 .. 0.5 s: 42.4 Mbit/s on C = 100 Mbit/s
    assert r1.utilisation == pytest.approx(0.424)
    # the link: busy X bins (2 640 000 + 100) B · 8 / 0.1 s / 6 bins, over C = 1e8
    assert r1.link_utilisation == pytest.approx(2_640_100 * 80 / 6 / 1e8)
    # queue over the busy span (all 6 rows): mean 35 000 / 6 B; max from queue_max 25 000 B
    assert r1.queueing_delay.mean_s == pytest.approx(35_000 / 6 * 8 / 1e8)
    assert r1.queueing_delay.max_s == pytest.approx(25_000 * 8 / 1e8)
    # fair share: a and b start together, capped at 50 on 100 → 10 Mbit / 50 = 0.2 s each;
    # measured mean 0.375 vs 0.2: +87.5 %
    fs = r1.fair_share
    assert fs.ideal_mean_s == pytest.approx(0.2)
    assert fs.measured_mean_s == 0.375 and fs.difference_pct == pytest.approx(87.5)
    assert fs.ignores == ["reverse"]  # r shares the path, the model leaves it out

    per = {t.transfer: t for t in r1.transfers}
    assert set(per) == {"a", "b", "r"} and per["r"].direction == "reverse"
    assert per["a"].mean_goodput_bps == pytest.approx(40e6)
    assert per["a"].sigma_goodput_bps == pytest.approx(0.0)  # 40, 40, 40 Mbit/s
    assert per["a"].goodput_distribution[80] == 1.0  # 40 of C_a = 50 → 80 %
    assert per["r"].goodput_distribution is None  # unlimited C_a
    assert per["a"].ideal_s == pytest.approx(0.2) and per["r"].ideal_s is None
    assert per["b"].cc == "bbr" and per["b"].error is None

    # rep 2: b failed → n 1: no σ; b's bytes still count for efficiency and utilisation:
    # 1.85 MB delivered for 2 MB sent, 16 Mbit over 0.3 s
    c = r2.completion
    assert (c.n, c.n_failed, c.t_mean, c.sigma_t) == (1, 1, 0.3, None)
    # and for Jain, as delivered over the time it ran (to the repetition's last end,
    # 0.3 s): b 4.8 Mbit / 0.3 s = 16 Mbit/s beside a's 10 / 0.3 = 100/3 Mbit/s →
    # J = (148/3)² / (2 · (10000/9 + 256)) = 21904 / 24608
    assert r2.jain == pytest.approx(21904 / 24608)
    assert r2.efficiency == pytest.approx(0.925)
    assert r2.utilisation == pytest.approx(16 / 30)
    assert r2.link_utilisation == pytest.approx(1_980_000 * 80 / 3 / 1e8)
    assert r2.queueing_delay.model_dump() == {"mean_s": 0.0, "max_s": 0.0}
    # only a is compared with its ideal: 0.3 vs 0.2 → +50 %
    assert r2.fair_share.difference_pct == pytest.approx(50.0)
    assert r2.fair_share.ideal_mean_s == pytest.approx(0.2)  # b's ideal counts here
    assert r2.fair_share.ignores == []
    assert per["a"].wire_bytes == 1_320_000 and per["a"].bytes_retrans is None
    per2 = {t.transfer: t for t in r2.transfers}
    assert per2["b"].completion_s is None and per2["b"].mean_goodput_bps is None
    assert per2["b"].error == "timeout" and per2["b"].ok is False


def test_run_metrics_overall():
    tr, sm, bn = _run_tables()
    o = run_metrics(tr, sm, bn, CONTEXT).overall
    assert o.n_repetitions == 2
    # all forward completions 0.25, 0.5, 0.3 (one failure): mean 0.35,
    # σ = sqrt((0.1² + 0.15² + 0.05²) / 2) = sqrt(0.0175)
    c = o.completion
    assert (c.n, c.n_failed) == (3, 1)
    assert c.t_mean == pytest.approx(0.35) and c.sigma_t == pytest.approx((0.0175 * 2 / 3) ** 0.5)
    # per-repetition T_mean 0.375 and 0.3: mean 0.3375, σ = 0.0375·√2, CoV = σ / 0.3375
    assert o.t_mean_mean == pytest.approx(0.3375)
    assert o.t_mean_sigma == pytest.approx(0.0375 * math.sqrt(2))
    assert o.t_mean_cov == pytest.approx(0.0375 * math.sqrt(2) / 0.3375)
    # sorted 0.25, 0.3, 0.5: q68 at 1.36 → 0.3 + 0.36·0.2 = 0.372 → m68 = 0.022
    #                        q95 at 1.9  → 0.3 + 0.9·0.2  = 0.48  → m95 = 0.13
    mg = o.margins
    assert mg.m68_s == pytest.approx(0.022) and mg.m68_pct == pytest.approx(2.2 / 0.35)
    assert mg.m95_s == pytest.approx(0.13) and mg.m95_pct == pytest.approx(13 / 0.35)
    # rep 1's 0.9 and rep 2's, where b failed having delivered 16 Mbit/s: 21904 / 24608
    assert o.jain_mean == pytest.approx((0.9 + 21904 / 24608) / 2)
    assert o.efficiency_mean == pytest.approx((2500 / 2650 + 0.925) / 2)
    assert o.utilisation_mean == pytest.approx((0.424 + 16 / 30) / 2)
    assert o.link_utilisation_mean == pytest.approx(
        (2_640_100 * 80 / 6 + 1_980_000 * 80 / 3) / 2 / 1e8
    )
    # fair share pooled over the completed pairs: measured 0.25, 0.5, 0.3 vs ideal 0.2 each;
    # the ideal over all four forward transfers (b of rep 2 failed) is 0.2 too
    fs = o.fair_share
    assert fs.n_compared == 3 and fs.measured_mean_s == pytest.approx(0.35)
    assert fs.compared_ideal_mean_s == pytest.approx(0.2)
    assert fs.difference_pct == pytest.approx(75.0)
    assert fs.ideal_mean_s == pytest.approx(0.2) and fs.ideal_max_s == pytest.approx(0.2)
    assert fs.payload_share == 1.0 and fs.ignores == ["reverse"]


def test_run_metrics_unlimited_capacity_and_no_bottleneck_rows():
    tr, sm, bn = _run_tables()
    ctx = {"capacity_bps": None, "reverse_capacity_bps": None, "mtu": 1500}
    m = run_metrics(tr, sm, bn.iloc[0:0], ctx)
    json.dumps(m.model_dump(mode="json"), allow_nan=False)
    r1 = m.repetitions[0]
    assert r1.utilisation is None and r1.link_utilisation is None
    assert r1.efficiency == pytest.approx(2500 / 2650)  # needs no C, nor the link's log
    assert r1.queueing_delay.model_dump() == {"mean_s": None, "max_s": None}
    # no shared limit: each flow at its cap scaled by 1448/1514 (TCP payload at MTU 1500)
    fs = r1.fair_share
    assert fs.payload_share == pytest.approx(1448 / 1514)
    assert fs.ideal_mean_s == pytest.approx(0.2 * 1514 / 1448)
    assert m.overall.utilisation_mean is None


def test_fair_share_caps_pacing_on_payload_and_links_on_the_wire():
    # Unlimited C, payload share s = 1448/1514 (MTU 1500). 10 Mbit per transfer.
    # a is paced at 50 Mbit/s: Linux paces payload, so 10 / 50 = 0.2 s exactly;
    # b sits behind a 50 Mbit/s access link: 50·s of payload, 0.2 / s s;
    # c has both, the link at 40: min(40·s, 50) = 40·s → 0.25 / s s
    tr, sm, bn = _run_tables()
    tr = tr[tr["repetition"] == 1].copy()
    tr["access_link_bps"] = [NAN, 50e6, 40e6]
    tr["pacing_cap_bps"] = [50e6, NAN, 50e6]
    tr.loc[tr["transfer"] == "r", "direction"] = "forward"
    tr.loc[tr["transfer"] == "r", "bytes_expected"] = 1_250_000
    m = run_metrics(tr, sm, bn, {"capacity_bps": None, "mtu": 1500})
    s = 1448 / 1514
    per = {t.transfer: t.ideal_s for t in m.repetitions[0].transfers}
    assert per["a"] == pytest.approx(0.2)
    assert per["b"] == pytest.approx(0.2 / s)
    assert per["r"] == pytest.approx(0.25 / s)
    fs = m.overall.fair_share
    assert fs.payload_share == pytest.approx(s) and fs.ignores == []
    assert fs.ideal_mean_s == pytest.approx((0.2 + 0.45 / s) / 3)


def test_run_metrics_without_caps_or_capacity_has_no_ideal():
    tr, sm, bn = _run_tables()
    tr = tr.assign(access_rate_bps=np.nan)
    m = run_metrics(tr, sm, bn, {"capacity_bps": None, "mtu": 1500})
    assert m.repetitions[0].fair_share is None
    assert m.overall.fair_share is None


def test_run_metrics_accepts_tables_with_nothing_logged():
    # the engine writes pd.DataFrame() when no sample or emulator log exists
    tr, _, _ = _run_tables()
    m = run_metrics(tr, pd.DataFrame(), pd.DataFrame(), CONTEXT)
    r1 = m.repetitions[0]
    assert r1.completion.t_mean == 0.375 and r1.jain == pytest.approx(0.9)
    assert r1.link_utilisation is None and r1.bin_s == 0.1
    assert r1.efficiency == pytest.approx(2500 / 2650)  # from the senders' counts
    assert r1.utilisation == pytest.approx(0.424)
    assert r1.transfers[0].n_samples == 0
    # tables from before the senders' counts: no efficiency, no utilisation
    old = run_metrics(tr.drop(columns=["wire_bytes"]), pd.DataFrame(), pd.DataFrame(), CONTEXT)
    assert old.repetitions[0].efficiency is None
    assert old.repetitions[0].utilisation is None


def test_run_metrics_no_ideal_for_pingpong():
    tr, sm, bn = _run_tables()
    tr.loc[(tr.repetition == 1) & (tr.transfer == "b"), "kind"] = "pingpong"
    m = run_metrics(tr, sm, bn, CONTEXT)
    assert m.repetitions[0].fair_share is None
    assert m.repetitions[1].fair_share is not None


def test_run_metrics_rejects_missing_columns():
    tr, sm, bn = _run_tables()
    with pytest.raises(ValueError, match="bottleneck: missing columns: queue_bytes"):
        run_metrics(tr, sm, bn.drop(columns=["queue_bytes"]), CONTEXT)


def test_run_metrics_after_parquet_round_trip(tmp_path):
    # the tables come from Parquet files: dtypes after the round trip must not matter
    tr, sm, bn = _run_tables()
    direct = run_metrics(tr, sm, bn, CONTEXT)
    read = []
    for name, df in (("transfers", tr), ("samples", sm), ("bottleneck", bn)):
        df.to_parquet(tmp_path / f"{name}.parquet")
        read.append(pd.read_parquet(tmp_path / f"{name}.parquet"))
    assert run_metrics(*read, CONTEXT) == direct


def test_a_transfer_that_never_started_is_a_failure_with_nothing_measured():
    """Its sender never ran (start None) and its receiver reported nothing (bytes None):
    the repetition's metrics still build, the transfer counted as not completed."""
    tr, sm, bn = _run_tables()
    never = transfers_df(
        {
            "repetition": 2,
            "transfer": "c",
            "bytes_expected": 1_250_000,
            "bytes": None,
            "start_ns": None,
            "end_ns": None,
            "ok": False,
            "error": "interrupted",
            "rep_start_ns": 100 * S,
        }
    )
    m = run_metrics(pd.concat([tr, never], ignore_index=True), sm, bn, CONTEXT)
    c = next(t for t in m.repetitions[1].transfers if t.transfer == "c")
    assert (c.bytes, c.start_s, c.completion_s, c.ok) == (None, None, None, False)
    assert m.repetitions[1].completion.n_failed == 2  # b (timeout) and c
    json.dumps(m.model_dump(mode="json"), allow_nan=False)


def test_a_link_full_from_0_1_to_10_1_s_is_used_whole(tmp_path):
    """linkem stamps a row with its interval's start, the bottleneck table with its end:
    read as ends, start-stamped rows put the first full millisecond in the bin before the
    link was busy, and a link full for exactly 100 bins of 0.1 s read 100/101 = 0.990."""
    from itb.analysis.logs import bottleneck_frames

    link = tmp_path / "rep-001" / "emulator" / "rl-rr"
    link.mkdir(parents=True)
    c = 100e6  # 100 Mbit/s: 12 500 bytes per 1 ms interval
    starts = range(100, 10_100)  # ms: intervals [0.1 s, 10.1 s)
    (link / "linkem-ab.csv").write_text(
        "t_ns,bytes,packets,drops_queue,drops_loss,queue_bytes,queue_max_bytes,late_packets,"
        "max_lag_us\n" + "".join(f"{ms * 1_000_000},12500,9,0,0,0,0,0,0\n" for ms in starts)
    )
    [table] = bottleneck_frames(tmp_path, 1)
    assert table["t_ns"].iloc[0] == 101_000_000 and table["t_ns"].iloc[-1] == 10_100_000_000
    X = bottleneck_throughput(table, bin_s=0.1, rep_start={1: 0})
    assert X["t_s"].iloc[0] == pytest.approx(0.2) and len(X) == 100
    assert link_utilisation(X, c) == pytest.approx(1.0)


def test_jain_pooled_and_among_the_transfers_of_each_cc():
    tr, sm, bn = _run_tables()
    # a third forward cubic transfer c next to a: a 40, c 20 Mbit/s (cubic), b 20 (bbr)
    c_tr = tr[(tr["transfer"] == "b") & (tr["repetition"] == 1)].assign(transfer="c", cc="cubic")
    c_sm = sm[(sm["transfer"] == "b") & (sm["repetition"] == 1)].assign(transfer="c")
    m = run_metrics(pd.concat([tr, c_tr]), pd.concat([sm, c_sm]), bn, CONTEXT)
    r1 = m.repetitions[0]
    # pooled: 80² / (3 · (40² + 20² + 20²)) = 6400 / 7200; cubic: 60² / (2 · 2000) = 0.9
    assert r1.jain == pytest.approx(6400 / 7200)
    assert r1.jain_by_cc == {"bbr": None, "cubic": pytest.approx(0.9)}
    # rep 2's a and b (failed, as delivered) are both cubic: 21904 / 24608 (above)
    assert m.overall.jain_by_cc_mean == {
        "bbr": None,
        "cubic": pytest.approx((0.9 + 21904 / 24608) / 2),
    }


def test_a_flow_starved_until_it_fails_counts_in_jains_index_with_what_it_delivered():
    # two flows at 0: a delivers 1.25 MB in 1 s, b is starved (0 bytes) until the
    # repetition ends → goodputs 10 and 0 Mbit/s: J = 10² / (2 · 10²) = 0.5
    ms = 1_000_000
    tr = transfers_df(
        {"transfer": "a", "bytes": 1_250_000, "end_ns": 1000 * ms, "completion_s": 1.0},
        {"transfer": "b", "bytes": 0, "end_ns": NAN, "ok": False, "error": "timeout"},
    )
    m = run_metrics(tr, samples_df(), bottleneck_df(), CONTEXT)
    assert m.repetitions[0].jain == pytest.approx(0.5)
    assert m.repetitions[0].jain_by_cc == {"cubic": pytest.approx(0.5)}


def test_a_completed_flow_of_zero_bytes_leaves_the_utilisation_of_the_others():
    # a: 2.5 MB of wire bytes over 0 .. 0.2 s; z: a zero-byte transfer, done at once, that
    # put nothing on the wire → 20 Mbit / 0.2 s = 100 Mbit/s of C = 200 Mbit/s
    ms = 1_000_000
    tr = transfers_df(
        {"transfer": "a", "bytes": 2_400_000, "end_ns": 200 * ms, "completion_s": 0.2,
         "wire_bytes": 2_500_000},
        {"transfer": "z", "bytes": 0, "end_ns": 0, "completion_s": 0.0, "wire_bytes": 0},
    )  # fmt: skip
    assert utilisation(tr, 200e6) == pytest.approx(0.5)
