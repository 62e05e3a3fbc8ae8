"""CPU steal time during a repetition (itb.engine.steal), from /proc/stat lines written
by hand: the share is Δsteal / Δ(user … steal), guest time left out (already in user)."""

from __future__ import annotations

from itb.engine.steal import cpu_times, steal_share, steal_warning

#               user  nice system idle iowait irq softirq steal guest guest_nice
BEFORE = "cpu  1000 0 200 8000 50 0 30 20 400 0\ncpu0 500 0 100 4000 25 0 15 10 200 0\n"
AFTER = "cpu  1300 0 260 8200 50 0 40 150 500 0\ncpu0 650 0 130 4100 25 0 20 75 250 0\n"


def test_the_aggregate_line_gives_steal_and_the_total_without_guest_time():
    # 1000 + 0 + 200 + 8000 + 50 + 0 + 30 + 20 = 9300
    assert cpu_times(BEFORE) == (20, 9300)
    assert cpu_times(AFTER) == (150, 10000)


def test_the_share_is_stolen_ticks_over_all_ticks_between_two_readings():
    # (150 − 20) / (10000 − 9300) = 130 / 700
    share = steal_share(cpu_times(BEFORE), cpu_times(AFTER))
    assert share is not None and abs(share - 130 / 700) < 1e-12
    warning = steal_warning(share)
    assert warning is not None and "19 %" in warning


def test_a_kernel_without_the_column_or_no_time_between_readings_gives_no_share():
    assert cpu_times("cpu  1000 0 200 8000 50 0 30\n") is None  # no steal column
    assert steal_share(None, (150, 10000)) is None
    assert steal_share((20, 9300), (20, 9300)) is None
    assert steal_warning(0.049) is None and steal_warning(None) is None
