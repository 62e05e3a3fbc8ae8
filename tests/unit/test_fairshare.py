"""Fair-share ideal: water-filling rates and event-driven completion times, by hand."""

import math

import pytest

from itb.analysis.fairshare import (
    fair_share_summary,
    ideal_completion_times,
    max_min_rates,
    source_cap_bps,
    tcp_payload_share,
)

MB = 1_000_000  # bytes; 1 MB = 8 Mbit
MBIT = 1_000_000  # bit/s


def test_max_min_rates_water_filling():
    # C = 100, caps 10, ∞, ∞: the capped flow takes 10, the other two split 90.
    assert max_min_rates([10.0, math.inf, math.inf], 100.0) == [10.0, 45.0, 45.0]
    # every cap below the equal share: everyone gets its cap, capacity is left over
    assert max_min_rates([10.0, 20.0], 100.0) == [10.0, 20.0]
    # unlimited capacity: caps only
    assert max_min_rates([10.0, 20.0], math.inf) == [10.0, 20.0]


def test_a_transfer_of_n_streams_gets_n_shares():
    # C = 100: a 3-stream transfer and a 1-stream one → 75 and 25
    assert max_min_rates([math.inf, math.inf], 100.0, [3, 1]) == [75.0, 25.0]
    # capped at 60, the 3-stream one leaves 40 to the other (its own share, 25, is less)
    assert max_min_rates([60.0, math.inf], 100.0, [3, 1]) == [60.0, 40.0]
    # 400 Mbit each: the 3-stream one at 75 finishes at 16/3 s, having left the other
    # 25 × 16/3 = 133.3 Mbit; the other's remaining 266.7 Mbit then at 100: 2.67 s more
    got = ideal_completion_times(
        [0.0, 0.0], [50 * MB, 50 * MB], [None, None], 100 * MBIT, streams=[3, 1]
    )
    assert got == pytest.approx([16 / 3, 8.0], abs=1e-9)
    with pytest.raises(ValueError, match="streams"):
        ideal_completion_times([0.0], [MB], [None], 100 * MBIT, streams=[0])


def test_one_capped_flow():
    # 50 MB = 400 Mbit at its cap of 50 Mbit/s (link 100 Mbit/s): 400 / 50 = 8 s
    assert ideal_completion_times([0.0], [50 * MB], [50 * MBIT], 100 * MBIT) == [8.0]


def test_two_equal_flows_share_the_link():
    # 100 Mbit/s split in two: 50 each, 400 Mbit / 50 = 8 s for both
    got = ideal_completion_times([0.0, 0.0], [50 * MB, 50 * MB], [None, None], 100 * MBIT)
    assert got == pytest.approx([8.0, 8.0], abs=1e-9)


def test_itb_acceptance_case_staggered_starts():
    # 4 sources, C_a = 50, C = 100 (Mbit/s), 400 Mbit each, starts 0, 1, 2, 3 s.
    # Remaining Mbit per flow (f1..f4) after each phase:
    #   0–1 s   f1 alone at its cap 50:            f1 350
    #   1–2 s   f1, f2 at 50 each:                 f1 300, f2 350
    #   2–3 s   3 flows at 100/3:                  f1 800/3, f2 950/3, f3 1100/3
    #   3 s–    4 flows at 25; f1 ends after (800/3)/25 = 32/3 s, at t = 41/3
    #           then f2 950/3-800/3 = 50, f3 1100/3-800/3 = 100, f4 400-800/3 = 400/3
    #   41/3–   3 flows at 100/3; f2 ends after 50/(100/3) = 1.5 s, at t = 91/6
    #           then f3 100-50 = 50, f4 400/3-50 = 250/3
    #   91/6–   2 flows at 50; f3 ends after 1 s, at t = 97/6; f4 250/3-50 = 100/3
    #   97/6–   f4 alone at its cap 50: ends after (100/3)/50 = 2/3 s, at t = 101/6
    # Durations: f1 41/3, f2 91/6-1 = 85/6, f3 97/6-2 = 85/6, f4 101/6-3 = 83/6
    got = ideal_completion_times([0.0, 1.0, 2.0, 3.0], [50 * MB] * 4, [50 * MBIT] * 4, 100 * MBIT)
    expected = [41 / 3, 85 / 6, 85 / 6, 83 / 6]
    for g, e in zip(got, expected):
        assert abs(g - e) < 1e-9


def test_capped_flow_leaves_spare_capacity_to_uncapped_one():
    # C = 100; A: 15 MB = 120 Mbit, cap 30; B: 50 MB = 400 Mbit, uncapped; both at 0.
    # 0–4 s: A at 30 (ends at 120/30 = 4 s), B at 100-30 = 70 → B has 400-280 = 120 left
    # 4 s–: B alone at 100 → 1.2 s more; B's duration 5.2 s
    got = ideal_completion_times([0.0, 0.0], [15 * MB, 50 * MB], [30 * MBIT, None], 100 * MBIT)
    assert got == pytest.approx([4.0, 5.2], abs=1e-9)


def test_unlimited_link_each_at_its_cap():
    # no shared limit: 400 Mbit at 50 = 8 s, 80 Mbit at 40 = 2 s
    got = ideal_completion_times([0.0, 0.5], [50 * MB, 10 * MB], [50 * MBIT, 40 * MBIT], None)
    assert got == pytest.approx([8.0, 2.0], abs=1e-9)


def test_idle_gap_between_flows():
    # flow 1: 80 Mbit at 100 → 0.8 s; the link idles until flow 2 starts at 5 s, 0.8 s again
    got = ideal_completion_times([0.0, 5.0], [10 * MB, 10 * MB], [None, None], 100 * MBIT)
    assert got == pytest.approx([0.8, 0.8], abs=1e-9)


