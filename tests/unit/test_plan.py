"""Plan generation: every step an argv list, routes along shortest paths, emulator configs."""

from __future__ import annotations

import ipaddress
from pathlib import Path

from itb.emulation import actions as A
from itb.emulation import linkem
from itb.emulation.plan import build_plan, path_bdp_bytes, socket_buffer_max, tbf_params
from itb.emulation.routing import routes_for
from itb.scenario import load_testbed
from itb.scenario.testbed.paths import path_links

EXAMPLES = Path(__file__).resolve().parents[2] / "scenarios" / "examples"


def _routes(topo, node):
    return {(dst, fam): via for dst, via, fam in routes_for(topo, node)}


def test_dumbbell_routes_hosts_default_routers_per_subnet():
    topo = load_testbed(None, {"pairs": 2})
    l1 = _routes(topo, "l1")
    assert l1[("default", 4)] == "198.18.1.2" and ("default", 6) in l1
    rl = _routes(topo, "rl")
    right_subnets = {
        str(ipaddress.ip_interface(lk.a.ipv4).network)
        for lk in topo.links
        if lk.a.node in ("r1", "r2")
    }
    bottleneck = next(lk for lk in topo.links if lk.kind == "bottleneck")
    gw = str(ipaddress.ip_interface(bottleneck.b.ipv4).ip)
    assert {d for (d, f) in rl if f == 4} == right_subnets
    assert all(rl[(d, 4)] == gw for d in right_subnets)


def test_chain_routes_go_through_the_middle_router():
    topo = load_testbed(EXAMPLES / "chain.toml")
    hosts = topo.hosts()
    first, last = hosts[0].name, hosts[-1].name
    links = path_links(topo, first, last)
    assert [lk.kind for lk in links][0] == "access" and sum(lk.emulated for lk in links) >= 2
    routers = [n.name for n in topo.nodes if n.role == "router"]
    far = next(lk for lk in topo.links if last in (lk.a.node, lk.b.node))
    far_net = str(ipaddress.ip_interface(far.a.ipv4).network)
    assert (far_net, 4) in _routes(topo, routers[0])


def test_star_leaves_reach_each_other_through_the_hub():
    topo = load_testbed(EXAMPLES / "star.toml")
    hosts = topo.hosts()
    links = path_links(topo, hosts[0].name, hosts[-1].name)
    nodes = {lk.a.node for lk in links} | {lk.b.node for lk in links}
    assert "hub" in nodes


def test_plan_is_argv_lists_and_creates_namespaces_first():
    topo = load_testbed(None, {"pairs": 3, "access_rate": "100Mbit"})
    plan = build_plan(topo, Path("/tmp/x"))
    for step in plan.steps:
        argv = step.argv()
        assert isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)
    kinds = [type(s) for s in plan.steps]
    last_create = max(i for i, k in enumerate(kinds) if k is A.CreateNetns)
    assert last_create < kinds.index(A.AddVeth)
    assert kinds.index(A.AddVeth) < kinds.index(A.AddRoute) < kinds.index(A.StartEmulator)
    # one namespace per node and per emulated link
    assert len(plan.namespaces()) == len(topo.nodes) + 1
    shapers = [s for s in plan.steps if isinstance(s, A.ShapeEgress)]
    assert len(shapers) == 2 * 6 and all(s.rate_bps == 100_000_000 for s in shapers)
    by_node = plan.by_node()
    assert set(by_node) >= {"l1", "rl", "rr", "em-rl-rr"}


def test_no_shaping_for_unlimited_access():
    plan = build_plan(load_testbed(None, {"pairs": 1}), Path("/tmp/x"))
    assert not [s for s in plan.steps if isinstance(s, A.ShapeEgress)]


