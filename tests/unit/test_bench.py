"""The benchmark's classes, scaling, application generators and table statistics."""

import json
import math

import pytest
import tomli_w

from itb.errors import ScenarioError
from itb.scenario.scenario import load_scenario
from itb.suite import apps, stats
from itb.suite.apps import parts, throughput, web
from itb.suite.classes import CLASSES, parse_classes
from itb.suite.scaling import MANY_SOURCES_MAX_BPS, make_scale
from itb.sweep.sweep import order


def test_classes_follow_the_spec_table():
    assert [c.name for c in CLASSES.values()] == list("ABCDEFGHIJKL")
    a, f, k = CLASSES["A"], CLASSES["F"], CLASSES["K"]
    assert (a.k, a.rtt_ms, a.c_g, a.r) == (1000, 20, 0.8, 0)
    assert (f.k, f.rtt_ms, f.c_g, f.r) == (10, 20, 2.0, 0.8)
    assert (k.k, k.rtt_ms, k.c_g, k.r) == (1000, 200, 1.0, 1.5)
    assert (a.forward_sources, f.forward_sources, f.reverse_sources) == (800, 20, 8)
    assert k.reverse_sources == 1500


@pytest.mark.parametrize(
    "text, names", [("A-L", "ABCDEFGHIJKL"), ("b,f", "BF"), ("A-C,K", "ABCK"), ("F,B,F-F", "BF")]
)
def test_parse_classes(text, names):
    assert "".join(c.name for c in parse_classes(text)) == names


@pytest.mark.parametrize("text", ["M", "C-A", "A,,B", ""])
def test_parse_classes_refuses(text):
    with pytest.raises(ScenarioError) as e:
        parse_classes(text)
    assert e.value.field == "--class"


def _cal(tmp_path, rate=1_000_000_000, ok=True):
    p = tmp_path / "cal.json"
    p.write_text(
        json.dumps(
            {
                "path": {"rate_bps": rate, "rtt_ms": 20},
                "checks": [{"quantity": "idle RTT", "ok": ok}],
            }
        )
    )
    return p


def test_auto_scale_from_calibration(tmp_path):
    s = make_scale(factor=None, capacity_bps=None, transfer_time_s=10, calibration=_cal(tmp_path))
    b, a = s.of(CLASSES["B"]), s.of(CLASSES["A"])
    assert (b.factor, b.capacity_bps, b.access_bps) == (10, 1_000_000_000, 100_000_000)
    # K = 1000: capped, and the factor says so.
    assert a.capacity_bps == MANY_SOURCES_MAX_BPS and a.factor == 5000
    assert a.access_bps == 200_000
    assert s.volume_factor == 24  # 240 s / 10 s
    assert b.bu_volume == 30e9 / 10 / 24  # bytes: 125 MB = 10 s at 100 Mbit/s
    assert math.isclose(b.bu_volume * 8 / b.access_bps, 10)


def test_calibration_with_checks_off_is_used_and_said(tmp_path):
    s = make_scale(
        factor=None, capacity_bps=None, transfer_time_s=10, calibration=_cal(tmp_path, ok=False)
    )
    assert "checks off" in s.source and s.capacity_bps == 1_000_000_000


def test_scale_errors(tmp_path):
    with pytest.raises(ScenarioError, match="no calibration"):
        make_scale(
            factor=None,
            capacity_bps=None,
            transfer_time_s=10,
            calibration=tmp_path / "missing.json",
        )
    with pytest.raises(ScenarioError, match="not both"):
        make_scale(factor=10, capacity_bps=10**8, transfer_time_s=10)
    with pytest.raises(ScenarioError, match="at least 1"):
        make_scale(factor=0.5, capacity_bps=None, transfer_time_s=10)
    s = make_scale(factor=10, capacity_bps=None, transfer_time_s=10)
    with pytest.raises(ScenarioError, match="10 Mbit/s to 10 Gbit/s"):
        s.of(CLASSES["A"])  # 1000 Gbit/s ÷ 10


def test_bundles_keep_every_source():
    assert parts.bundles(8) == [1] * 8
    for m in (33, 800, 1000, 1500, 2000, 2001):
        b = parts.bundles(m)
        assert sum(b) == m and max(b) <= parts.MAX_STREAMS and max(b) - min(b) <= 1


def _generated(tmp_path, app, cls, variant=None, capacity=10**9, tt=10):
    s = make_scale(factor=None, capacity_bps=capacity, transfer_time_s=tt)
    cell = apps.Cell(app, CLASSES[cls], "reno", variant)
    g = apps.generate(cell, s.of(CLASSES[cls]), 1, 1.0, 2)
    path = tmp_path / f"{cell.name}.toml"
    path.write_bytes(tomli_w.dumps(g.doc).encode())
    return g, load_scenario(path)