def test_zero_volume_and_unsorted_starts():
    # starts given out of order; the empty transfer takes no time
    got = ideal_completion_times([2.0, 0.0, 1.0], [0, 10 * MB, 0], [None, None, None], 100 * MBIT)
    assert got == pytest.approx([0.0, 0.8, 0.0], abs=1e-12)


def test_payload_share_scales_capacity_and_caps():
    s = 1448 / 1514
    # uncapped on 100 Mbit/s: 400 Mbit / (100 · s) = 4 · 1514/1448 s
    got = ideal_completion_times([0.0], [50 * MB], [None], 100 * MBIT, payload_share=s)
    assert got[0] == pytest.approx(4 * 1514 / 1448, abs=1e-9)
    # capped at 50 on 100: 400 / (50 · s) = 8 · 1514/1448 s (the cap is scaled too)
    got = ideal_completion_times([0.0], [50 * MB], [50 * MBIT], 100 * MBIT, payload_share=s)
    assert got[0] == pytest.approx(8 * 1514 / 1448, abs=1e-9)


def test_tcp_payload_share():
    assert tcp_payload_share(1500) == 1448 / 1514  # 1500 - 20 IP - 20 TCP - 12 TS
    assert tcp_payload_share(1500, ipv6=True) == 1428 / 1514
    assert tcp_payload_share(9000, timestamps=False) == 8960 / 9014
    with pytest.raises(ValueError):
        tcp_payload_share(40)


@pytest.mark.parametrize(
    ("starts", "volumes", "caps", "capacity", "share"),
    [
        ([0.0], [MB], [None], None, 1.0),  # unbounded: no cap, no link limit
        ([0.0, 1.0], [MB], [None], 100.0, 1.0),  # lengths differ
        ([0.0], [-1], [None], 100.0, 1.0),  # negative volume
        ([math.nan], [MB], [None], 100.0, 1.0),  # start not a number
        ([0.0], [MB], [0.0], 100.0, 1.0),  # zero cap never finishes
        ([0.0], [MB], [None], -5.0, 1.0),  # negative capacity
        ([0.0], [MB], [None], 100.0, 0.0),  # payload_share out of (0, 1]
        ([0.0], [MB], [None], 100.0, 1.5),
    ],
)
def test_bad_inputs(starts, volumes, caps, capacity, share):
    with pytest.raises(ValueError):
        ideal_completion_times(starts, volumes, caps, capacity, payload_share=share)


def test_summary_against_measured_times():
    # acceptance case: ideal mean = (82 + 85 + 85 + 83) / 6 / 4 = 335/24 s
    # measured 14, 15, 15, 14.5 → mean 14.625 = 351/24; excess = 351/335 - 1 = 16/335
    s = fair_share_summary(
        [0.0, 1.0, 2.0, 3.0],
        [50 * MB] * 4,
        [50 * MBIT] * 4,
        100 * MBIT,
        measured_s=[14.0, 15.0, 15.0, 14.5],
    )
    assert s["ideal_mean_s"] == pytest.approx(335 / 24, abs=1e-9)
    assert s["ideal_max_s"] == pytest.approx(85 / 6, abs=1e-9)
    assert s["measured_mean_s"] == 14.625
    assert s["difference_pct"] == pytest.approx(1600 / 335, abs=1e-9)
    assert s["n_compared"] == 4


def test_summary_leaves_failed_transfers_out_of_both_means():
    # two flows, 0.8 s ideal each... with only the second completed (1.0 s): +25 %
    s = fair_share_summary(
        [0.0, 5.0], [10 * MB, 10 * MB], [None, None], 100 * MBIT, measured_s=[math.nan, 1.0]
    )
    assert s["n_compared"] == 1
    assert s["difference_pct"] == pytest.approx(25.0, abs=1e-9)
    s = fair_share_summary([0.0], [10 * MB], [None], 100 * MBIT, measured_s=[math.nan])
    assert s["difference_pct"] is None and s["measured_mean_s"] is None
    assert "difference_pct" not in fair_share_summary([0.0], [10 * MB], [None], 100 * MBIT)


def test_source_cap_pacing_is_payload_link_is_wire():
    s = 1448 / 1514
    # a link's rate is already on the wire; a pacing cap of 50 is 50 of payload, so
    # 50 / s on the wire, which the model scales back to 50
    assert source_cap_bps(100 * MBIT, None, s) == 100 * MBIT
    assert source_cap_bps(None, 50 * MBIT, s) == pytest.approx(50 * MBIT / s)
    assert source_cap_bps(math.nan, 0, s) is None  # NaN and 0: no limit of that kind
    # both: the lower, compared on the wire: link 50 vs pacing 48 / s = 50.19 → the link
    assert source_cap_bps(50 * MBIT, 48 * MBIT, s) == 50 * MBIT
    assert source_cap_bps(60 * MBIT, 48 * MBIT, s) == pytest.approx(48 * MBIT / s)
    # end to end: 50 MB paced at 50 Mbit/s alone on an unlimited link takes 8 s exactly
    cap = source_cap_bps(None, 50 * MBIT, s)
    assert ideal_completion_times([0.0], [50 * MB], [cap], None, payload_share=s) == [
        pytest.approx(8.0)
    ]
    with pytest.raises(ValueError):
        source_cap_bps(None, -1.0, s)
    with pytest.raises(ValueError):
        source_cap_bps(None, 50 * MBIT, 0.0)