def test_emulator_config_matches_the_bottleneck():
    topo = load_testbed(None, {"rate": "100Mbit", "rtt": "40ms", "loss": "1%"})
    link = next(lk for lk in topo.links if lk.emulated)
    cfg = linkem.config_for(topo, link, Path("/tmp/logs"))
    assert cfg["interfaces"] == ["a0", "b0"]
    ab = cfg["directions"]["ab"]
    assert ab["rate_bps"] == 100_000_000 and ab["delay_us"] == 20_000
    assert ab["queue_bytes"] == 500_000
    assert ab["loss"]["model"] == "bernoulli" and abs(ab["loss"]["p"] - 0.01) < 1e-12
    assert cfg["pair_delays"] == []


def test_pair_delays_half_each_way_both_orders():
    topo = load_testbed(EXAMPLES / "dumbbell-rtt-mix.toml")
    link = next(lk for lk in topo.links if lk.emulated)
    entries = linkem.config_for(topo, link, Path("/tmp/logs"))["pair_delays"]
    for pd in topo.pair_delays:
        if pd.extra_rtt_us == 0:
            continue
        src = next(lk.a.ipv4 for lk in topo.links if lk.a.node == pd.src).split("/")[0]
        dst = next(lk.a.ipv4 for lk in topo.links if lk.a.node == pd.dst).split("/")[0]
        mine = {(e["src"], e["dst"]): e["extra_us"] for e in entries}
        assert mine[(src, dst)] == mine[(dst, src)] == pd.extra_rtt_us // 2


def test_socket_buffers_cover_the_bdp():
    topo = load_testbed(None, {"rate": "1Gbit", "rtt": "200ms"})
    assert path_bdp_bytes(topo) == 25_000_000
    assert socket_buffer_max(topo) == 50_000_000
    small = load_testbed(None, {"rate": "100Mbit", "rtt": "1ms"})
    assert socket_buffer_max(small) == 16 * 1024 * 1024


def test_tbf_burst_and_limit():
    burst, limit = tbf_params(1_000_000_000, 1500)
    assert burst == 125_000 and limit == 2_500_000
    burst, _ = tbf_params(10_000_000, 1500)
    assert burst == 2 * 1514  # at least two frames


def test_ack_every_segment_marks_the_hosts_only_and_leaves_other_hashes_alone():
    from itb.scenario.testbed.load import testbed_from_dict

    plain = load_testbed(None, {"pairs": 1})
    quick = testbed_from_dict({"testbed": {"ack_every_segment": True}, "dumbbell": {"pairs": 1}})
    assert quick.ack_every_segment and not plain.ack_every_segment
    assert quick.content_hash() != plain.content_hash()
    assert '"ack_every_segment"' not in plain.canonical_json()  # older testbeds hash as before
    routes = [s for s in build_plan(quick, Path("/tmp/logs")).steps if isinstance(s, A.AddRoute)]
    hosts = {n.name for n in quick.hosts()}
    assert routes and all(r.quickack == (r.node in hosts) for r in routes)
    argv = next(r for r in routes if r.node in hosts).argv()
    assert argv[-2:] == ["quickack", "1"]
    assert all(
        "quickack" not in s.argv()
        for s in build_plan(plain, Path("/tmp/logs")).steps
        if isinstance(s, A.AddRoute)
    )
    offload = [
        s
        for s in build_plan(quick, Path("/tmp/logs")).steps
        if isinstance(s, A.NoSegmentationOffload)
    ]
    assert {(s.node, s.ifname) for s in offload} == {("l1", "eth0"), ("r1", "eth0")}
    assert offload[0].argv()[-6:] == ["-K", "eth0", "tso", "off", "gso", "off"]
    assert not [
        s
        for s in build_plan(plain, Path("/tmp/logs")).steps
        if isinstance(s, A.NoSegmentationOffload)
    ]


