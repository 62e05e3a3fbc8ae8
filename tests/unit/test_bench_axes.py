"""RR-6244 Table 5's axes as `itb bench` options: K = 1 for the data-centre classes, the
RTT (one value or a mix of modes), the documents' access rate C_a and background
traffic B; each in the benchmark's key only when not the default, and every generated
scenario loads."""

import pytest
import tomli_w

from itb.errors import ScenarioError
from itb.scenario.experiment.events import TcpBackground, Transfer, Udp
from itb.scenario.scenario import load_scenario
from itb.suite import apps, benchmark
from itb.suite.axes import check_k, parse_access, parse_rtt, rtt_text, with_axes
from itb.suite.background import parse_background
from itb.suite.classes import CLASSES
from itb.suite.scaling import make_scale

GBIT = 1_000_000_000


def _scale(tt=6.0, access=None, capacity=GBIT):
    return make_scale(factor=None, capacity_bps=capacity, transfer_time_s=tt, access_bps=access)


def _load(tmp_path, g):
    path = tmp_path / "cell.toml"
    path.write_bytes(tomli_w.dumps(g.doc).encode())
    return load_scenario(path)


def _bu(cls, s, **kw):
    return apps.generate(apps.Cell("BU", cls, "cubic"), s.of(cls), 1, 1.0, 1, 200, 1, **kw)


def _args(**kw):
    return benchmark.BenchArgs(("BU",), (CLASSES["B"],), ("reno",), 1, 1, 1.0, _scale(), **kw)


def test_k_1_keeps_the_offered_load_with_one_source_at_a_share_of_c_a(tmp_path):
    b = with_axes(CLASSES["B"], k=1)
    # C_g 0.8 at K = 1: one source offering 0.8 of its C_a (= C)
    assert (b.k, b.forward_sources, b.forward_share) == (1, 1, pytest.approx(0.8))
    s = _scale()
    cs = s.of(b)  # 1 × 1 Gbit/s on a 1 Gbit/s testbed: factor 1
    assert (cs.factor, cs.capacity_bps, cs.access_bps) == (1, GBIT, GBIT)
    g = _bu(b, s)
    fwd = [t for t in g.doc["transfer"] if t["id"].startswith("bu.")]
    assert [t["rate"] for t in fwd] == ["800Mbit"]
    # R 1.5 at K = 1: round(1.5) = 2 reverse sources of 0.75 C_a each
    lk = with_axes(CLASSES["L"], k=1)
    assert (lk.reverse_sources, lk.reverse_share) == (2, pytest.approx(0.75))
    rev = [t for t in _bu(lk, s).doc["transfer"] if t["id"].startswith("rev.")]
    assert [t["rate"] for t in rev] == ["750Mbit", "750Mbit"]
    assert _load(tmp_path, g).experiment.events
    # the Internet classes keep K = 1000; K = 10 is the default, out of the key
    assert with_axes(CLASSES["A"], k=1).k == 1000
    assert "k" not in _args().key() and _args(k=1).key()["k"] == 1
    assert with_axes(CLASSES["B"]).forward_share == 1.0  # 8 sources of C_a at K = 10
    with pytest.raises(ScenarioError) as e:
        check_k(5)
    assert e.value.field == "--k"


def test_rtt_option_parses_values_and_mixes():
    assert parse_rtt("1ms") == (1.0,)
    assert parse_rtt("mix") == (1.0, 20.0, 200.0)
    assert parse_rtt("200ms, 20ms") == (20.0, 200.0)
    assert parse_rtt(None) == () and parse_rtt(" ") == ()
    assert rtt_text((1.0, 20.0, 200.0)) == "1ms,20ms,200ms"
    for bad in ("3s", "0ms", "20ms,20ms", "fast", ",".join(f"{i}ms" for i in range(1, 10))):
        with pytest.raises(ScenarioError) as e:
            parse_rtt(bad)
        assert e.value.field == "--rtt"


def test_one_rtt_replaces_every_class_rtt(tmp_path):
    b = with_axes(CLASSES["B"], rtt_modes=(1.0,))
    assert b.rtt_ms == 1.0
    sc = _load(tmp_path, _bu(b, _scale()))
    bottleneck = next(lk for lk in sc.topology.links if lk.kind == "bottleneck")
    assert bottleneck.forward.delay_us + bottleneck.reverse.delay_us == 1000
    assert _args(rtt_modes_ms=(1.0,)).key()["rtt"] == "1ms" and "rtt" not in _args().key()


