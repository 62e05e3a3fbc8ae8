"""The profile model: lines per RTT, coefficients against RTT, and their inversions,
against data made from known coefficients and values worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from itb.analysis import profile_model as pm


def truth(rtt_ms: float) -> tuple[float, float, float, float]:
    """a_g, b_g, a_t, b_t of a made-up mechanism, each linear in RTT."""
    return (0.95 - 0.0002 * rtt_ms, -2e6 - 1e4 * rtt_ms, 1.0 - 0.0001 * rtt_ms, 5e5)


def samples(noise: float = 0.0, seed: int = 1) -> list[pm.Sample]:
    rng = np.random.default_rng(seed)
    out = []
    for rtt in (0.0, 10.0, 100.0):
        ag, bg, at, bt = truth(rtt)
        for x in np.arange(50e6, 1000e6 + 1, 50e6):
            sat = min(x, 900e6)  # saturates above 900 Mbit/s: not the linear part
            out.append(
                pm.Sample(
                    rtt_ms=rtt,
                    input_bps=x,
                    goodput_bps=ag * sat + bg + noise * rng.standard_normal(),
                    throughput_bps=at * sat + bt + noise * rng.standard_normal(),
                    throughput_max_bps=1.01 * (at * sat + bt),
                )
            )
    return out


def test_fit_recovers_the_coefficients_over_the_linear_part():
    m = pm.fit(samples(), "nocc+pacing", linear_max_bps=900e6)
    assert [p.rtt_ms for p in m.per_rtt] == [0.0, 10.0, 100.0]
    for p in m.per_rtt:
        ag, bg, at, bt = truth(p.rtt_ms)
        assert p.goodput.a == pytest.approx(ag) and p.goodput.b == pytest.approx(bg, abs=1)
        assert p.throughput.a == pytest.approx(at) and p.goodput.r == pytest.approx(1.0)
        assert p.goodput.n == 18 and p.goodput.x_hi == 900e6
    for rtt in (0.0, 12.0, 300.0):  # the coefficients are linear in RTT: exact anywhere
        assert m.coefficients(rtt) == pytest.approx(truth(rtt), rel=1e-9, abs=1e-3)
    # Saturated points left in bend the line: the fit over everything is worse.
    every = pm.fit(samples(), "x", linear_max_bps=2e9)
    assert every.per_rtt[0].goodput.a < 0.97 * m.per_rtt[0].goodput.a
    assert every.per_rtt[0].goodput.r < 0.998


def test_noisy_data_keep_a_high_correlation():
    m = pm.fit(samples(noise=5e6), "x", linear_max_bps=900e6)
    assert min(p.goodput.r for p in m.per_rtt) > 0.99


def test_inversions_by_hand():
    # One RTT: goodput = 0.9·X − 1e6, throughput = X + 2e6 at every input.
    s = [
        pm.Sample(
            rtt_ms=20,
            input_bps=x,
            goodput_bps=0.9 * x - 1e6,
            throughput_bps=x + 2e6,
            throughput_max_bps=x,
        )
        for x in (1e8, 2e8, 3e8)
    ]
    m = pm.fit(s, "x", linear_max_bps=1e9)
    assert m.a_g.r is None and m.a_g.n == 1  # one RTT: constants
    assert m.input_for_throughput(302e6, 20) == pytest.approx(300e6)
    assert m.goodput_for_throughput(302e6, 20) == pytest.approx(0.9 * 300e6 - 1e6)
    assert m.input_profile([(0, 102_000_000), (5_000_000, 202_000_000)], 20) == (
        (0, 100_000_000),
        (5_000_000, 200_000_000),
    )
    # 89 Mbit/s of goodput for 5 s (55.625 MB), then 179 Mbit/s: 100 MB end at
    # 5 + 44.375e6·8 / 179e6 = 6.98324 s.
    t = m.completion_s([(0, 102_000_000), (5_000_000, 202_000_000)], 100_000_000, 20)
    assert t == pytest.approx(5 + 44.375e6 * 8 / 179e6)


def test_a_line_through_two_points_claims_no_correlation():
    line = pm.fit_line([1, 2], [3, 5])
    assert (line.a, line.b, line.r) == (pytest.approx(2), pytest.approx(1), None)
    with pytest.raises(ValueError, match="two distinct"):
        pm.fit_line([1, 1], [2, 3])
    with pytest.raises(ValueError, match="no sample"):
        pm.fit(samples(), "x", linear_max_bps=1e6)


def test_the_model_file_round_trips(tmp_path):
    m = pm.fit(samples(), "nocc+pacing", linear_max_bps=900e6)
    m.save(tmp_path / "model.json")
    assert pm.Model.load(tmp_path / "model.json") == m


def test_predict_command_prints_the_input_profile_and_the_completion(tmp_path):
    from typer.testing import CliRunner

    import itb.cli  # noqa: F401  (registers the commands)
    from itb.cli.common import app

    s = [
        pm.Sample(
            rtt_ms=20,
            input_bps=x,
            goodput_bps=0.9 * x - 1e6,
            throughput_bps=x + 2e6,
            throughput_max_bps=x,
        )
        for x in (1e8, 2e8, 3e8)
    ]
    pm.fit(s, "nocc-pacing", linear_max_bps=1e9).save(tmp_path / "m.json")
    res = CliRunner().invoke(
        app,
        [
            "profile",
            "predict",
            "0:102Mbit,5:202Mbit",
            "--volume",
            "100MB",
            "--rtt",
            "20ms",
            "--model",
            str(tmp_path / "m.json"),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "100.00 Mbit/s" in res.output and "200.00 Mbit/s" in res.output  # inputs to ask
    assert 'profile = [[0, "100.000Mbit"], [5, "200.000Mbit"]]' in res.output
    assert f"{5 + 44.375e6 * 8 / 179e6:.3f} s" in res.output
    res = CliRunner().invoke(
        app,
        [
            "profile",
            "predict",
            "0:1Mbit",
            "--volume",
            "1MB",
            "--rtt",
            "20ms",
            "--model",
            str(tmp_path / "none.json"),
        ],
    )
    assert res.exit_code != 0
