"""Goodput as rates a figure can draw (itb.analysis.rates): a transfer's short last sample
joined to the one before, a short first one to the one after, and G(t) spread over the
time each sample covers, against values computed by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from itb.analysis.rates import (
    aggregate_rate,
    aggregate_within,
    goodput_rates,
    per_transfer_within,
)

MS = 1_000_000  # ns


def _samples(rows) -> pd.DataFrame:
    """(transfer, t in ms, interval in ms, bytes) goodput rows of repetition 1."""
    return pd.DataFrame(
        {
            "repetition": 1,
            "transfer": [r[0] for r in rows],
            "series": "goodput",
            "stream": 0,
            "t_ns": [r[1] * MS for r in rows],
            "interval_s": [r[2] / 1000 for r in rows],
            "bytes": [float(r[3]) for r in rows],
            "goodput_bps": [r[3] * 8 / (r[2] / 1000) for r in rows],
        }
        | {c: float("nan") for c in ("cwnd", "ssthresh", "rtt_us", "total_retrans",
                                     "pacing_rate_bps", "delivery_rate_bps")}
    )  # fmt: skip


def _transfers(ids) -> pd.DataFrame:
    from itb.analysis.tables import TABLES

    base = {"repetition": 1, "transfer": ids, "direction": "forward", "rep_start_ns": 0}
    return pd.DataFrame({c: base.get(c, None) for c in TABLES["transfers"]})


def test_a_transfers_short_last_sample_joins_the_one_before_it():
    # 100 ms samples of 1.25 MB (100 Mbit/s), then 101 kB in 16.7 µs (48 Gbit/s as a rate)
    s = _samples([("a", 100, 100, 1_250_000), ("a", 200, 100, 1_250_000),
                  ("a", 200.0167, 0.0167, 101_000)])  # fmt: skip
    r = goodput_rates(s)
    assert len(r) == 2
    # the joined sample: 1 351 000 bytes from 100 ms to 200.0167 ms: 108.06 Mbit/s
    assert r["bytes"].tolist() == [1_250_000, 1_351_000]
    assert r["goodput_bps"].iloc[1] == pytest.approx(1_351_000 * 8 / 0.1000167)
    assert r["bytes"].sum() == s["bytes"].sum()  # nothing lost


def test_a_short_first_sample_joins_the_one_after_it():
    s = _samples([("a", 0.5, 0.5, 10_000), ("a", 100.5, 100, 1_000_000),
                  ("b", 100, 100, 500_000)])  # fmt: skip
    r = goodput_rates(s).set_index("transfer")
    assert r.loc["a", "bytes"] == 1_010_000 and r.loc["a", "start_ns"] == 0
    assert r.loc["b", "bytes"] == 500_000


def test_g_spreads_each_sample_over_the_bins_it_covers():
    # one transfer's samples end 0.5 ms after the bins' edges: aggregate_goodput put two
    # in one bin (twice the rate) and none in the next; spread, each 100 ms bin gets
    # 99.5 % of one sample and 0.5 % of the one before
    s = _samples([("a", 100.5, 100, 1_000_000), ("a", 200.5, 100, 1_000_000),
                  ("a", 300.5, 100, 1_000_000)])  # fmt: skip
    G = aggregate_rate(s, _transfers(["a"]), bin_s=0.1)
    assert G["t_s"].tolist() == pytest.approx([0.1, 0.2, 0.3, 0.4])
    assert G["bytes"].tolist() == pytest.approx([995_000, 1_000_000, 1_000_000, 5_000])
    assert G["bytes"].sum() == pytest.approx(3_000_000)


def test_g_takes_longer_bins_until_it_stays_within_the_link():
    # two transfers on an 80 Mbit/s link (1 MB per 100 ms); b's reader falls behind, then
    # takes its backlog at once: 0.4 MB, 0.2 MB, then 1.4 MB in 100 ms bins
    s = _samples([("a", 100, 100, 500_000), ("a", 200, 100, 500_000), ("a", 300, 100, 500_000),
                  ("a", 400, 100, 500_000),
                  ("b", 100, 100, 500_000), ("b", 200, 100, 300_000), ("b", 300, 100, 200_000),
                  ("b", 400, 100, 1_000_000)])  # fmt: skip
    G, bin_s = aggregate_within(s, _transfers(["a", "b"]), 80e6)
    # 0.1 s: 1.5 MB in the last bin (120 Mbit/s); 0.2 s: 1.8 MB then 2.2 MB per 200 ms,
    # 88 Mbit/s; 0.5 s: 4 MB in 0.5 s, 64 Mbit/s
    assert bin_s == 0.5 and G["goodput_bps"].max() <= 80e6 * 1.01


def test_a_transfer_that_catches_up_is_drawn_over_bins_that_stay_within_the_link():
    # alone on an 80 Mbit/s link its reader takes 0.4 MB, 0.8 MB, 1.8 MB per 100 ms (the
    # last 144 Mbit/s); over 0.2 s bins 1.2 MB then 1.8 MB: 48 and 72 Mbit/s
    s = _samples([("a", 100, 100, 400_000), ("a", 200, 100, 800_000),
                  ("a", 300, 100, 1_800_000)])  # fmt: skip
    each, bin_s = per_transfer_within(s, _transfers(["a"]), 80e6)
    assert bin_s == 0.2 and each["goodput_bps"].tolist() == pytest.approx([48e6, 72e6])
    assert each["t_s"].tolist() == pytest.approx([0.2, 0.4])
    # within the link: the log's own samples, at their dates
    each, bin_s = per_transfer_within(s, _transfers(["a"]), 200e6)
    assert bin_s == 0.1 and each["t_s"].tolist() == pytest.approx([0.1, 0.2, 0.3])