def test_an_rtt_mix_gives_each_host_pair_one_mode(tmp_path):
    b = with_axes(CLASSES["B"], rtt_modes=(1.0, 20.0, 200.0))
    assert b.rtt_ms == 200.0  # durations and windows bounded by the longest
    g = _bu(b, _scale())
    assert g.doc["pair_rtt"]["modes"] == ["1ms", "20ms", "200ms"]
    sc = _load(tmp_path, g)
    bottleneck = next(lk for lk in sc.topology.links if lk.kind == "bottleneck")
    assert bottleneck.forward.delay_us + bottleneck.reverse.delay_us == 1000  # the shortest
    # the queue: one BDP at the modes' mean, 125 MB/s × 73.667 ms = 9,208,333 B
    assert bottleneck.forward.queue_bytes == 9_208_333
    # 8 pairs, 3 modes in equal proportions (largest remainder: 3, 3, 2)
    extras = sorted(d.extra_rtt_us for d in sc.topology.pair_delays)
    assert extras.count(0) + extras.count(19_000) + extras.count(199_000) == 8
    assert sorted({extras.count(0), extras.count(19_000), extras.count(199_000)}) == [2, 3]
    # a mix needs a forward source per mode; other applications refuse it, saying why
    with pytest.raises(ScenarioError, match="3 RTT modes need a forward source on each"):
        _bu(with_axes(CLASSES["B"], k=1, rtt_modes=(1.0, 20.0, 200.0)), _scale())
    with pytest.raises(ScenarioError, match="one ping-pong") as e:
        apps.generate(apps.Cell("PA", b, "cubic"), _scale().of(b), 1, 1.0, 1, 5)
    assert e.value.field == "--rtt"


def test_access_rate_scales_from_the_documents_c_a():
    # C_a = 100 Mbit/s: class B's C = 10 × 100 Mbit/s = 1 Gbit/s, factor 1 on 1 Gbit/s
    cs = _scale(access=100_000_000).of(CLASSES["B"])
    assert (cs.factor, cs.capacity_bps, cs.access_bps) == (1, GBIT, 100_000_000)
    # one BU transfer still lasts the 6 s asked: 30 GB ÷ 400 = 75 MB at 100 Mbit/s
    assert cs.bu_volume == 75_000_000 and cs.bu_volume * 8 / cs.access_bps == 6
    # C_a = 10 Gbit/s: C = 100 Gbit/s, factor 100, C_a here 100 Mbit/s
    cs = _scale(access=10 * GBIT).of(CLASSES["B"])
    assert (cs.factor, cs.access_bps) == (100, 100_000_000)
    assert "access_bps" not in _scale().to_json()
    assert _scale(access=100_000_000).to_json()["access_bps"] == 100_000_000
    assert parse_access("100Mbit") == 100_000_000 and parse_access(None) is None
    with pytest.raises(ScenarioError) as e:
        parse_access("10kbit")
    assert e.value.field == "--access"


def test_background_parses_kinds_shares_and_shapes():
    assert parse_background(None).kind == "none" and parse_background("none").text == "none"
    cbr = parse_background("cbr:20%")
    assert (cbr.kind, cbr.share, cbr.shape, cbr.text) == ("cbr", 0.2, None, "cbr:20%")
    assert parse_background("poisson:0.1").text == "poisson:10%"
    assert parse_background("pareto:20%").shape == 1.5  # the default α
    assert parse_background("weibull:5%:0.7").text == "weibull:5%:0.7"
    for bad in ("cbr", "cbr:0", "cbr:95%", "cbr:20", "cbr:20%:2", "pareto:20%:1", "foo:20%"):
        with pytest.raises(ScenarioError) as e:
            parse_background(bad)
        assert e.value.field == "--background"


def test_cbr_background_runs_on_a_pair_of_its_own_at_its_share_of_c(tmp_path):
    bg = parse_background("cbr:20%")
    g = _bu(CLASSES["B"], _scale(), background=bg)
    assert g.doc["dumbbell"]["pairs"] == 9  # BU's 8 pairs, then the background's
    (udp,) = g.doc["udp"]
    assert (udp["src"], udp["dst"], udp["rate"], udp["wait"]) == ("l9", "r9", "200Mbit", False)
    assert udp["duration"] == g.doc["experiment"]["duration"]
    assert g.realisation["background"] == "cbr:20%"
    events = _load(tmp_path, g).experiment.events
    (u,) = [e for e in events if isinstance(e, Udp)]
    assert (u.rate_bps, u.arrivals, u.wait) == (200_000_000, "cbr", False)
    assert _args(background=bg).key()["background"] == "cbr:20%"
    assert "background" not in _args().key()


