"""`itb study pacing-vs-tbf`'s plan: each source host limited to R in all, by a token
bucket on its egress or by its flows' pacing at the payload rate of R, and the fluid
model's ideal completion time per pattern (hand-computed at the paper's 700 Mbit/s
bottleneck and 490 Mbit/s limit)."""

import pytest
import tomli_w

from itb.errors import ScenarioError
from itb.scenario.experiment.events import Transfer
from itb.scenario.scenario import load_scenario
from itb.study.pacing_tbf.args import PacingTbfArgs
from itb.study.pacing_tbf.plan import ideal_s, sweep_of

MBIT = 1_000_000


def _args(**kw):
    return PacingTbfArgs(**({"ccs": "reno", "rtts_ms": "100ms", "repeat": 1} | kw))


def test_the_ideal_is_each_flows_fair_share_of_frames_as_payload():
    a = _args()
    assert a.volume_bytes == 1_225_000_000  # 490 Mbit/s for 20 s
    frame = 1514 / 1448
    assert ideal_s(a, "1flow") == pytest.approx(20 * frame)  # alone at R
    assert ideal_s(a, "2flows-1host") == pytest.approx(40 * frame)  # R / 2 each
    assert ideal_s(a, "2flows-2hosts") == pytest.approx(28 * frame)  # C / 2 = 350 each


def _cell(tmp_path, a, name):
    sweep = sweep_of(a, tmp_path / "out")
    cell = next(c for c in sweep.cells if c.info.name == name)
    path = tmp_path / "c.toml"
    path.write_bytes(tomli_w.dumps(cell.doc).encode())
    return cell.info, load_scenario(path)


def test_a_token_bucket_cell_shapes_the_host_and_leaves_its_flows_unpaced(tmp_path):
    info, sc = _cell(tmp_path, _args(), "reno-rtt100-buf25000000-2flows-1host-tbf")
    assert (info.flows, info.mechanism, info.pattern) == (2, "tbf", "2flows-1host")
    flows = [e for e in sc.experiment.events if isinstance(e, Transfer)]
    assert [(f.src, f.dst) for f in flows] == [("l1", "r1"), ("l1", "r2")]
    assert all(f.enforce == "tbf" and f.socket_buffer_bytes == 25_000_000 for f in flows)
    (l1,) = [lk for lk in sc.topology.links if lk.kind == "access" and lk.a.node == "l1"]
    assert l1.forward.rate_bps == 490 * MBIT  # 245 + 245: one bucket for the host
    bottleneck = next(lk for lk in sc.topology.links if lk.kind == "bottleneck")
    assert bottleneck.forward.rate_bps == 700 * MBIT
    assert bottleneck.forward.delay_us + bottleneck.reverse.delay_us == 100_000


def test_a_pacing_cell_paces_each_flow_at_its_share_of_the_payload_rate(tmp_path):
    _, sc = _cell(tmp_path, _args(), "reno-rtt100-buf25000000-2flows-2hosts-pacing")
    flows = [e for e in sc.experiment.events if isinstance(e, Transfer)]
    assert [(f.src, f.dst) for f in flows] == [("l1", "r1"), ("l2", "r2")]
    # 490 Mbit/s of frames carry 490 × 1448/1514 = 468.64 Mbit/s of payload
    assert all(f.rate_bps == pytest.approx(490e6 * 1448 / 1514, abs=1) for f in flows)
    assert all(f.enforce == "pacing" for f in flows)
    assert all(lk.forward.rate_bps is None for lk in sc.topology.links if lk.kind == "access")


def test_the_plan_refuses_what_it_cannot_run():
    for kw, flag in (
        ({"patterns": "3flows"}, "--patterns"),
        ({"buffers": "1kB"}, "--socket-buffer"),
        ({"limit_bps": "800Mbit"}, "--limit"),
    ):
        with pytest.raises(ScenarioError) as e:
            _args(**kw)
        assert e.value.field == flag
