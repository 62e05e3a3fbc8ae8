"""What scaling preserves: per-flow windows in segments (documents vs testbed, with the
warning under 20 segments), the window-preserving scaling mode, PA's 1 MB messages, and
the window table in the benchmark's summary and report."""

import pytest
import tomli_w

from itb.errors import ScenarioError
from itb.scenario.scenario import load_scenario
from itb.suite import apps, benchmark, windows
from itb.suite.apps import pingpong
from itb.suite.classes import CLASSES
from itb.suite.realisation import BenchRealisation
from itb.suite.scaling import MAX_RTT_MS, MIN_ROUND_TRIPS, make_scale

GBIT = 1_000_000_000


def _scale(mode="rate", capacity=GBIT, tt=240.0, factor=None):
    return make_scale(
        factor=factor, capacity_bps=None if factor else capacity, transfer_time_s=tt, mode=mode
    )


def test_segments_by_hand():
    # 1 Gbit/s × 20 ms = 2.5 MB = 1726.5 segments of 1448 B
    assert windows.segments(GBIT, 20) == pytest.approx(2_500_000 / 1448)
    assert windows.segments(200_000, 200) == pytest.approx(5000 / 1448)  # 3.45


def test_rate_scaling_shrinks_windows_by_the_factor():
    s = _scale()
    a = windows.of_source(CLASSES["A"], s.of(CLASSES["A"]))  # K = 1000: factor 5000
    assert a.documents == pytest.approx(1726.519, abs=1e-3) and a.documents_share is None
    assert a.testbed == pytest.approx(500 / 1448)  # 200 kbit/s × 20 ms = 500 B: 0.345
    assert a.testbed_rtt_ms == 20 and a.mode == "rate"
    assert a.warning.startswith("class A: 0.345 segments per flow") and "Reno" in a.warning
    c = windows.of_source(CLASSES["C"], s.of(CLASSES["C"]))  # 200 ms: 3.45 segments
    assert c.testbed == pytest.approx(3.453, abs=1e-3) and c.warning
    f = windows.of_source(CLASSES["F"], s.of(CLASSES["F"]))  # K = 10: factor 10, C_g = 2
    assert f.testbed == pytest.approx(250_000 / 1448)  # 100 Mbit/s × 20 ms: 172.7
    assert f.documents_share == pytest.approx(2_500_000 / 1448 / 2)  # C/M = C_a/2: 863.3
    assert f.testbed_share == pytest.approx(125_000 / 1448)  # 86.3
    assert f.smallest == f.testbed_share and f.warning is None
    # Reno's cycle, W/2 round trips: 431.6 × 20 ms = 8.63 s there, 43.2 × 20 ms = 0.86 s here
    assert f.documents_cycle_s == pytest.approx(2_500_000 / 1448 / 4 * 0.02)
    assert f.testbed_cycle_s == pytest.approx(125_000 / 1448 / 2 * 0.02)


def test_warning_uses_the_fair_share_where_congested():
    s = _scale(capacity=100_000_000)  # factor 100: C_a = 10 Mbit/s
    b = windows.of_source(CLASSES["B"], s.of(CLASSES["B"]))  # C_g 0.8: 17.3 segments
    f = windows.of_source(CLASSES["F"], s.of(CLASSES["F"]))  # C_g 2: 17.3 / 2 = 8.6
    assert b.testbed == pytest.approx(25_000 / 1448) and b.testbed_share is None
    assert b.warning and f.smallest == pytest.approx(12_500 / 1448) and f.warning
    j = windows.of_source(CLASSES["J"], s.of(CLASSES["J"]))  # C_g 1.0: no share below C_a
    assert j.testbed_share is None


def test_window_scaling_keeps_the_documents_windows():
    s = _scale("window")
    cs = s.of(CLASSES["F"])
    assert (cs.mode, cs.rtt_ms, cs.factor) == ("window", 200, 10)  # 20 ms × 10
    f = windows.of_source(CLASSES["F"], cs)
    assert f.testbed == pytest.approx(f.documents) and f.testbed_share == pytest.approx(
        863.26, abs=0.01
    )
    # volumes as in rate mode: one BU transfer still lasts the transfer time at C_a
    rate = _scale().of(CLASSES["F"])
    assert cs.bu_volume == rate.bu_volume and cs.bu_volume * 8 / cs.access_bps == pytest.approx(240)
    # the same window at 10 × the RTT: Reno's cycle lasts 10 × the documents' (86.3 s)
    assert f.testbed_cycle_s == pytest.approx(10 * f.documents_cycle_s)
    assert f.testbed_cycle_s == pytest.approx(86.33, abs=0.01)
    assert rate.mode == "rate" and rate.rtt_ms == 20


