"""A repetition's events as processes: who listens, who starts when, with which argv."""

from __future__ import annotations

import textwrap

import pytest

from itb.engine import processes
from itb.errors import ScenarioError
from itb.scenario.experiment.background import events_for_repetition
from itb.scenario.scenario import load_scenario

SCENARIO = """
[testbed]
name = "p"
[dumbbell]
pairs = 2
[bottleneck]
rate = "100Mbit"
rtt = "20ms"
[experiment]
duration = "30s"
interval = "10ms"
[[transfer]]
id = "bulk"
src = ["l1", "l2"]
dst = ["r1", "r2"]
volume = "5MB"
streams = 2
cc = "reno"
rate = "20Mbit"
[[pingpong]]
src = "l2"
dst = "r2"
at = "3s"
count = 10
size = "100kB"
[[udp]]
src = "r1"
dst = "l1"
rate = "10Mbit"
duration = "5s"
arrivals = "poisson"
[[command]]
host = "l1"
at = "4s"
argv = ["sleep", "1"]
wait = false
[[set]]
at = "2s"
link = "rl-rr"
rate = "50Mbit"
"""


@pytest.fixture
def plan(tmp_path, monkeypatch):
    monkeypatch.setenv("ITB_FLOW", "/usr/local/bin/flow")
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    sc = load_scenario(path)
    return processes.build(
        events_for_repetition(sc.experiment, 1),
        sc.topology,
        tmp_path / "rep-001",
        sc.experiment.interval_us,
    ), tmp_path


def test_receivers_in_prelude_senders_at_their_dates(plan):
    p, _ = plan
    by_id = {x.id: x for x in p.procs}
    assert {x.id for x in p.listeners()} == {
        "bulk.1.recv",
        "bulk.2.recv",
        "pp1.recv",
        "udp1.udp-recv",
    }
    assert all(x.ready for x in p.listeners())
    assert by_id["bulk.2.send"].at_us == 1_000_000  # experiment.spacing default 1 s
    assert by_id["pp1.send"].at_us == 3_000_000
    assert by_id["cmd1.command"].argv == ("sleep", "1") and not by_id["cmd1.command"].wait
    assert [s.id for s in p.sets] == ["set1"]
    assert p.prelude_s == pytest.approx(1.04)


def test_endpoint_arguments(plan):
    p, tmp = plan
    by_id = {x.id: x for x in p.procs}
    send, recv = by_id["bulk.1.send"].argv, by_id["bulk.1.recv"].argv
    assert send[:2] == ("/usr/local/bin/flow", "send")
    listen = recv[recv.index("--listen") + 1]
    assert listen == send[send.index("--to") + 1] and listen.startswith("198.18.")
    for flag, value in (
        ("--cc", "reno"),
        ("--streams", "2"),
        ("--bytes", "5000000"),
        ("--rate-bps", "20000000"),
        ("--interval-us", "10000"),
    ):
        assert send[send.index(flag) + 1] == value
    assert recv[recv.index("--bytes") + 1] == "5000000"
    assert by_id["bulk.1.send"].stdin  # rate changes during the transfer
    assert by_id["bulk.1.send"].files["log"] == str(tmp / "rep-001/nodes/l1/bulk.1.send.csv")
    pp = by_id["pp1.send"].argv
    assert "--pingpong" in pp and pp[pp.index("--count") + 1] == "10"
    udp = by_id["udp1.udp-send"].argv
    assert "--poisson" in udp and udp[udp.index("--rate-bps") + 1] == "10000000"
    ports = [x.argv[x.argv.index("--listen") + 1] for x in p.listeners()]
    assert len(set(ports)) == len(ports)


def test_file_transfers_are_single_stream(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.replace('rate = "20Mbit"', 'rate = "20Mbit"\nsource_file = "/tmp/x"'))
    with pytest.raises(ScenarioError) as e:
        load_scenario(path)
    assert e.value.field == "transfer[0].streams" and "one stream" in e.value.reason


def test_file_transfer_arguments(tmp_path, monkeypatch):
    monkeypatch.setenv("ITB_FLOW", "flow")
    path = tmp_path / "s.toml"
    data = tmp_path / "data"
    data.mkdir()
    (data / "in.bin").write_bytes(b"x" * 1000)
    text = textwrap.dedent("""
        [experiment]
        files_dir = "data"
        [[transfer]]
        src = "l1"
        dst = "r1"
        volume = "1kB"
        source_file = "{src}"
        sink_file = "{sink}"
        {extra}
    """)
    path.write_text(text.format(src="in.bin", sink="out.bin", extra=""))
    sc = load_scenario(path)
    p = processes.build(list(sc.experiment.events), sc.topology, tmp_path / "rep", 100_000)
    by_id = {x.id: x for x in p.procs}
    s, r = by_id["t1.send"].argv, by_id["t1.recv"].argv
    assert s[s.index("--file") + 1] == str(data / "in.bin")
    assert r[r.index("--file") + 1] == str(data / "out.bin")
    # confined to files_dir, never overwriting unless asked
    for src, sink, extra, field, why in [
        ("/etc/shadow", "o", "", "source_file", "inside files_dir"),
        ("../s.toml", "o", "", "source_file", "inside files_dir"),
        ("in.bin", "in.bin", "", "sink_file", "overwrite = true"),
    ]:
        path.write_text(text.format(src=src, sink=sink, extra=extra))
        with pytest.raises(ScenarioError, match=f"transfer\\[0\\].{field}: .*{why}"):
            load_scenario(path)
    path.write_text(text.format(src="in.bin", sink="in.bin", extra="overwrite = true"))
    load_scenario(path)
    path.write_text(text.replace('files_dir = "data"', "").format(src="in.bin", sink="o", extra=""))
    with pytest.raises(ScenarioError, match="needs \\[experiment\\] files_dir"):
        load_scenario(path)
