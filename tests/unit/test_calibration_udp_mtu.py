"""The MTU-size UDP check's arithmetic without a testbed: counters, window, attribution."""

from __future__ import annotations

import os
import threading

from itb.calibration import counters, udpmtu, udpmtu_verdict
from itb.calibration.udpmtu import Series
from itb.calibration.verdict import Check
from itb.emulation.monitor import Interval

C = 1_000_000_000
FRAME = 1514
T0 = 10_000_000_000
TICK = os.sysconf("SC_CLK_TCK")
RECV_SPECS = ["eth0:rx_bytes", "eth0:rx_packets", "cpu", "sched:1:2", "sched:3"]


def recv(
    rate_bps: float,
    *,
    seconds: float = 8.0,
    start_s: float = 0.5,
    idle_share: float = 0.5,
    emulator: tuple[float, float] = (0.6, 0.0),
    sender: tuple[float, float] = (0.5, 0.01),
    pauses: tuple[tuple[float, float], ...] = (),
) -> Series:
    """The receiver's sampler every 50 ms: nothing until start_s, then rate_bps of 1514 B
    frames (none during `pauses`); the host idle_share idle over 2 cores; the emulator's
    thread and the sender running / waiting those shares of the time."""
    rows, got, t = [], 0.0, 0.0
    while t <= seconds + 1e-9:
        ns = t * 1e9
        rows.append(
            [
                T0 + round(ns),
                round(got),
                round(got / FRAME),
                round(t * TICK * 2 * idle_share),
                0,
                round(ns * emulator[0]),
                round(ns * emulator[1]),
                round(ns * sender[0]),
                round(ns * sender[1]),
            ]
        )
        if start_s <= t < seconds and not any(a <= t < b for a, b in pauses):
            got += rate_bps / 8 * 0.05
        t += 0.05
    return Series({"specs": RECV_SPECS, "rows": rows})


def log_rows(rate_bps: float, seconds: float = 8.0, empty_every: int = 0) -> list[Interval]:
    per_ms = round(rate_bps / 8 / 1000)
    return [
        Interval(
            T0 + i * 1_000_000,
            per_ms,
            per_ms // FRAME,
            0,
            0,
            0 if empty_every and i % empty_every == 0 else 500_000,
            600_000,
            0,
            0.0,
        )
        for i in range(int(seconds * 1000))
    ]


def figures(r: Series, log=None, em=None):
    return udpmtu.figures(
        C, FRAME, 5.0, "eth0", r, em, ("a0", "b0"), log, "sched:1:2", "sched:3", cores=2
    )


def test_window_skips_the_ramp_and_the_tail():
    rows = recv(C).rows
    t0, t1 = udpmtu.window(rows, 5.0)
    first = next(r[0] for r in rows if r[1] > udpmtu.START_BYTES)
    assert t0 == first + 1_000_000_000
    assert t1 == t0 + 5_000_000_000
    short = udpmtu.window(rows, 50.0)  # longer than the stream: ends 0.2 s before its end
    last = max(r[0] for r, p in zip(rows[1:], rows) if r[1] > p[1])
    assert short[1] == last - 200_000_000
    assert udpmtu.window(recv(0.0).rows, 5.0) is None  # no stream, no window


def test_series_columns_follow_the_specs():
    s = Series(
        {
            "specs": ["x:rx_bytes", "cpu", "sched:9", "y:tx_dropped"],
            "rows": [[0, 1, 2, 3, 4, 5, 6], [1_000_000_000, 11, 22, 33, 44, 55, 66]],
        }
    )
    assert s.rate("x:rx_bytes", 0, 10**9) == (10.0, 1.0)
    assert s.rate("cpu", 0, 10**9, second=True)[0] == 30.0
    assert s.rate("sched:9", 0, 10**9)[0] == 40.0 and s.rate("sched:9", 0, 10**9, True)[0] == 50.0
    assert s.rate("y:tx_dropped", 0, 10**9)[0] == 60.0
    assert s.rate("absent", 0, 10**9) is None and not Series(None).has("cpu")


def test_figures_of_an_exact_link():
    f = figures(recv(C), log_rows(C))
    assert abs(f.arrived_bps - C) / C < 1e-3
    assert abs(f.arrived_pps - C / (FRAME * 8)) < 50
    assert abs(f.departed_bps - C) / C < 1e-3 and f.empty_ms == 0
    assert abs(f.host_busy_pct - 50.0) < 1.0
    assert abs(f.emulator_cpu_pct - 60.0) < 0.1 and abs(f.sender_wait_pct - 1.0) < 0.1
    check, warning = udpmtu_verdict.judge(f, "q")
    assert check.ok and check.verdict == "ok" and warning is None
    assert "82,563" in check.detail and "1514 B frames" in check.detail