def test_window_scaling_refuses_what_the_emulator_cannot_take():
    with pytest.raises(ScenarioError) as e:
        _scale("window").of(CLASSES["A"])  # 20 ms × 5000 = 100 s
    assert e.value.field == "--scaling"
    assert "class A" in e.value.reason and "100 s" in e.value.reason
    assert f"{MAX_RTT_MS / 1000:g} s" in e.value.reason and "at most 100" in e.value.reason
    # 200 ms × 10 = 2 s: a 30 s transfer lasts 15 round trips, under MIN_ROUND_TRIPS
    with pytest.raises(ScenarioError, match=r"15 round trips.*--transfer-time 100 or more"):
        _scale("window", tt=30).of(CLASSES["D"])
    assert MIN_ROUND_TRIPS * 2 == 100
    assert _scale("window", tt=100).of(CLASSES["D"]).rtt_ms == 2000
    with pytest.raises(ScenarioError, match="unknown scaling 'bogus'"):
        _scale("bogus")


def _generate(tmp_path, app, cls, s, variant=None):
    cell = apps.Cell(app, CLASSES[cls], "cubic", variant)
    g = apps.generate(cell, s.of(CLASSES[cls]), 1, 1.0)
    path = tmp_path / f"{cell.name}.toml"
    path.write_bytes(tomli_w.dumps(g.doc).encode())
    return g, load_scenario(path)


@pytest.mark.parametrize("cls", ["D", "H", "L"])
def test_a_class_stretched_to_a_2_s_rtt_loads_as_a_scenario(tmp_path, cls):
    """D, H and L (200 ms × 10) were refused at load: 1 s one way was over the 500 ms an
    emulated link took then."""
    g, sc = _generate(tmp_path, "BU", cls, _scale("window", tt=100))
    [link] = [lk for lk in sc.topology.links if lk.emulated]
    assert (link.forward.delay_us, link.reverse.delay_us) == (1_000_000, 1_000_000)


@pytest.mark.parametrize("app, variant", [("BU", None), ("TU", "tuned"), ("PA", None)])
def test_window_scaling_stretches_the_emulated_rtt_and_records_it(tmp_path, app, variant):
    g, sc = _generate(tmp_path, app, "B", _scale("window"), variant)
    link = next(lk for lk in sc.topology.links if lk.emulated)
    assert link.forward.delay_us + link.reverse.delay_us == 200_000  # 20 ms × 10
    assert g.realisation["scale"]["mode"] == "window" and g.realisation["scale"]["rtt_ms"] == 200
    assert any(
        n.startswith("window scaling: the class RTT 20 ms × 10 = 200 ms")
        for n in g.realisation["notes"]
    )
    _, rate = _generate(tmp_path, app, "B", _scale(), variant)
    link = next(lk for lk in rate.topology.links if lk.emulated)
    assert link.forward.delay_us + link.reverse.delay_us == 20_000


def test_web_apps_draw_pair_rtts_around_the_stretched_rtt(tmp_path):
    g, _ = _generate(tmp_path, "WM", "B", _scale("window"))
    assert "mean 200 ms" in g.realisation["rtt"]
    assert g.doc["pair_rtt"]["mean"] == "200ms"


def test_tu_window_is_the_whole_path():
    cs = _scale().of(CLASSES["D"])  # C = 1 Gbit/s, 200 ms: 17265 segments
    g = apps.generate(apps.Cell("TU", CLASSES["D"], "cubic", "tuned"), cs, 1, 1.0)
    w = g.realisation["window"]
    assert w["testbed_segments"] == pytest.approx(25_000_000 / 1448)
    assert w["documents_segments"] == pytest.approx(250_000_000 / 1448)  # 10 Gbit/s
    assert w["testbed_share_segments"] is None and w["warning"] is None


def test_pa_keeps_1mb_messages_and_realises_k1000_with_fewer_faster_sources(tmp_path):
    g, sc = _generate(tmp_path, "PA", "G", _scale())  # K = 1000, C = 200 Mbit/s, C_g 2, R 0.8
    [pp] = [e for e in sc.experiment.events if e.kind == "pingpong"]
    assert pp.size == 1_000_000 and pp.rate_bps == 20_000_000  # C / K' with K' = 10
    assert g.realisation["sources_k"] == 10
    load = [e for e in sc.experiment.events if e.kind == "transfer" and e.direction == "background"]
    rev = [e for e in sc.experiment.events if e.kind == "transfer" and e.direction == "reverse"]
    assert sum(e.streams for e in load) == 19 and sum(e.streams for e in rev) == 8
    assert all(e.rate_bps == 20_000_000 * e.streams for e in load + rev)
    assert any(
        "K' = 10 sources of C / K' = 20Mbit/s" in n and "40 s per message" in n
        for n in g.realisation["notes"]
    )
    w = g.realisation["window"]  # the ping-pong's own source: 20 Mbit/s × 200 ms, share / 2
    assert w["testbed_segments"] == pytest.approx(500_000 / 1448) and w["load"] == 2.0
    # a K = 10 class keeps its K and C_a
    g, sc = _generate(tmp_path, "PA", "B", _scale())
    [pp] = [e for e in sc.experiment.events if e.kind == "pingpong"]
    assert (pp.size, pp.rate_bps, g.realisation["sources_k"]) == (1_000_000, 100_000_000, 10)


