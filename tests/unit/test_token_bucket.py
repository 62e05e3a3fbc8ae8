"""`enforce = "tbf"` (a transfer's rate kept by a token bucket on its source host's
egress) and `socket_buffer` (a fixed SO_SNDBUF / SO_RCVBUF on both ends): how they
resolve into the topology and the endpoints' arguments, and what is refused."""

from __future__ import annotations

import pytest

from itb.engine import processes
from itb.errors import ScenarioError
from itb.scenario.experiment.background import events_for_repetition
from itb.scenario.scenario import scenario_from_data

MBIT = 1_000_000


def _scenario(*transfers: dict, access: str | None = None):
    dumbbell: dict = {"pairs": 2}
    if access:
        dumbbell["access_rate"] = access
    return scenario_from_data(
        {
            "testbed": {"name": "tbf"},
            "dumbbell": dumbbell,
            "bottleneck": {"rate": "700Mbit", "rtt": "100ms"},
            "experiment": {"duration": "60s"},
            "transfer": list(transfers),
        },
        "test",
    )


def _flow(src: str, dst: str, **kw) -> dict:
    return {"src": src, "dst": dst, "volume": "10MB", "cc": "reno"} | kw


def _access(sc, host: str):
    (lk,) = [lk for lk in sc.topology.links if lk.kind == "access" and lk.a.node == host]
    return lk


def test_a_tbf_transfer_shapes_its_source_hosts_egress_at_the_sum_of_their_rates():
    sc = _scenario(
        _flow("l1", "r1", rate="200Mbit", enforce="tbf"),
        _flow("l1", "r2", rate="200Mbit", enforce="tbf"),
        _flow("l2", "r2", rate="490Mbit"),  # paced: its host stays unshaped
    )
    l1 = _access(sc, "l1")
    assert l1.forward.rate_bps == 400 * MBIT  # 200 + 200 Mbit/s: one bucket for the host
    assert l1.reverse.rate_bps is None  # only the egress
    assert _access(sc, "l2").forward.rate_bps is None and _access(sc, "r1").forward.rate_bps is None


def test_a_tbf_sender_is_not_paced_and_a_socket_buffer_reaches_both_ends(tmp_path, monkeypatch):
    monkeypatch.setenv("ITB_FLOW", "/usr/local/bin/flow")
    sc = _scenario(
        _flow("l1", "r1", rate="490Mbit", enforce="tbf", socket_buffer="16MB", id="t"),
        _flow("l2", "r2", rate="490Mbit", socket_buffer="25MB", id="p"),
    )
    plan = processes.build(
        events_for_repetition(sc.experiment, 1), sc.topology, tmp_path, sc.experiment.interval_us
    )
    by_id = {x.id: x.argv for x in plan.procs}
    assert "--rate-bps" not in by_id["t.send"]
    p = by_id["p.send"]
    assert p[p.index("--rate-bps") + 1] == "490000000"
    for ident, size in (("t", "16000000"), ("p", "25000000")):
        for role in ("send", "recv"):
            argv = by_id[f"{ident}.{role}"]
            assert argv[argv.index("--socket-buffer") + 1] == size


@pytest.mark.parametrize(
    ("transfer", "access", "field", "words"),
    [
        (_flow("l1", "r1", enforce="tbf"), None, "transfer[0].enforce", "give rate"),
        (
            _flow("l1", "r1", enforce="tbf", profile=[[0, "100Mbit"], [1, "200Mbit"]]),
            None,
            "transfer[0].enforce",
            "no profile",
        ),
        (
            _flow("l1", "r1", rate="100Mbit", enforce="tbf"),
            "1Gbit",
            "transfer.enforce",
            "already has a rate",
        ),
        (_flow("l1", "r1", socket_buffer="1kB"), None, "transfer[0].socket_buffer", "4 KiB"),
        (_flow("l1", "r1", enforce="bucket"), None, "transfer[0].enforce", "tbf"),
    ],
)
def test_what_a_token_bucket_or_a_socket_buffer_refuses(transfer, access, field, words):
    with pytest.raises(ScenarioError) as e:
        _scenario(transfer, access=access)
    assert e.value.field == field and words in e.value.reason


def test_a_scenario_without_them_keeps_its_hash():
    # the new fields stay out of the canonical form while unset
    sc = _scenario(_flow("l1", "r1", rate="100Mbit"))
    text = sc.experiment.canonical_json()
    assert "socket_buffer" not in text and "enforce" not in text
