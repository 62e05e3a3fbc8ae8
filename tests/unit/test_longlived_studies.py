"""The long-lived flows' studies (`itb study rtt-sweep`, `itb study incremental`): their
plans (flows, starts, the stop date, scenarios that load) and the goodput of a flow over
a window, pro rata of the receiver's intervals, with hand-computed values."""

import pandas as pd
import pytest
import tomli_w

from itb.errors import ScenarioError
from itb.scenario.scenario import load_scenario
from itb.study.incremental.args import IncrementalArgs
from itb.study.incremental.plan import sweep_of as incremental_sweep
from itb.study.longlived import jain_or_none, window_goodputs
from itb.study.rtt_sweep.args import RttSweepArgs
from itb.study.rtt_sweep.plan import sweep_of as rtt_sweep
from itb.study.rtt_sweep.plan import window_of

GBIT = 1_000_000_000
ZERO = 10_000_000_000  # a repetition's zero on the engine's clock (ns)


def _samples(flows: dict[str, tuple[float, float, float]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Goodput rows of 0.1 s for each flow: (first interval's start s, end s, bit/s)."""
    rows = []
    for name, (start, end, bps) in flows.items():
        t = start
        while t + 0.1 <= end + 1e-9:
            t += 0.1
            rows.append(
                {
                    "repetition": 1,
                    "transfer": name,
                    "series": "goodput",
                    "t_ns": ZERO + int(round(t * 1e9)),
                    "interval_s": 0.1,
                    "bytes": bps / 8 * 0.1,
                }
            )
    transfers = pd.DataFrame(
        [{"repetition": 1, "transfer": n, "rep_start_ns": ZERO} for n in flows]
    )
    return pd.DataFrame(rows), transfers


def test_window_goodput_counts_the_part_of_each_interval_inside_the_window():
    # intervals from 0.05 s: [1, 2] holds 9 whole ones and two halves = 1 s of 800 kbit/s
    samples, tr = _samples({"f1": (0.05, 5.05, 800_000), "f2": (1.5, 5.0, 400_000)})
    got = window_goodputs(samples, tr, 1.0, 2.0)[1]
    assert got["f1"] == pytest.approx(800_000)
    assert got["f2"] == pytest.approx(200_000)  # half of the window at 400 kbit/s
    # before f2 started it has no row there: left out
    assert "f2" not in window_goodputs(samples, tr, 0.5, 1.0)[1]


def test_jain_of_goodputs_is_none_for_one_flow_and_hand_computed_for_two():
    assert jain_or_none([5.0]) is None and jain_or_none([0.0, 0.0]) is None
    assert jain_or_none([1.0, 3.0]) == pytest.approx(16 / 20)  # (1+3)² / (2·(1+9))


def _load(tmp_path, doc):
    path = tmp_path / "cell.toml"
    path.write_bytes(tomli_w.dumps(doc).encode())
    return load_scenario(path)


def test_rtt_sweep_plans_flows_at_c_a_stopped_after_the_window(tmp_path):
    a = RttSweepArgs(
        ccs="reno",
        rtts_ms="1ms,200ms",
        flows="2,12",
        seconds=10,
        warmup=3,
        spacing=0.5,
        capacity=GBIT,
        repeat=1,
    )
    assert window_of(a, 12) == (0.5 * 11 + 3, 0.5 * 11 + 3 + 10)  # (8.5, 18.5)
    sweep = rtt_sweep(a, tmp_path / "out")
    names = [c.info.name for c in sweep.cells]
    assert names == ["reno-n2-rtt1", "reno-n2-rtt200", "reno-n12-rtt1", "reno-n12-rtt200"]
    cell = sweep.cells[3]
    sc = _load(tmp_path, cell.doc)
    flows = [e for e in sc.experiment.events if getattr(e, "kind", "") == "transfer"]
    assert len(flows) == 12 and all(not f.wait and f.rate_bps == GBIT // 10 for f in flows)
    assert [f.at_us for f in flows][:3] == [0, 500_000, 1_000_000]
    # each has more than it can send at C_a before the stop (18.5 s, + 60 s)
    assert flows[0].volume == int(GBIT / 10 / 8 * (18.5 + 60))
    (end,) = [e for e in sc.experiment.events if getattr(e, "kind", "") == "command"]
    assert end.argv == ("sleep", "18.5") and end.wait
    with pytest.raises(ScenarioError) as e:
        RttSweepArgs(flows="0,5", capacity=GBIT)
    assert e.value.field == "--flows"


def test_incremental_plans_one_flow_a_period(tmp_path):
    a = IncrementalArgs(ccs="cubic", rtts_ms="11ms", flows=3, period=4, capacity=GBIT, repeat=1)
    (cell,) = incremental_sweep(a, tmp_path / "out").cells
    sc = _load(tmp_path, cell.doc)
    flows = [e for e in sc.experiment.events if getattr(e, "kind", "") == "transfer"]
    assert [f.at_us for f in flows] == [0, 4_000_000, 8_000_000]
    assert [(f.src, f.dst) for f in flows] == [("l1", "r1"), ("l2", "r2"), ("l3", "r3")]
    (end,) = [e for e in sc.experiment.events if getattr(e, "kind", "") == "command"]
    assert end.argv == ("sleep", "12")


def test_streams_plans_nodes_of_parallel_streams_sharing_their_c_a(tmp_path):
    from itb.study.streams.args import StreamsArgs
    from itb.study.streams.plan import sweep_of as streams_sweep

    a = StreamsArgs(ccs="reno", streams="1,10", nodes=11, capacity=GBIT, repeat=1)
    assert a.window_s == (10 + 5, 10 + 5 + 30)  # 11 nodes 1 s apart, 5 s warm-up, 30 s
    cells = streams_sweep(a, tmp_path / "out").cells
    assert [c.info.name for c in cells] == ["reno-s1", "reno-s10"]
    sc = _load(tmp_path, cells[1].doc)
    flows = [e for e in sc.experiment.events if getattr(e, "kind", "") == "transfer"]
    assert len(flows) == 11 and all(f.streams == 10 for f in flows)
    assert all(f.rate_bps == GBIT // 10 for f in flows)  # a node's streams share its C_a
    assert [f.at_us for f in flows][-1] == 10_000_000
    with pytest.raises(ScenarioError) as e:
        StreamsArgs(streams="0", capacity=GBIT)
    assert e.value.field == "--streams"


def test_multiplexing_plans_more_slower_sources_for_a_larger_k(tmp_path):
    from itb.study.multiplexing.args import MultiplexingArgs
    from itb.study.multiplexing.plan import sweep_of as mux_sweep

    a = MultiplexingArgs(ccs="cubic", ks="1,10", capacity=GBIT, repeat=1, transfer_time=5)
    one, ten = mux_sweep(a, tmp_path / "out").cells
    assert (one.info.k, one.info.forward_sources, one.info.reverse_sources) == (1, 2, 2)
    assert (ten.info.k, ten.info.forward_sources, ten.info.reverse_sources) == (10, 20, 15)
    # K = 1: two sources at C_a = C; R 1.5 as two reverse sources at 0.75 C_a
    fwd = [t for t in one.doc["transfer"] if t["id"].startswith("bu.")]
    rev = [t for t in one.doc["transfer"] if t["id"].startswith("rev.")]
    assert [t["rate"] for t in fwd] == ["1Gbit", "1Gbit"]
    assert [t["rate"] for t in rev] == ["750Mbit", "750Mbit"]
    # K = 10: twenty at C / 10; both on the same 1 Gbit/s bottleneck
    assert {t["rate"] for t in ten.doc["transfer"] if t["id"].startswith("bu.")} == {"100Mbit"}
    assert one.doc["bottleneck"]["rate"] == ten.doc["bottleneck"]["rate"] == "1Gbit"
    assert _load(tmp_path, one.doc).experiment.events
    with pytest.raises(ScenarioError) as e:
        MultiplexingArgs(ks="10,1", capacity=GBIT)
    assert e.value.field == "--k"
