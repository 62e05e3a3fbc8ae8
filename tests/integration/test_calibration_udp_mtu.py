"""MTU-size UDP without GSO (UDT's traffic) through the default dumbbell: at 1.2 × the
rate, the receiver's interface gets the rate within ±1 %, or the check says the host is
short of CPU for it, with figures."""

from __future__ import annotations

from itb.backends import local
from itb.calibration import udpmtu, udpmtu_verdict
from itb.scenario import load_testbed
from itb.scenario.testbed.pathspec import path_spec


def test_mtu_udp_reaches_the_receiver_at_the_rate(isolated, monkeypatch):
    monkeypatch.setenv("ITB_PREFIX", "itbu")  # apart from other integration tests' "itbt"
    topo = load_testbed(None, {"pairs": 1, "rate": "1Gbit", "rtt": "20ms"})
    spec = path_spec(topo, "l1", "r1")
    state = local.up(topo)
    try:
        em = local.emulators_of(state)[0]
        src, dst = local.host(state, "l1"), local.host(state, "r1")
        f, res = udpmtu.run(
            src,
            dst,
            topo.address("r1"),
            "eth0",
            em,
            "ab",
            spec.rate_bps,
            spec.forward.delay_us,
            topo.mtu,
            4.0,
            5302,
        )
    finally:
        local.down()
    assert f is not None, "no stream at the receiver's interface"
    assert 3.8 <= f.window_s <= 4.05
    # rx_bytes counts whole frames from the Ethernet header: 1514 B per datagram
    assert abs(f.arrived_bps / 8 / f.arrived_pps - 1514) < 2
    assert None not in (
        f.emulator_cpu_pct,
        f.emulator_wait_pct,
        f.sender_cpu_pct,
        f.sender_wait_pct,
        f.host_busy_pct,
    )
    assert f.emulator_cpu_pct > 5 and f.sender_cpu_pct > 5  # the right threads were sampled
    assert f.offered_bps is not None and f.departed_bps is not None
    check, warning = udpmtu_verdict.judge(f, "q")
    if check.ok:
        assert abs(f.arrived_bps / 1e9 - 1) <= 0.01
        # the emulator's own account and its interface agree with the receiver
        assert abs(f.departed_bps / f.arrived_bps - 1) < 0.005
        assert abs(f.released_bps / f.arrived_bps - 1) < 0.005
    else:
        assert check.cause == "short of CPU", check.detail
        assert "short" in warning and "Mbit/s" in warning and "%" in warning