def test_pa_aggregation_by_hand():
    # --scale 100 on a K = 1000 class: C = 10 Gbit/s, C_a = 10 Mbit/s; sources of at least
    # 20 Mbit/s: K' = 500
    s = _scale(factor=100)
    assert pingpong.pa_aggregation(CLASSES["A"], s.of(CLASSES["A"])) == 500
    assert (
        pingpong.pa_aggregation(CLASSES["B"], _scale(capacity=100_000_000).of(CLASSES["B"])) == 10
    )


def test_pa_refused_where_window_scaling_makes_it_last_hours():
    cs = _scale("window").of(CLASSES["D"])  # 2 s RTT: 200 × (7 slow-start rounds × 2 s × 2)
    with pytest.raises(ScenarioError, match="run PA with --scaling rate"):
        apps.generate(apps.Cell("PA", CLASSES["D"], "cubic"), cs, 1, 1.0)
    g = apps.generate(
        apps.Cell("PA", CLASSES["B"], "cubic"), _scale("window").of(CLASSES["B"]), 1, 1.0
    )
    assert g.realisation["estimated_s"] < pingpong.PA_MAX_ESTIMATE_S


def test_warnings_name_the_applications_once_per_class():
    s = _scale()
    realisations = []
    for app in ("BU", "WM", "BU"):
        g = apps.generate(apps.Cell("BU", CLASSES["A"], "reno"), s.of(CLASSES["A"]), 1, 1.0)
        realisations.append(BenchRealisation.model_validate(g.realisation | {"app": app}))
    g = apps.generate(apps.Cell("BU", CLASSES["B"], "reno"), s.of(CLASSES["B"]), 1, 1.0)
    realisations.append(BenchRealisation.model_validate(g.realisation))
    [line] = windows.warnings_of(realisations)
    assert line.startswith("BU, WM: class A: 0.345 segments")


def test_bench_summary_and_report_show_the_window_table(tmp_path):
    args = benchmark.BenchArgs(
        ("BU",), (CLASSES["A"], CLASSES["F"]), ("reno",), 1, 1, 1.0, _scale(tt=10)
    )
    sweep = benchmark.sweep_of(args, tmp_path / "b")
    sweep.open()  # writes and validates the scenarios; nothing runs
    assert windows.warnings_of(c.realisation for c in sweep.index.cells) == [
        f"BU: class A: 0.345 segments per flow on this testbed (under 20; 1727 in the "
        f"documents): {windows.CONSEQUENCE}"
    ]
    table = benchmark.summarise(sweep)
    rows = table.rows
    by_class = {r.cls: r for r in rows}
    assert by_class["A"].window_warning and not by_class["F"].window_warning
    assert by_class["F"].window_segments == pytest.approx(125_000 / 1448)
    assert by_class["F"].scaling == "rate" and by_class["F"].testbed_rtt_ms == 20
    # table.json is the typed table, read back with its format checked; "class" on disk
    from itb.analysis.benchmark import BenchTable

    assert BenchTable.load(sweep.out / "table.json") == table
    assert '"class": "F"' in (sweep.out / "table.json").read_text()
    from itb.study.bench.report import build_bench_report

    html = build_bench_report(sweep.out, sweep.index, rows, []).read_text()
    assert "Per-flow windows" in html and "Warning: per-flow windows under 20 segments" in html
    assert "0.35" in html and "172.65" in html and "86.33" in html  # A; F at C_a and at C/M
    assert "<b>rate</b> mode" in html


