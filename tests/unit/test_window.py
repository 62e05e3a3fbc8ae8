"""An impossible window in a sender's tcp_info: caught when the tables are built, the
transfer's time not used, and counted as corrupt in the metrics and the benchmark table."""

import math

import pandas as pd

from itb.analysis.metrics import run_metrics
from itb.analysis.window import IMPOSSIBLE_WINDOW, find_faults, mark_corrupt
from itb.suite import stats

from .test_metrics import S, goodput_row, samples_df, transfers_df

CONTEXT = {"capacity_bps": 1e9, "mtu": 1500}


def tcp_info(transfer, t_s, cwnd, ssthresh=math.nan, stream=0, rep=1):
    return {
        "repetition": rep,
        "transfer": transfer,
        "series": "tcp_info",
        "stream": stream,
        "t_ns": int(t_s * S),
        "cwnd": float(cwnd),
        "ssthresh": ssthresh,
        "rtt_us": 20000.0,
    }


def two_transfers():
    tr = transfers_df(
        {
            "transfer": "good",
            "bytes_expected": 10**7,
            "bytes": 10**7,
            "start_ns": 1 * S,
            "end_ns": 3 * S,
            "completion_s": 2.0,
            "rep_start_ns": 0,
        },
        {
            "transfer": "bad",
            "bytes_expected": 10**7,
            "bytes": 10**7,
            "start_ns": 1 * S,
            "end_ns": 4 * S,
            "completion_s": 3.0,
            "rep_start_ns": 0,
        },
    )
    series = [tcp_info("good", 1 + i / 10, 100 + i, 90) for i in range(20)]
    # the fault as once seen on this kernel: ~2^31 during recovery, then back to normal
    series += [
        tcp_info("bad", 1 + i / 10, 2_136_455_083 if i == 12 else 100, 90) for i in range(30)
    ]
    series += [tcp_info("bad", 1.55, 120, 3_000_000_000, stream=1)]  # a later stream fault
    series += [
        goodput_row(1, t, int((1 + i / 10) * S), 0.1, 10**5)
        for t in ("good", "bad")
        for i in range(20)
    ]
    return tr, samples_df(*series)


def test_an_impossible_window_is_found_with_where_and_when():
    tr, sm = two_transfers()
    [f] = find_faults(sm, {(1, "good"): S, (1, "bad"): S})
    assert (f.transfer, f.field, f.value, f.stream) == ("bad", "ssthresh", 3_000_000_000, 1)
    assert f.t_s == 0.55  # the earlier of the two faults, after the first byte
    assert "ssthresh 3000000000 segments (over 2^24) at 0.550 s on stream 1" in f.reason()


def test_nocc_and_the_unset_ssthresh_are_not_faults():
    sm = samples_df(
        tcp_info("nocc", 1.0, 1 << 20),
        tcp_info("x", 1.0, 10, math.nan),
        tcp_info("edge", 1.0, IMPOSSIBLE_WINDOW, IMPOSSIBLE_WINDOW),
    )
    assert find_faults(sm, {}) == []


def test_the_corrupt_transfer_is_not_used_and_is_counted():
    tr, sm = two_transfers()
    marked = mark_corrupt(tr, sm).set_index("transfer")
    assert marked.loc["good", "ok"] and marked.loc["good", "corrupt_window"] is None
    bad = marked.loc["bad"]
    assert not bad["ok"] and math.isnan(bad["completion_s"])
    assert bad["error"].startswith("corrupt window: ") and bad["corrupt_window"] == bad["error"]

    m = run_metrics(mark_corrupt(tr, sm), sm, pd.DataFrame(), CONTEXT)
    rep = m.repetitions[0]
    assert rep.completion.n == 1 and rep.completion.n_failed == 1
    assert rep.n_corrupt == 1 and m.overall.n_corrupt == 1
    assert rep.completion.t_mean == 2.0  # only the good transfer's time
    row = {r.transfer: r for r in rep.transfers}["bad"]
    assert row.corrupt_window.startswith("corrupt window")

    # the benchmark table counts it, among the failed, for its cell
    [table] = stats.table_rows([(stats.CellKey("BU", None, "B", "bic"), stats.per_repetition(m))])
    assert (table["failed"], table["corrupt"], table["transfers"]) == (1, 1, 1)


def test_a_repetition_whose_only_transfer_is_corrupt_still_counts():
    tr, sm = two_transfers()
    tr = tr[tr["transfer"] == "bad"]
    m = run_metrics(mark_corrupt(tr, sm), sm, pd.DataFrame(), CONTEXT)
    reps = stats.per_repetition(m)
    assert len(reps) == 1 and reps[0]["n"] == 0 and reps[0]["n_corrupt"] == 1
    [table] = stats.table_rows([(stats.CellKey("BU", None, "B", "bic"), reps)])
    assert table["corrupt"] == 1 and table["t_mean"] is None
