"""The profile-pursuit studies: the transition cost on synthetic 1 ms logs whose answer
is known, the margin a lateness series needs, and the scenarios each study generates
(valid, what they ask for and predict)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tomli_w

from itb.analysis.profile_model import Line, Model, PerRtt
from itb.analysis.pursuit import Burst, burst_of, margin_needed, spread
from itb.errors import ScenarioError
from itb.scenario.scenario import load_scenario
from itb.study.profile_margin.args import MarginArgs
from itb.study.profile_margin.plan import plan_point
from itb.study.profile_margin.plan import sweep_of as margin_sweep
from itb.study.profile_pair.args import PairArgs
from itb.study.profile_pair.plan import plan_flow
from itb.study.profile_pair.plan import sweep_of as pair_sweep
from itb.study.profile_transition import cost as transition
from itb.study.profile_transition.args import TransitionArgs
from itb.study.profile_transition.plan import profile_of
from itb.study.profile_transition.plan import sweep_of as transition_sweep
from itb.study.pursuit import Mechanism, file_digest, parse_mechanism


def log(levels: list[tuple[float, float]], t0_ns: int, until_s: float) -> pd.DataFrame:
    """A 1 ms bottleneck table: wire rate levels[k][1] from levels[k][0] s on (intervals
    starting at t, each row stamped with its interval's end, t + 1 ms)."""
    t = np.arange(0, int(until_s * 1000)) / 1000
    rate = np.zeros_like(t)
    for at, r in levels:
        rate[t >= at - 1e-9] = r
    return pd.DataFrame(
        {
            "t_ns": t0_ns + np.round((t + 0.001) * 1e9).astype(np.int64),
            "interval_s": 0.001,
            "bytes": rate * 0.001 / 8,
            "drops_queue": 0,
        }
    )


def test_a_sender_that_jumps_at_once_costs_nothing():
    rows = log([(0, 10e6), (2.0, 600e6)], 0, 6)
    assert transition.cost(rows, 2e9, 600e6, 3.0) == pytest.approx(0.0, abs=1e-9)
    assert transition.settled(rows, 2e9, 600e6, 3.0) == pytest.approx(0.0)


def test_a_lag_costs_its_length_and_a_ramp_half_of_it():
    # 50 ms at the low rate after the date, then the level: the deficit is 50 ms of it
    # less what the low rate carried meanwhile
    rows = log([(0, 10e6), (2.05, 600e6)], 0, 6)
    assert transition.cost(rows, 2e9, 600e6, 3.0) == pytest.approx(0.05 * (1 - 10 / 600), rel=1e-6)
    # a linear ramp over 0.4 s costs 0.2 s
    t = np.arange(0, 6000) / 1000
    rate = np.where(t < 2, 0.0, np.minimum(1.0, (t - 2) / 0.4)) * 400e6
    ramp = pd.DataFrame(
        {
            "t_ns": np.round((t + 0.001) * 1e9).astype(np.int64),
            "interval_s": 0.001,
            "bytes": rate * 0.001 / 8,
        }
    )
    assert transition.cost(ramp, 2e9, 400e6, 3.0) == pytest.approx(0.2, abs=0.002)
    assert transition.settled(ramp, 2e9, 400e6, 3.0) == pytest.approx(
        0.4 * (1 - 0.1**0.5), abs=0.002
    )
    # a sender that bursts its window at once, then waits an RTT (slow start): settled
    # only once the bursts add up to the level, not at the first full 10 ms
    # (bursts at 1 Gbit/s of 10, 20, 40 ms per 100 ms RTT: 100, 200, 400 Mbit/s on average)
    t = np.arange(0, 6000) / 1000
    k = np.floor((t - 2) / 0.1 + 1e-9)
    burst = np.where((t >= 2) & ((t - 2 - 0.1 * k) < 0.01 * 2 ** np.minimum(k, 2) - 1e-9), 1e9, 0.0)
    burst[t >= 2.5] = 400e6
    bursty = pd.DataFrame(
        {
            "t_ns": np.round((t + 0.001) * 1e9).astype(np.int64),
            "interval_s": 0.001,
            "bytes": burst * 0.001 / 8,
        }
    )
    assert transition.settled(bursty, 2e9, 400e6, 3.0) >= 0.1


def test_a_sender_that_catches_up_keeps_the_cost_of_its_lag():
    # 0.3 s late, then 20 % above the level until the deficit is made up, then the level
    rows = log([(0, 0), (2.3, 720e6), (3.8, 600e6)], 0, 6)
    assert transition.cost(rows, 2e9, 600e6, 3.0) == pytest.approx(0.3, abs=1e-6)
    assert transition.settled(rows, 2e9, 600e6, 3.0) == pytest.approx(0.27, abs=0.002)
    assert transition.level(rows, 4e9, 5e9) == pytest.approx(600e6)
    with pytest.raises(ValueError):
        transition.cost(rows, 2e9, 0.0, 1.0)


def test_the_margin_needed_is_where_every_larger_margin_stays_below():
    s = {
        0.0: spread([3.0, 2.5]),
        0.025: spread([0.2, 0.3]),
        0.05: spread([0.6, 0.61]),
        0.075: spread([0.1, 0.12]),
        0.1: spread([0.05, 0.06]),
    }
    pts = list(s.items())
    assert margin_needed(pts, 1.0) == 0.025
    assert margin_needed(pts, 0.5) == 0.075
    assert margin_needed(pts, 0.01) is None
    # one failure at a margin: not kept there
    pts[-1] = (0.1, spread([0.05], failed=1))
    assert margin_needed(pts, 1.0) is None


def test_a_spread_of_one_value_has_no_interval():
    one = spread([0.4])
    assert one.mean == 0.4 and one.ci95 is None and one.upper == 0.4
    many = spread([1.0, 2.0, 3.0, None, float("nan")], failed=2)
    assert many.n == 3 and many.n_failed == 2 and many.ci95 == pytest.approx(2.484, abs=0.001)


def test_the_burst_of_a_sender():
    rows = log([(0, 100e6), (1.0, 300e6), (1.001, 100e6)], 0, 2)
    b = burst_of(rows, 0, 2e9)
    assert b.max_1ms_bps == pytest.approx(300e6) and b.mean_bps == pytest.approx(100.1e6)
    assert b.overshoot == pytest.approx(300 / 100.1)
    assert Burst(mean_bps=None, max_1ms_bps=None, drops=0).overshoot is None


def model() -> Model:
    """A model close to the calibrated nocc one: goodput = X, throughput = 1.0456·X."""
    line = lambda a, b: Line(a=a, b=b, r=None, n=1, x_lo=0.0, x_hi=0.0)  # noqa: E731
    per = [
        PerRtt(
            rtt_ms=r,
            goodput=Line(a=1.0, b=0.0, r=1.0, n=9, x_lo=5e7, x_hi=9e8),
            throughput=Line(a=1.0456, b=0.0, r=1.0, n=9, x_lo=5e7, x_hi=9e8),
        )
        for r in (0.0, 100.0)
    ]
    return Model(
        mechanism="nocc-pacing",
        linear_max_bps=9e8,
        per_rtt=per,
        a_g=line(0.0, 1.0),
        b_g=line(0.0, 0.0),
        a_t=line(0.0, 1.0456),
        b_t=line(0.0, 0.0),
    )


def test_a_margin_point_asks_the_model_for_its_target():
    p = plan_point(model(), 1_000_000_000, 0.025, 20.0, 60.0)
    assert p.name == "rtt20ms-m2.5" and p.target_bps == pytest.approx(975e6)
    assert p.input_bps == round(975e6 / 1.0456)
    assert p.predicted_s == pytest.approx(60.0, abs=1e-3)
    with pytest.raises(ScenarioError):
        plan_point(model(), 1_000_000_000, 1.2, 20.0, 60.0)


def test_the_pair_profiles_are_complementary():
    a = plan_flow(model(), "A", 1_000_000_000, 0.1, 12.0, 60.0)
    b = plan_flow(model(), "B", 1_000_000_000, 0.1, 12.0, 60.0)
    sums = [(sa[1] + sb[1]) * 1.0456 for sa, sb in zip(a.input_steps, b.input_steps)]
    assert sums[:2] == [pytest.approx(900e6, rel=1e-6)] * 2
    assert sums[2] == pytest.approx(900e6, rel=1e-6)  # the common last step, half each
    assert [s[0] for s in a.input_steps] == [0, 20_000_000, 40_000_000]
    assert a.predicted_s == pytest.approx(60.0, abs=1e-3)
    assert b.volume == a.volume


def test_each_transition_is_a_transfer_of_its_own():
    a = TransitionArgs(
        mechanisms=(Mechanism("nocc"),),
        rtts_ms=(10.0,),
        low_bps=10_000_000,
        heights_bps=(100_000_000, 600_000_000),
        hold_s=4.0,
        low_hold_s=3.0,
        repeat=1,
        capacity=1_000_000_000,
        open_window=True,
        seed=1,
    )
    steps, volume = profile_of(a, 600_000_000)
    assert steps == ((0, 10_000_000), (3_000_000, 600_000_000))
    assert volume == int((3 * 10e6 + 4 * 600e6) * 1.1 / 8)
    with pytest.raises(ScenarioError):
        profile_of(a, 5_000_000)  # below the low rate


def test_mechanisms_by_name():
    assert parse_mechanism("udt", "--m").transfer_fields() == {"protocol": "udt"}
    assert parse_mechanism("reno-application", "--m").transfer_fields() == {
        "cc": "reno",
        "enforce": "application",
    }
    assert parse_mechanism("cubic", "--m").name == "cubic-pacing"
    with pytest.raises(ScenarioError):
        parse_mechanism("tcp-fast", "--m")


def valid(sweep, tmp_path: Path) -> list:
    """Every cell's scenario loads (what would run is what was validated)."""
    out = []
    for c in sweep.cells:
        f = tmp_path / f"{c.name}.toml"
        f.write_text(tomli_w.dumps(c.doc))
        out.append(load_scenario(f))
    return out


def test_every_study_generates_valid_scenarios(tmp_path):
    mpath = tmp_path / "model.json"
    model().save(mpath)
    (tmp_path / "models").mkdir()
    for name in ("nocc-pacing", "udt"):
        model().save(tmp_path / "models" / f"profile-model-{name}.json")
    nocc, udt = Mechanism("nocc"), Mechanism("udt")
    m = MarginArgs(
        mechanism=nocc,
        rtts_ms=(20.0,),
        margins=(0.0, 0.05),
        seconds=60.0,
        repeat=2,
        capacity=1_000_000_000,
        open_window=True,
        seed=1,
        model_file=mpath,
    )
    (s0, s5) = valid(margin_sweep(m, model(), tmp_path / "m"), tmp_path)
    assert s0.topology.open_receive_window and len(s0.experiment.events) == 1
    assert s5.experiment.events[0].profile == ((0, round(950e6 / 1.0456)),)
    p = PairArgs(
        combos=((nocc, udt),),
        margins=(0.1,),
        rtt_ms=12.0,
        seconds=30.0,
        repeat=1,
        capacity=1_000_000_000,
        open_window=False,
        seed=1,
        models_dir=tmp_path / "models",
    )
    (sp,) = valid(pair_sweep(p, {"nocc-pacing": model(), "udt": model()}, tmp_path / "p"), tmp_path)
    small = p.model_copy(update={"buffer": "64pkt"})
    (ss,) = valid(
        pair_sweep(small, {"nocc-pacing": model(), "udt": model()}, tmp_path / "q"), tmp_path
    )
    (rl,) = [lk for lk in ss.topology.links if lk.name == "rl-rr"]
    assert rl.forward.queue_packets == 64 and "buffer" in small.key() and "buffer" not in p.key()
    a_ev, b_ev = sorted(sp.experiment.events, key=lambda e: e.id)
    assert (a_ev.cc, b_ev.cc, b_ev.protocol) == ("nocc", "udt", "udt")
    assert a_ev.at_us == b_ev.at_us == 0 and not sp.topology.open_receive_window
    t = TransitionArgs(
        mechanisms=(nocc, udt, Mechanism("reno", "application")),
        rtts_ms=(10.0, 100.0),
        low_bps=10_000_000,
        heights_bps=(100_000_000, 800_000_000),
        hold_s=4.0,
        low_hold_s=3.0,
        repeat=1,
        capacity=1_000_000_000,
        open_window=True,
        seed=1,
    )
    cells = valid(transition_sweep(t, tmp_path / "t"), tmp_path)
    assert len(cells) == 6 and {c.experiment.events[0].enforce for c in cells} == {
        "pacing",
        "application",
    }
    h1, h2 = cells[0].experiment.events
    assert (h1.id, h2.id) == ("h1", "h2") and h2.at_us > h1.at_us + 7_000_000


def test_stage0_cells_are_valid_and_pull_from_l1(tmp_path):
    from itb.study.profile_stage0.args import Stage0Args
    from itb.study.profile_stage0.plan import sweep_of as stage0_sweep

    a = Stage0Args(
        parts=("cpu", "files", "streams"),
        mechanisms=(Mechanism("nocc"), Mechanism("udt")),
        inputs_bps=(100_000_000, 500_000_000),
        rtts_ms=(0.0, 100.0),
        seconds=5.0,
        volume=100_000_000,
        streams=(1, 5),
        stream_ccs=("reno", "nocc"),
        rtt_ms=20.0,
        repeat=1,
        capacity=1_000_000_000,
        open_window=True,
        seed=1,
    )
    sweep = stage0_sweep(a, tmp_path / "s0")
    names = [c.name for c in sweep.cells]
    assert names[:4] == [
        "stage0-cpu-nocc-pacing-rtt0",
        "stage0-cpu-nocc-pacing-rtt100",
        "stage0-cpu-udt-rtt0",
        "stage0-cpu-udt-rtt100",
    ]
    scs = dict(zip(names, valid(sweep, tmp_path)))
    d2d = {e.id: e for e in scs["stage0-files-d2d"].experiment.events}
    src = str((tmp_path / "s0" / "files" / "source.bin").resolve())
    assert d2d["evict"].argv == ("dd", f"if={src}", "iflag=nocache", "count=0", "status=none")
    assert d2d["server"].host == "l1" and d2d["server"].cc == "reno" and not d2d["server"].wait
    assert d2d["client"].argv[-2:] == (
        f"ftp://198.18.1.1:2811{src}",
        f"file://{(tmp_path / 's0' / 'files' / 'sink.bin').resolve()}",
    )
    m2m = {e.id: e for e in scs["stage0-files-m2m"].experiment.events}
    assert "evict" not in m2m and "-len" in m2m["client"].argv
    p5 = {e.id: e for e in scs["stage0-streams-nocc-p5"].experiment.events}
    assert p5["server"].profile == ((0, 900_000_000),) and p5["client"].argv[2:4] == ("-p", "5")
    assert scs["stage0-streams-udt"].experiment.events[0].protocol == "udt"
    with pytest.raises(ScenarioError):
        stage0_sweep(a.model_copy(update={"parts": ("disk",)}), tmp_path / "x")


@pytest.mark.parametrize(
    "args, words",
    [
        (["margin", "--mechanism", "tcp-fast"], "give udt, or a congestion control"),
        (["margin", "--margins", "5:1:1", "--capacity", "1Gbit"], "--margins"),
        (["margin", "--margins", "150", "--capacity", "1Gbit"], "percents of C in [0, 100)"),
        (["pair", "--pairs", "nocc-pacing", "--capacity", "1Gbit"], "give two mechanisms, A+B"),
        (["transition", "--heights", "5Mbit", "--capacity", "1Gbit"], "not between the low rate"),
        (["stage0", "--parts", "disk", "--capacity", "1Gbit"], "give some of cpu, files, streams"),
        (["stage0", "--stream-cc", "udt", "--capacity", "1Gbit"], "give TCP congestion controls"),
        (["stage0", "--inputs", "2Gbit", "--capacity", "1Gbit"], "more than C"),
        (["stage0", "--streams", "1,x", "--capacity", "1Gbit"], "--streams"),
        (["stage0", "--files-rtt", "10ms,20ms", "--capacity", "1Gbit"], "give one RTT"),
        (["margin", "--margins", "1,1.0", "--capacity", "1Gbit"], "1 % is given twice"),
        (["transition", "--rtt", "20ms,0.02s", "--capacity", "1Gbit"], "20 ms is given twice"),
        (["transition", "--buffer", "64", "--capacity", "1Gbit"], "has no unit"),
    ],
)
def test_bad_study_options_are_refused_before_anything_runs(tmp_path, monkeypatch, args, words):
    from typer.testing import CliRunner

    import itb.cli  # noqa: F401  (registers the commands)
    from itb.cli.common import app

    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["study", "profile", *args, "--out", str(tmp_path / "s")])
    # (the app raises; `itb`'s main turns a ScenarioError into exit code 2)
    assert isinstance(res.exception, ScenarioError) and res.exception.exit_code == 2, res.output
    assert words in str(res.exception)
    assert not (tmp_path / "s").exists()