def test_the_benchmark_says_the_warnings_before_running(tmp_path, monkeypatch):
    import typer

    from itb.cli import studies
    from itb.engine import runner
    from itb.study.bench import STUDY
    from itb.study.bench.args import BenchStudyArgs
    from itb.study.registry import Registered
    from itb.sweep import sweep as sweep_mod

    def no_testbed(*a, **k):
        raise AssertionError("a unit test must not run the engine")

    monkeypatch.setattr(runner, "run", no_testbed)
    said: list[str] = []
    monkeypatch.setattr(
        sweep_mod.Sweep, "run", lambda self, say, tick: said.append("run") or "incomplete"
    )
    monkeypatch.setattr(studies, "say", said.append)
    args = BenchStudyArgs(
        apps="BU", classes="C", ccs="reno", repeat=1, capacity_bps="1Gbit", transfer_time=10,
        out_dir=tmp_path / "b",
    )  # fmt: skip
    with pytest.raises(typer.Exit) as stopped:  # (its runs did not end: "incomplete")
        studies.run(Registered("itb.study.bench", STUDY), args)
    assert stopped.value.exit_code == 130
    said = [s for s in said if not s.startswith("benchmark directory")]
    assert said[0].startswith("warning: BU: class C: 3.45 segments per flow") and said[1] == "run"
    assert (tmp_path / "b" / "report" / "report.html").exists()


def test_the_bottleneck_queue_is_a_bdp_its_square_root_rule_or_a_size(tmp_path):
    s = make_scale(factor=None, capacity_bps=GBIT, transfer_time_s=240.0)
    assert s.of(CLASSES["B"]).buffer == "1bdp" and "buffer" not in s.to_json()  # old keys
    # BDP/√K: K = 10 → 1/3.162 = 0.3162 of a BDP; K = 1000 → 0.03162
    s = make_scale(factor=None, capacity_bps=GBIT, transfer_time_s=240.0, buffer="sqrtK")
    assert s.of(CLASSES["B"]).buffer == "0.3162bdp" and s.of(CLASSES["A"]).buffer == "0.03162bdp"
    assert s.to_json()["buffer"] == "sqrtk"
    g, sc = _generate(tmp_path, "BU", "B", s)
    [link] = [lk for lk in sc.topology.links if lk.emulated]
    # 1 Gbit/s × 20 ms = 2.5 MB; × 0.3162 = 790 500 B
    assert link.forward.queue_bytes == pytest.approx(790_500, abs=2)
    s = make_scale(factor=None, capacity_bps=GBIT, transfer_time_s=240.0, buffer="100pkt")
    assert s.of(CLASSES["F"]).buffer == "100pkt"
    for bad, words in (("2bdp", "give bdp, sqrtk"), ("lots", "sqrtk")):
        with pytest.raises(ScenarioError, match=words) as e:
            make_scale(factor=None, capacity_bps=GBIT, transfer_time_s=240.0, buffer=bad)
        assert e.value.field == "--buffer"


def test_n_s_parallel_streams_share_each_bu_source(tmp_path):
    """RR-6244 Table 5's N_s: a BU source of N_s streams keeps its volume and its C_a."""
    s = _scale()
    cs = s.of(CLASSES["B"])  # K = 10, C_g 0.8: 8 forward sources of C_a = 100 Mbit/s
    g = apps.generate(apps.Cell("BU", CLASSES["B"], "cubic"), cs, 1, 1.0, 1, 200, 5)
    fwd = [t for t in g.doc["transfer"] if t["id"].startswith("bu.")]
    assert len(fwd) == 8 and {t["streams"] for t in fwd} == {5}
    assert {t["rate"] for t in fwd} == {"100Mbit"}
    assert {t["volume"] for t in fwd} == {f"{cs.bu_volume}B"}
    assert (
        g.realisation["streams_per_source"] == 5
        and "5 parallel streams" in (g.realisation["forward"])
    )
    # K = 1000, C_g 0.8: 800 sources of 10 streams, at most 6 sources (60 streams) a bundle
    cs = s.of(CLASSES["A"])
    g = apps.generate(apps.Cell("BU", CLASSES["A"], "cubic"), cs, 1, 1.0, 1, 200, 10)
    fwd = [t for t in g.doc["transfer"] if t["id"].startswith("bu.")]
    assert sum(t["streams"] for t in fwd) == 8000 and max(t["streams"] for t in fwd) <= 60
    assert all(t["streams"] % 10 == 0 for t in fwd)
    # the other applications keep one stream a source
    g = apps.generate(apps.Cell("PA", CLASSES["B"], "cubic"), s.of(CLASSES["B"]), 1, 1.0, 1, 5, 5)
    assert "streams_per_source" not in g.realisation
    # in the key only when not 1; out of Table 5's range refused
    args = benchmark.BenchArgs(("BU",), (CLASSES["B"],), ("reno",), 1, 1, 1.0, s)
    assert "streams" not in args.key()
    args = benchmark.BenchArgs(("BU",), (CLASSES["B"],), ("reno",), 1, 1, 1.0, s, streams=5)
    assert args.key()["streams"] == 5
    with pytest.raises(ScenarioError) as e:
        benchmark.BenchArgs(("BU",), (CLASSES["B"],), ("reno",), 1, 1, 1.0, s, streams=11)
    assert e.value.field == "--streams"