@pytest.mark.parametrize("cls", list("ABCDEFGHIJKL"))
def test_bu_realises_every_source_paced_at_c_a(tmp_path, cls):
    g, sc = _generated(tmp_path, "BU", cls)
    c = CLASSES[cls]
    ev = sc.experiment.events
    fwd = [e for e in ev if e.direction == "forward"]
    rev = [e for e in ev if e.direction == "reverse"]
    assert sum(e.streams for e in fwd) == c.forward_sources
    assert sum(e.streams for e in rev) == c.reverse_sources
    ca = g.realisation["scale"]["access_bps"]
    assert all(e.rate_bps == pytest.approx(ca * e.streams, rel=1e-6) for e in fwd + rev)
    assert all(e.wait for e in fwd) and not any(e.wait for e in rev)
    assert all(e.volume == g.realisation["volume_bytes_per_source"] * e.streams for e in fwd)
    assert sc.experiment.repetitions == 2 and all(e.cc == "reno" for e in fwd)
    link = sc.topology.links[[lk.emulated for lk in sc.topology.links].index(True)]
    assert link.forward.rate_bps == g.realisation["scale"]["capacity_bps"]
    assert "virtual sources" in g.realisation["forward"] or c.forward_sources <= parts.MAX_SINGLE


def test_bu_start_span_capped_to_a_quarter_of_a_transfer(tmp_path):
    _, sc = _generated(tmp_path, "BU", "F", tt=10)  # 20 sources: 1 s would span 19 s
    starts = sorted(e.at_us for e in sc.experiment.events if e.direction == "forward")
    assert starts[-1] - starts[0] <= 2_500_000


@pytest.mark.parametrize("cls", ["B", "G", "K"])
def test_pa_is_one_measured_ping_pong_under_the_class_load(tmp_path, cls):
    g, sc = _generated(tmp_path, "PA", cls)
    ev = sc.experiment.events
    pp = [e for e in ev if e.kind == "pingpong"]
    assert len(pp) == 1 and pp[0].count == 200 and pp[0].direction == "forward"
    assert pp[0].size == 1_000_000  # the documents' messages, whatever the scale
    load = [e for e in ev if e.kind == "transfer" and e.direction == "background"]
    k = g.realisation["sources_k"]  # K = 1000 classes run with fewer, faster sources
    assert sum(e.streams for e in load) == round(CLASSES[cls].c_g * k) - 1
    assert not any(e.wait for e in ev if e.kind == "transfer")
    assert all(e.src != "l1" for e in ev if e.kind == "transfer")


def test_pa_messages_can_be_fewer_but_keep_their_size():
    cell = apps.Cell("PA", CLASSES["B"], "reno")
    cs = make_scale(factor=None, capacity_bps=10**9, transfer_time_s=10).of(CLASSES["B"])
    full, short = apps.generate(cell, cs, 1, 1.0), apps.generate(cell, cs, 1, 1.0, 1, 5)
    assert full.doc["pingpong"][0]["count"] == 200 and short.doc["pingpong"][0]["count"] == 5
    assert short.doc["pingpong"][0]["size"] == "1000000B"
    assert short.realisation["estimated_s"] == pytest.approx(full.realisation["estimated_s"] / 40)


def test_tu_default_variant_restores_linux_buffers(tmp_path):
    _, sc = _generated(tmp_path, "TU", "D", variant="default")
    cmds = [e for e in sc.experiment.events if e.kind == "command"]
    assert {c.host for c in cmds} == {"l1", "r1"}
    assert all(f"net.ipv4.tcp_rmem={throughput.UNTUNED_RMEM}" in c.argv for c in cmds)
    _, tuned = _generated(tmp_path, "TU", "D", variant="tuned")
    assert not [e for e in tuned.experiment.events if e.kind == "command"]


@pytest.mark.parametrize("app", ["WM", "PP"])
def test_web_apps_on_data_centre_classes(tmp_path, app):
    g, sc = _generated(tmp_path, app, "B")
    fwd = [e for e in sc.experiment.events if e.direction == "forward"]
    rev = [e for e in sc.experiment.events if e.direction == "reverse" and e.wait]
    ratio = sum(e.volume for e in fwd) / sum(e.volume for e in rev)
    target = web.WM_RATIO if app == "WM" else web.PP_RATIO
    assert 0.4 * target < ratio < 2.5 * target  # random draws around the target
    assert sc.topology.pair_delays  # per-pair RTTs drawn around the class RTT


def test_web_apps_refuse_internet_classes(tmp_path):
    with pytest.raises(ScenarioError, match="data-centre classes"):
        _generated(tmp_path, "WM", "A")


def test_mean_ci_against_hand_values():
    m, h = stats.mean_ci([10.0, 12.0, 14.0])
    assert m == 12.0
    assert h == pytest.approx(4.302653 * 2.0 / math.sqrt(3), rel=1e-5)  # t(0.975, 2)
    assert stats.mean_ci([5.0]) == (5.0, None)
    assert stats.mean_ci([]) == (None, None)