def test_tcp_background_flows_average_one_second_of_the_load(tmp_path):
    g = _bu(CLASSES["B"], _scale(), background=parse_background("pareto:20%"))
    (bg,) = g.doc["tcp_background"]
    # 20 % of 1 Gbit/s for 1 s: 25,000,000 B a flow on average, one a second
    assert bg["sizes"] == {"distribution": "pareto", "mean": "25000000B", "shape": 1.5}
    assert (bg["mean_gap"], bg["cc"], bg["wait"]) == ("1s", "cubic", False)
    events = _load(tmp_path, g).experiment.events
    (t,) = [e for e in events if isinstance(e, TcpBackground)]
    assert (t.mean_bytes, t.mean_gap_us, t.wait) == (25_000_000, 1_000_000, False)
    assert all(e.wait for e in events if isinstance(e, Transfer) and e.id.startswith("bu."))


def test_pa_answers_each_message_with_twice_its_size(tmp_path, monkeypatch):
    # RR-6244 §4.5.4: PA's forward/reverse ratio is 0.5, 1 MB there and 2 MB back
    from itb.engine import processes
    from itb.scenario.experiment.background import events_for_repetition

    b = CLASSES["B"]
    g = apps.generate(apps.Cell("PA", b, "cubic"), _scale().of(b), 1, 1.0, 1, 5)
    (pp,) = g.doc["pingpong"]
    assert (pp["size"], pp["reply_size"], pp["count"]) == ("1000000B", "2000000B", 5)
    monkeypatch.setenv("ITB_FLOW", "/usr/local/bin/flow")
    sc = _load(tmp_path, g)
    plan = processes.build(
        events_for_repetition(sc.experiment, 1), sc.topology, tmp_path, sc.experiment.interval_us
    )
    for role in ("send", "recv"):
        argv = next(p.argv for p in plan.procs if p.id == f"pa.{role}")
        assert argv[argv.index("--reply-size") + 1] == "2000000"
        assert argv[argv.index("--msg-size") + 1] == "1000000"


def test_udt_runs_a_bu_cell_over_udt4s_own_congestion_control(tmp_path, monkeypatch):
    from itb.engine import processes
    from itb.scenario.experiment.background import events_for_repetition

    b = CLASSES["B"]
    g = apps.generate(apps.Cell("BU", b, "udt"), _scale().of(b), 1, 1.0, 1, 5)
    fwd = [t for t in g.doc["transfer"] if t["id"].startswith("bu.")]
    assert all(t["protocol"] == "udt" and t["cc"] == "udt" and "streams" not in t for t in fwd)
    assert {t["rate"] for t in fwd} == {"100Mbit"}  # each source capped at its C_a
    monkeypatch.setenv("ITB_FLOW", "/usr/local/bin/flow")
    sc = _load(tmp_path, g)
    events = events_for_repetition(sc.experiment, 1)
    t = next(e for e in events if isinstance(e, Transfer) and e.id == "bu.1")
    assert (t.protocol, t.udt_control, t.rate_bps, t.profile) == ("udt", "native", 10**8, None)
    assert sc.experiment.ccs() == set()  # no TCP congestion control to load
    plan = processes.build(events, sc.topology, tmp_path, sc.experiment.interval_us)
    send = next(p.argv for p in plan.procs if p.id == "bu.1.send")
    assert send[send.index("--cc") + 1] == "native" and "--profile" not in send
    assert send[send.index("--max-rate-bps") + 1] == "100000000"
    # where a cell cannot run UDT, the reason
    for app, cls, words in (
        ("PA", "B", "ping-pong"),
        ("TU", "B", "socket buffers"),
        ("BU", "A", "one stream"),
    ):
        c = CLASSES[cls]
        with pytest.raises(ScenarioError, match=words) as e:
            apps.generate(apps.Cell(app, c, "udt", "default" if app == "TU" else None),
                          _scale().of(c), 1, 1.0, 1, 5)  # fmt: skip
        assert e.value.field == "--cc"


def test_cc_udt_belongs_to_udt_transfers(tmp_path):
    from itb.scenario.scenario import scenario_from_data

    def load(**t):
        return scenario_from_data(
            {
                "testbed": {"name": "u"},
                "experiment": {"duration": "30s"},
                "transfer": [{"src": "l1", "dst": "r1", "volume": "1MB"} | t],
            },
            "test",
        )

    with pytest.raises(ScenarioError, match='add protocol = "udt"'):
        load(cc="udt")
    with pytest.raises(ScenarioError, match="a profile needs"):
        load(protocol="udt", cc="udt", profile=[[0, "10Mbit"]])
    with pytest.raises(ScenarioError, match='takes cc = "udt"'):
        load(protocol="udt", cc="reno", rate="10Mbit")
    (t,) = load(protocol="udt", cc="udt").experiment.events  # uncapped: UDT's own rate
    assert (t.udt_control, t.rate_bps) == ("native", None)
