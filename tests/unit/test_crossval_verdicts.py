"""`itb study crossval`'s verdicts, by hand: a relative bound (T ±5 %), T_mean's that
also wants overlapping intervals, Jain's absolute one, CoV's ratio, a first loss shown
and not judged, and a ranking that emulation cannot decide."""

from __future__ import annotations

from itb.study.crossval.analysis import _compare, _rankings
from itb.study.crossval.results import CellResult, Measure


def m(mean, ci=None, n=10):
    return Measure(mean=mean, ci95=ci, n=n, values=[mean] * n)


def test_single_t_within_5_percent_agrees_and_beyond_it_differs_with_a_cause():
    ok = _compare("single", "reno", "t_single_s", m(10.0, 0.1), m(10.4, 0.1))  # +4 %
    assert ok.within and abs(ok.difference - 0.04) < 1e-12 and ok.cause is None
    bad = _compare("single", "reno", "t_single_s", m(10.0, 0.1), m(10.6, 0.1))  # +6 %
    assert bad.within is False and "slow start" in bad.cause


def test_t_mean_needs_its_intervals_to_overlap_as_well():
    # +5 % is within ±10 %, but 10 ± 0.1 and 10.5 ± 0.1 do not overlap (0.5 > 0.2)
    c = _compare("multi-2", "cubic", "t_mean_s", m(10.0, 0.1), m(10.5, 0.1))
    assert c.overlap is False and c.within is False
    c = _compare("multi-2", "cubic", "t_mean_s", m(10.0, 0.3), m(10.5, 0.3))
    assert c.overlap and c.within


def test_jain_is_absolute_and_the_cov_a_ratio():
    assert _compare("multi-2", "reno", "jain", m(0.95), m(0.99)).within  # +0.04
    assert not _compare("multi-2", "reno", "jain", m(0.90), m(0.96)).within  # +0.06
    c = _compare("multi-2", "reno", "cov", m(0.10), m(0.04))  # × 0.4: below 0.5
    assert abs(c.difference - 0.4) < 1e-12 and c.within is False


def test_the_first_loss_is_shown_not_judged():
    c = _compare("single", "reno", "first_loss_s", m(0.30), m(0.36))
    assert c.bound == "shown" and c.within is None and abs(c.difference - 0.2) < 1e-12


def cell(scen, cc, backend, mean, ci):
    key = "t_mean_s"
    return CellResult(name=f"{scen}-{cc}-{backend[:3]}", scenario=scen, cc=cc, backend=backend,
                      repetitions=10, failed=0, measures={key: m(mean, ci)})  # fmt: skip


def test_a_ranking_within_emulations_noise_is_not_decided():
    cells = [
        cell("multi-2", "reno", "emulated", 10.0, 0.5), cell("multi-2", "cubic", "emulated", 10.6, 0.5),
        cell("multi-2", "reno", "simulated", 11.0, 0.1), cell("multi-2", "cubic", "simulated", 10.0, 0.1),
    ]  # fmt: skip
    (r,) = _rankings(cells)
    assert r.emulated == ["reno", "cubic"] and r.simulated == ["cubic", "reno"]
    assert not r.same and not r.decided  # 0.6 apart, intervals of 0.5 each: overlap


def test_a_model_is_left_out_of_the_ranking_of_linux_algorithms():
    cells = [
        cell("multi-2", "reno", "emulated", 10.0, 0.1), cell("multi-2", "cubic", "emulated", 12.0, 0.1),
        cell("multi-2", "reno", "simulated", 10.2, 0.1), cell("multi-2", "cubic", "simulated", 12.1, 0.1),
        cell("multi-2", "ns3:TcpCubic", "simulated", 9.0, 0.1),
    ]  # fmt: skip
    (r,) = _rankings(cells)
    assert r.simulated == ["reno", "cubic"] and r.same and r.decided


def test_models_auto_picks_each_algorithms_first_model_and_none_picks_none():
    from itb.study.crossval.args import CrossvalArgs

    a = CrossvalArgs(ccs="reno,cubic", capacity="100Mbit")
    assert a.models == ("ns3:TcpLinuxReno", "ns3:TcpCubic")
    assert CrossvalArgs(ccs="reno", capacity="100Mbit", models="none").models == ()