def _reps(ts):
    return [
        {
            "repetition": i + 1,
            "n": 4,
            "n_failed": 0,
            "t_mean": t,
            "t_min": t,
            "t_max": t,
            "sigma_t": 0.1,
            "cov": 0.01,
            "jain": 1.0,
            "efficiency": 0.9,
            "utilisation": 0.8,
        }
        for i, t in enumerate(ts)
    ]


def test_compare_holds_every_protocol_against_the_reference_over_the_table():
    k = lambda cc, cls="F": stats.CellKey("BU", None, cls, cc)  # noqa: E731
    cells = [
        (k("cubic"), _reps([10.0, 10.2, 9.9])),
        (k("reno"), _reps([14.0, 14.3, 13.8])),
        (k("bbr"), _reps([10.1, 9.7, 10.4])),
    ]
    verdicts = {(c.tested, c.reference): c for c in stats.compare(cells, "cubic")}
    assert set(verdicts) == {("reno", "cubic"), ("bbr", "cubic")}
    reno = verdicts[("reno", "cubic")]
    # two comparisons: each at 1 − 0.05/2 = 97.5 %, Welch's p times 2
    assert reno.verdict == "slower" and reno.p_adjusted == pytest.approx(2 * reno.p)
    assert (reno.family, reno.level_text) == (2, "97.5 %")
    assert reno.sentence().startswith("reno (14 s) slower than cubic (10 s): +39.9 %")
    assert (reno.app, reno.cls) == ("BU", "F")
    assert verdicts[("bbr", "cubic")].verdict == "inconclusive"
    # the reference is the one given, even when another is faster: reno's table
    by_reno = {c.tested: c for c in stats.compare(cells, "reno")}
    assert by_reno["cubic"].verdict == by_reno["bbr"].verdict == "faster"
    one = stats.compare([(k("cubic"), _reps([10.0])), (k("reno"), _reps([12.0]))], "cubic")
    assert one[0].verdict == "inconclusive" and one[0].p is None
    # failed transfers are said on either side; a reference with no repetition still lists
    # its comparisons (and they count in the table's m)
    bad = _reps([9.0, 9.1, 8.9])
    bad[0]["n_failed"] = 2
    cs = stats.compare(
        [(k("bbr"), bad), (k("cubic"), _reps([10.0, 10.1, 9.9])), (k("bbr", "B"), _reps([5.0]))]
        + [(k("cubic", "B"), [])],
        "cubic",
    )
    assert [(c.cls, c.tested, c.reference, c.family) for c in cs] == [
        ("F", "bbr", "cubic", 2),
        ("B", "bbr", "cubic", 2),
    ]
    assert cs[0].verdict == "faster" and cs[0].failed_tested == 2
    assert "2 failed transfer(s) of bbr not in its T" in cs[0].sentence()
    assert cs[1].verdict == "inconclusive" and cs[1].reason == "no completed repetition of cubic"


def test_the_reference_joins_the_benchmarks_key_only_when_not_the_first_protocol():
    from itb.suite.benchmark import BenchArgs, reference_of

    scale = make_scale(factor=10.0, capacity_bps=None, transfer_time_s=10)
    base = ("BU",), (CLASSES["F"],), ("cubic", "reno"), 3, 1, 1.0, scale
    default = BenchArgs(*base)
    assert "reference" not in default.key() and default.reference_cc == "cubic"
    assert BenchArgs(*base, reference="cubic").key() == default.key()  # the same directory
    other = BenchArgs(*base, reference="reno").key()
    assert other == default.key() | {"reference": "reno"}
    assert reference_of(other) == "reno" and reference_of(default.key()) == "cubic"
    with pytest.raises(ScenarioError, match="--reference"):
        BenchArgs(*base, reference="bbr")


def test_order_runs_every_cell_once_per_round_seeded():
    o = order(["a", "b", "c"], 2, 7)
    assert [r for _, r in o] == [1, 1, 1, 2, 2, 2]
    assert sorted(n for n, r in o if r == 1) == ["a", "b", "c"]
    assert o == order(["a", "b", "c"], 2, 7)


def test_pa_timeline_outlasts_a_ping_pong_under_reverse_congestion(tmp_path):
    # Measured on this testbed (PA-L, cubic, 1 Gbit/s): 186 round trips of 100 kB
    # took 179 s, 0.96 s each, at 200 ms RTT with the echo's direction at R = 1.5.
    _, sc = _generated(tmp_path, "PA", "L")
    assert sc.experiment.duration_us / 1e6 >= 3 * 200 * 0.96
    _, light = _generated(tmp_path, "PA", "B")  # unloaded 20 ms path: a short timeline
    assert light.experiment.duration_us < sc.experiment.duration_us / 5