def test_a_starved_sender_is_short_of_cpu():
    # Nothing reaches the receiver for 100 ms of every second: the link idles 10 %.
    pauses = tuple((s / 1000, s / 1000 + 0.1) for s in range(1500, 8000, 1000))
    log = log_rows(C * 0.9, empty_every=10)
    f = figures(recv(C, pauses=pauses, sender=(0.6, 0.2)), log)
    assert abs(f.arrived_bps / C - 0.9) < 0.011
    check, warning = udpmtu_verdict.judge(f, "q")
    assert not check.ok and check.cause == "short of CPU"
    assert check.verdict.startswith("short of CPU (-")
    assert "sender waited for a CPU 20.0 %" in warning and "idle 10.0 %" in warning
    assert "queue empty in 500 of" in warning and "paused longer than the queue lasts" in warning
    f.offered_bps, f.offered_pps = 0.9 * C, 0.9 * C / (FRAME * 8)
    assert "offered only 74,306 packets/s, fewer than the 82,563" in udpmtu_verdict.judge(f, "q")[1]
    f.offered_bps, f.offered_pps = 1.1 * C, 1.1 * C / (FRAME * 8)
    assert "on average, 1.2 × the rate is 99,075" in udpmtu_verdict.judge(f, "q")[1]
    # The link idled 10 % of the window: a sender that waited for a CPU as long can
    # account for it (short of CPU); one that waited 5 % cannot: off, with no CPU to blame.
    f.sender_wait_pct = 10.0
    check, warning = udpmtu_verdict.judge(f, "q")
    assert check.cause == "short of CPU" and "sender waited for a CPU 10.0 %" in warning
    f.sender_wait_pct = 5.0
    check, warning = udpmtu_verdict.judge(f, "q")
    assert warning is None and check.cause is None and check.verdict.startswith("off by -")
    assert "idle 10.0 %" in check.detail
    f.host_busy_pct = 99.0  # a saturated host is reason enough
    check, warning = udpmtu_verdict.judge(f, "q")
    assert check.cause == "short of CPU" and "busy 99 %" in warning
    f.arrived_bps = 1.02 * C  # but not for too much arriving
    check, warning = udpmtu_verdict.judge(f, "q")
    assert warning is None and check.verdict == "off by +2.00 %"


def test_a_saturated_emulator_thread_is_named_with_its_packet_rate():
    f = figures(recv(0.9 * C, emulator=(0.97, 0.0)), log_rows(C))
    check, warning = udpmtu_verdict.judge(f, "q")
    assert check.cause == "short of CPU"
    assert "thread ran 97 % of a core" in warning and "of the 82,563 packets/s" in warning
    assert "between the emulator's departures and the receiver's interface" in warning
    f = figures(recv(0.9 * C, emulator=(0.5, 0.08)), log_rows(C))  # runnable, no CPU
    assert "waited for one 8.0 %" in udpmtu_verdict.judge(f, "q")[1]


def test_a_log_without_rows_is_said():
    f = figures(recv(C), [])
    assert f.intervals == 0 and f.departed_bps is None
    assert "log holds no rows" in udpmtu_verdict.judge(f, "q")[0].detail
    assert figures(recv(C)).intervals is None  # no emulator: nothing to say


def test_emulator_rows_give_the_offered_load_and_refusals():
    rows, t = [], 0.0
    while t <= 8.0:
        sent = max(0.0, t - 0.5) * 1.2 * C / 8
        rows.append(
            [
                T0 + round(t * 1e9),
                round(sent),
                round(sent / FRAME),
                round(sent / 1.2),
                round(t * 10),
            ]
        )
        t += 0.05
    em = Series(
        {"specs": ["a0:rx_bytes", "a0:rx_packets", "b0:tx_bytes", "b0:tx_dropped"], "rows": rows}
    )
    f = figures(recv(C), log_rows(C), em)
    assert abs(f.offered_bps / (1.2 * C) - 1) < 1e-3
    assert abs(f.offered_pps - 1.2 * C / (FRAME * 8)) < 60
    assert abs(f.released_bps / C - 1) < 1e-3
    assert 45 <= f.refused <= 55  # 10 per second over a 5 s window


def test_counters_sampler_rows():
    tid = threading.get_native_id()
    res = counters.sample(
        0.12, ["lo:rx_bytes", "cpu", f"sched:{os.getpid()}:{tid}", f"sched:{os.getpid()}"]
    )
    rows = res["rows"]
    # a first row and one at or after the end at least (how many between depends on how
    # soon a sleeping sampler is woken: a loaded machine stretches its period)
    assert len(rows) >= 2 and all(len(r) == 1 + 1 + 2 + 2 + 2 for r in rows)
    assert all(b[0] > a[0] for a, b in zip(rows, rows[1:]))
    assert rows[-1][0] - rows[0][0] >= 120_000_000
    assert rows[-1][4] > rows[0][4]  # this thread ran meanwhile (ns)
    assert rows[-1][6] >= rows[-1][4]  # the process has run at least as long as this thread


def test_verdict_with_a_cause():
    c = Check("q", 1000.0, 979.7, "Mbit/s", 1.0, ok=False, error_pct=-2.03, cause="short of CPU")
    assert c.verdict == "short of CPU (-2.03 %)" and c.to_json()["cause"] == "short of CPU"
    assert Check("q", 1.0, 1.0, "", 1.0, ok=True, cause="x").verdict == "ok"