def test_a_model_of_an_algorithm_not_compared_is_refused_naming_the_option():
    import pytest

    from itb.errors import ScenarioError
    from itb.study.crossval.args import CrossvalArgs

    with pytest.raises(ScenarioError, match="ns3:TcpCubic models cubic") as e:
        CrossvalArgs(ccs="reno", capacity="100Mbit", models="ns3:TcpCubic")
    assert "--models" in str(e.value)
    with pytest.raises(ScenarioError, match="unknown ns-3 model 'ns3:TcpFoo'"):
        CrossvalArgs(ccs="reno", capacity="100Mbit", models="ns3:TcpFoo")


def test_the_plan_runs_a_model_in_simulation_only(tmp_path):
    from itb.study.crossval.args import CrossvalArgs
    from itb.study.crossval.plan import sweep_of

    a = CrossvalArgs(ccs="cubic", capacity="100Mbit", repeat=2)
    names = [c.name for c in sweep_of(a, tmp_path).cells]
    # steady, single, multi-0.8, multi-2; each: cubic emulated and simulated, TcpCubic simulated
    assert len(names) == 4 * 3
    assert "single-ns3-TcpCubic-sim" in names and "single-ns3-TcpCubic-emu" not in names


def test_a_model_is_compared_with_the_emulated_algorithm_it_models():
    from itb.study.crossval.analysis import comparisons

    cells = [cell("multi-2", "cubic", "emulated", 10.0, 0.5),
             cell("multi-2", "cubic", "simulated", 10.2, 0.5),
             cell("multi-2", "ns3:TcpCubic", "simulated", 11.5, 0.5)]  # fmt: skip
    got = {c.cc: c for c in comparisons(cells)}
    assert set(got) == {"cubic", "ns3:TcpCubic"}
    assert abs(got["ns3:TcpCubic"].difference - 0.15) < 1e-12  # 11.5 / 10 − 1
    assert got["ns3:TcpCubic"].within is False and got["cubic"].within


def test_a_simulation_without_spread_is_named_as_the_cause_of_its_disagreement():
    from itb.study.crossval.analysis import comparisons

    def multi(backend, ts, covs):
        ms = {
            "t_mean_s": Measure(mean=sum(ts) / len(ts), ci95=0.01, n=len(ts), values=ts),
            "cov": Measure(mean=sum(covs) / len(covs), ci95=0.001, n=len(covs), values=covs),
        }
        return CellResult(name=f"multi-0.8-cubic-{backend[:3]}", scenario="multi-0.8", cc="cubic",
                          backend=backend, repetitions=len(ts), failed=0, measures=ms,
                          load=0.8)  # fmt: skip

    emu = multi("emulated", [3.29, 3.31, 3.27], [0.004, 0.006, 0.002])
    # 3.2332 and 3.2333 s: 0.003 % apart; every CoV below 10⁻⁴
    sim = multi("simulated", [3.2332, 3.2333, 3.2332], [2e-6, 3e-6, 1e-6])
    got = {c.measure: c for c in comparisons([emu, sim])}
    # CoV ratio 2e-6 / 0.004 = 0.0005: outside [0.5, 2], and the cause says why
    assert got["cov"].within is False and got["cov"].cause.startswith("the simulated completion")
    assert got["t_mean_s"].within is False and "interval is empty" in got["t_mean_s"].cause
    # C_g 0.8: each source is held by its own access link, which the cause names
    assert "token bucket" in got["t_mean_s"].cause
    # a simulation with a spread of 0.03 % keeps the plain cause
    sim = multi("simulated", [3.2332, 3.2342, 3.2332], [2e-6, 3e-6, 1e-6])
    got = {c.measure: c for c in comparisons([emu, sim])}
    assert got["cov"].cause.startswith("the spread's sources differ")


def test_a_repetition_the_hypervisor_took_5_percent_of_is_left_out(tmp_path):
    import json

    from itb.study.crossval.analysis import _disturbed

    # 4.9 % and an unmeasured one are kept; 5 % and 31 % are not
    for r, steal in ((1, 0.049), (2, 0.05), (3, None), (4, 0.31)):
        (tmp_path / f"rep-{r:03d}").mkdir()
        rec = {"repetition": r, "status": "ok", "cpu_steal": steal}
        (tmp_path / f"rep-{r:03d}" / "result.json").write_text(json.dumps(rec))
    assert _disturbed(tmp_path, [1, 2, 3, 4]) == [2, 4]