def test_an_open_receive_window_sizes_the_hosts_first_window_only():
    from itb.emulation.plan import socket_buffer_max
    from itb.scenario.testbed.load import testbed_from_dict

    plain = load_testbed(None, {"pairs": 1})
    opened = testbed_from_dict({"testbed": {"open_receive_window": True}, "dumbbell": {"pairs": 1}})
    assert opened.open_receive_window and opened.content_hash() != plain.content_hash()
    assert '"open_receive_window"' not in plain.canonical_json()  # older testbeds hash as before
    steps = build_plan(opened, Path("/tmp/logs")).steps
    bufmax = socket_buffer_max(opened)
    rmem = {
        s.node: s.value for s in steps if isinstance(s, A.Sysctl) and s.key == "net.ipv4.tcp_rmem"
    }
    assert rmem and all(v == f"4096 {bufmax} {bufmax}" for v in rmem.values())
    hosts = {n.name for n in opened.hosts()}
    routes = [s for s in steps if isinstance(s, A.AddRoute)]
    assert all((r.initrwnd is not None) == (r.node in hosts) for r in routes)
    argv = next(r for r in routes if r.node in hosts).argv()
    assert argv[-2:] == ["initrwnd", str(-(-bufmax // 1448))]
    plain_steps = build_plan(plain, Path("/tmp/logs")).steps
    assert all("initrwnd" not in s.argv() for s in plain_steps if isinstance(s, A.AddRoute))
    assert {
        s.value for s in plain_steps if isinstance(s, A.Sysctl) and s.key == "net.ipv4.tcp_rmem"
    } == {f"4096 131072 {socket_buffer_max(plain)}"}


class _Sysctls:
    """A namespace's sysctl table behind the argv a Host runs: `refuse` keeps its value."""

    def __init__(self, refuse: str | None = None):
        self.values: dict[str, str] = {}
        self.refuse, self.calls = refuse, 0

    def __call__(self, argv, check=True):
        from types import SimpleNamespace

        self.calls += 1
        args = argv[argv.index("sysctl") + 2 :]
        if argv[argv.index("sysctl") + 1] == "-qw":
            for kv in args:
                k, v = kv.split("=", 1)
                if k != self.refuse:
                    self.values[k] = v
            return SimpleNamespace(stdout="")
        return SimpleNamespace(
            stdout="".join("\t".join(self.values.get(k, "0").split()) + "\n" for k in args)
        )


def test_a_namespaces_sysctls_are_one_write_and_one_read_back():
    steps = [
        A.Sysctl("l1", "ns-l1", "net.ipv4.tcp_rmem", "4096 131072 5000000"),
        A.Sysctl("l1", "ns-l1", "net.ipv4.tcp_wmem", "4096 16384 5000000"),
        A.Sysctl("l1", "ns-l1", "net.ipv4.tcp_no_metrics_save", "1"),
    ]
    run = _Sysctls()
    A.apply_sysctls(steps, run)
    assert run.calls == 2  # not 2 per key (6)
    assert run.values == {
        "net.ipv4.tcp_rmem": "4096 131072 5000000",
        "net.ipv4.tcp_wmem": "4096 16384 5000000",
        "net.ipv4.tcp_no_metrics_save": "1",
    }


def test_a_refused_sysctl_in_a_batch_is_named_by_setting_each_alone():
    import pytest

    steps = [
        A.Sysctl("l1", "ns-l1", "net.ipv4.tcp_rmem", "4096 131072 5000000"),
        A.Sysctl("l1", "ns-l1", "net.ipv4.tcp_slow_start_after_idle", "0"),
        A.Sysctl("l1", "ns-l1", "net.ipv4.tcp_no_metrics_save", "1"),
    ]
    run = _Sysctls(refuse="net.ipv4.tcp_no_metrics_save")
    with pytest.raises(
        RuntimeError, match=r"net.ipv4.tcp_no_metrics_save is '0' after setting '1'"
    ):
        A.apply_sysctls(steps, run)
    assert run.calls == 2 + 3 * 2  # the batch, then each key's write and read-back