def test_margins_from_to_step_never_pass_to():
    from itb.study.options import margins

    assert margins("0:10:6", "--margins") == (0.0, 0.06)
    assert (
        margins("0:10:0.5", "--margins")[-1] == 0.1 and len(margins("0:10:0.5", "--margins")) == 21
    )
    assert margins("2.5,5", "--margins") == (0.025, 0.05)


def test_a_margin_study_needs_its_model(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import itb.cli  # noqa: F401
    from itb.cli.common import app

    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(
        app,
        [
            "study",
            "profile",
            "margin",
            "--mechanism",
            "udt",
            "--capacity",
            "1Gbit",
            "--out",
            str(tmp_path / "s"),
        ],
    )
    assert isinstance(res.exception, ScenarioError) and res.exception.exit_code == 2
    assert "run `itb profile calibrate --cc udt` first" in str(res.exception)
    assert not (tmp_path / "s").exists()


def test_a_model_that_asks_more_than_c_is_refused_and_extrapolation_is_flagged():
    m = model()
    with pytest.raises(ScenarioError, match="not within 1 kbit/s … C"):
        plan_point(
            m.model_copy(update={"a_t": Line(a=0.0, b=0.9, r=None, n=1, x_lo=0, x_hi=0)}),
            1_000_000_000,
            0.0,
            20.0,
            60.0,
        )
    assert plan_point(m, 1_000_000_000, 0.0, 20.0, 60.0).extrapolated  # 956 > 900 fitted
    assert not plan_point(m, 1_000_000_000, 0.1, 20.0, 60.0).extrapolated


def test_a_sweep_with_an_invalid_cell_writes_nothing(tmp_path):
    from itb.sweep.index import IndexCell, SweepIndex
    from itb.sweep.sweep import Sweep, SweepCell

    good = {
        "testbed": {"name": "t"},
        "dumbbell": {"pairs": 1},
        "transfer": [{"src": "l1", "dst": "r1", "volume": "1MB"}],
    }
    bad = {**good, "transfer": [{"src": "l1", "dst": "r9", "volume": "1MB"}]}
    cells = [SweepCell(IndexCell(name="a"), good), SweepCell(IndexCell(name="b"), bad)]
    sweep = Sweep(tmp_path / "s", "profile-x", SweepIndex[IndexCell], {"k": 1}, cells, 1, 1)
    with pytest.raises(ScenarioError, match="profile-x cell b") as e:
        sweep.open()
    assert e.value.field == "transfer[0].dst"
    assert not (tmp_path / "s").exists()


def test_the_profile_studies_keys_are_the_ones_itb_wrote_before(tmp_path):
    """The same fields and values as before the arguments were models: a study begun then
    resumes in its directory (runs/<kind>-HASH); --buffer only when given, a model by the
    first 12 hex digits of its SHA-256."""
    mpath = tmp_path / "profile-model-nocc-pacing.json"
    model().save(mpath)
    digest = file_digest(mpath)
    assert len(digest) == 12
    m = MarginArgs(
        margins="5,10", rtts_ms="10ms", seconds=2.0, repeat=2, capacity="1Gbit", model_file=mpath
    )
    assert m.key() == {
        "mechanism": "nocc-pacing",
        "rtts_ms": [10.0],
        "margins": [0.05, 0.1],
        "seconds": 2.0,
        "repeat": 2,
        "capacity_bps": 1_000_000_000,
        "open_window": True,
        "seed": 1,
        "model": digest,
    }
    p = PairArgs(
        combos="nocc-pacing+nocc-pacing",
        margins="10",
        rtt_ms="10ms",
        seconds=3.0,
        repeat=1,
        capacity="1Gbit",
        models_dir=tmp_path,
        buffer="100pkt",
    )
    assert p.key() == {
        "combos": [["nocc-pacing", "nocc-pacing"]],
        "margins": [0.1],
        "rtt_ms": 10.0,
        "seconds": 3.0,
        "repeat": 1,
        "capacity_bps": 1_000_000_000,
        "open_window": True,
        "seed": 1,
        "models": {"nocc-pacing": digest},
        "buffer": "100pkt",
    }
    t = TransitionArgs(
        mechanisms="nocc-pacing,reno-application",
        rtts_ms="10ms",
        heights_bps="300Mbit,600Mbit",
        hold_s=1.0,
        low_hold_s=1.0,
        repeat=1,
        capacity="1Gbit",
    )
    assert t.key() == {
        "mechanisms": ["nocc-pacing", "reno-application"],
        "rtts_ms": [10.0],
        "low_bps": 10_000_000,
        "heights_bps": [300_000_000, 600_000_000],
        "hold_s": 1.0,
        "low_hold_s": 1.0,
        "repeat": 1,
        "capacity_bps": 1_000_000_000,
        "open_window": True,
        "seed": 1,
    }
    from itb.study.profile_stage0.args import Stage0Args

    s = Stage0Args(
        mechanisms="nocc-pacing",
        inputs_bps="200Mbit",
        rtts_ms="10ms",
        seconds=1.0,
        volume="10MB",
        streams="1,2",
        stream_ccs="reno,nocc",
        repeat=1,
        capacity="1Gbit",
    )
    assert s.key() == {
        "parts": ["cpu", "files", "streams"],
        "mechanisms": ["nocc-pacing"],
        "inputs_bps": [200_000_000],
        "rtts_ms": [10.0],
        "seconds": 1.0,
        "volume": 10_000_000,
        "streams": [1, 2],
        "stream_ccs": ["reno", "nocc"],
        "rtt_ms": 20.0,
        "repeat": 1,
        "capacity_bps": 1_000_000_000,
        "open_window": True,
        "seed": 1,
    }
