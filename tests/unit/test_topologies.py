"""Resolution of testbed files into the Topology the backend builds."""

import ipaddress
from pathlib import Path

import pytest

import itb.scenario as scenario
from itb.scenario import Loss, Topology, load_testbed

EXAMPLES = Path(__file__).resolve().parents[2] / "scenarios" / "examples"


def compile_(data: dict) -> Topology:
    return scenario.testbed_from_dict(data, "t.toml")


def link(topo: Topology, name: str):
    return next(ln for ln in topo.links if ln.name == name)


def check_invariants(topo: Topology) -> None:
    """What a generic backend relies on, for any topology."""
    kinds = {n.name: n.role for n in topo.nodes}
    assert len(kinds) == len(topo.nodes), "node names unique"
    for n in topo.nodes:
        assert len(n.name) <= 10
    for h in topo.hosts():
        access = [ln for ln in topo.links if h.name in (ln.a.node, ln.b.node)]
        assert len(access) == 1, f"{h.name} has exactly one link"
        (ln,) = access
        assert (
            ln.kind == "access"
            and not ln.emulated
            and ln.a.node == h.name
            and ln.a.ifname == "eth0"
        )
        assert kinds[ln.b.node] == "router"
        assert (
            ln.forward.delay_us == 0
            and ln.forward.loss == Loss()
            and ln.forward.queue_bytes is None
        )
    for ln in topo.links:
        assert ln.mtu == topo.mtu
        if ln.emulated:
            assert kinds[ln.a.node] == kinds[ln.b.node] == "router" and ln.kind in (
                "bottleneck",
                "core",
            )
    ifnames: dict[str, set] = {}
    addrs = set()
    for i, ln in enumerate(topo.links):
        for end, host_id in ((ln.a, 1), (ln.b, 2)):
            assert len(end.ifname) <= 15
            assert end.ifname not in ifnames.setdefault(end.node, set()), (
                "ifname unique in its node"
            )
            ifnames[end.node].add(end.ifname)
            for addr in (end.ipv4, end.ipv6):
                if addr is not None:
                    assert addr not in addrs
                    addrs.add(addr)
            if "ipv4" in topo.families:
                net = ipaddress.ip_interface(end.ipv4)
                assert net.network.prefixlen == 24 and int(net.ip) & 0xFF == host_id
                assert net.network.subnet_of(ipaddress.ip_network("198.18.0.0/15"))
            if "ipv6" in topo.families:
                net = ipaddress.ip_interface(end.ipv6)
                assert net.network == ipaddress.ip_network(f"2001:2:0:{i:x}::/64")
                assert int(net.ip) & 0xFFFF == host_id


# --- default dumbbell ----------------------------------------------------------------


def test_default_dumbbell_structure():
    t = load_testbed(None)
    check_invariants(t)
    assert (t.name, t.kind, t.families, t.mtu, t.source) == (
        "default",
        "dumbbell",
        ("ipv4", "ipv6"),
        1500,
        None,
    )
    assert [(n.name, n.role, n.side) for n in t.nodes] == [
        ("rl", "router", "left"),
        ("rr", "router", "right"),
        ("l1", "host", "left"),
        ("l2", "host", "left"),
        ("r1", "host", "right"),
        ("r2", "host", "right"),
    ]
    assert [ln.name for ln in t.links] == ["rl-rr", "l1-rl", "l2-rl", "r1-rr", "r2-rr"]
    assert t.pair_delays == ()


def test_default_dumbbell_bottleneck():
    b = link(load_testbed(None), "rl-rr")
    assert (b.kind, b.emulated) == ("bottleneck", True)
    assert (b.a.node, b.a.ifname, b.b.node, b.b.ifname) == ("rl", "to-rr", "rr", "to-rl")
    for d in (b.forward, b.reverse):
        assert d.rate_bps == 1_000_000_000
        assert d.delay_us == 10_000  # 20 ms RTT, half per direction
        assert d.loss == Loss()
        assert (d.queue_bytes, d.queue_packets) == (2_500_000, None)  # 1 Gbit/s × 20 ms


def test_default_dumbbell_addresses():
    t = load_testbed(None)
    assert (link(t, "rl-rr").a.ipv4, link(t, "rl-rr").b.ipv4) == ("198.18.0.1/24", "198.18.0.2/24")
    assert (link(t, "rl-rr").a.ipv6, link(t, "rl-rr").b.ipv6) == ("2001:2::1/64", "2001:2::2/64")
    l1 = link(t, "l1-rl")
    assert (l1.a.node, l1.a.ifname, l1.a.ipv4, l1.a.ipv6) == (
        "l1",
        "eth0",
        "198.18.1.1/24",
        "2001:2:0:1::1/64",
    )
    assert (l1.b.node, l1.b.ifname, l1.b.ipv4, l1.b.ipv6) == (
        "rl",
        "h-l1",
        "198.18.1.2/24",
        "2001:2:0:1::2/64",
    )
    r2 = link(t, "r2-rr")
    assert (r2.a.ipv4, r2.b.ipv4, r2.b.ifname) == ("198.18.4.1/24", "198.18.4.2/24", "h-r2")


def test_default_access_rate_is_unlimited():
    t = compile_({"bottleneck": {"rate": "100Mbit"}})
    assert link(t, "l1-rl").forward.rate_bps is None and link(t, "l1-rl").reverse.rate_bps is None
    t = compile_({"bottleneck": {"rate": "100Mbit"}, "dumbbell": {"access_rate": "50Mbit"}})
    assert link(t, "l1-rl").forward.rate_bps == link(t, "r1-rr").reverse.rate_bps == 50_000_000
    t = compile_({"bottleneck": {"rate": "unlimited"}})
    assert link(t, "l1-rl").forward.rate_bps is None
    assert link(t, "rl-rr").forward.queue_bytes is None  # a BDP of an unlimited link: no limit


def test_empty_file_is_the_default(tmp_path):
    path = tmp_path / "empty.toml"
    path.write_text("")
    t = load_testbed(path)
    assert t.source == str(path)
    assert t.content_hash() == load_testbed(None).content_hash()


def test_ipv4_only():
    t = compile_({"testbed": {"families": ["ipv4"]}})
    assert t.families == ("ipv4",)
    assert all(ln.a.ipv6 is None and ln.b.ipv6 is None and ln.a.ipv4 for ln in t.links)
    t = compile_({"testbed": {"families": ["ipv6", "ipv4"]}})
    assert t.families == ("ipv4", "ipv6")  # canonical order


def test_asymmetric_link():
    t = compile_(
        {
            "bottleneck": {
                "rate": "100Mbit",
                "rate_reverse": "10Mbit",
                "delay_forward": "10ms",
                "delay_reverse": "30ms",
                "loss": "1%",
                "loss_reverse": {"model": "gilbert-elliott", "p": 0.01, "r": 0.3},
                "buffer": "1bdp",
                "buffer_reverse": "50pkt",
            }
        }
    )
    b = link(t, "rl-rr")
    assert (b.forward.rate_bps, b.reverse.rate_bps) == (100_000_000, 10_000_000)
    assert (b.forward.delay_us, b.reverse.delay_us) == (10_000, 30_000)
    assert b.forward.loss == Loss(model="bernoulli", p=0.01)
    assert b.reverse.loss == Loss(
        model="gilbert_elliott", p=0.01, r=0.3, loss_bad=1.0, loss_good=0.0
    )
    assert (b.forward.queue_bytes, b.reverse.queue_packets) == (500_000, 50)  # 100 Mbit/s × 40 ms


def test_reverse_buffer_uses_reverse_rate():
    b = link(
        compile_({"bottleneck": {"rate": "1Gbit", "rate_reverse": "100Mbit", "rtt": "20ms"}}),
        "rl-rr",
    )
    assert (b.forward.queue_bytes, b.reverse.queue_bytes) == (2_500_000, 250_000)


def test_odd_rtt_split():
    b = link(compile_({"bottleneck": {"rtt": "25001us"}}), "rl-rr")
    assert (b.forward.delay_us, b.reverse.delay_us) == (12_500, 12_501)


def test_jumbo_mtu_on_all_links():
    t = compile_({"testbed": {"mtu": 9000}})
    assert {ln.mtu for ln in t.links} == {9000}


def test_many_pairs_addresses():
    t = compile_({"dumbbell": {"pairs": 100}})
    check_invariants(t)
    assert len(t.hosts()) == 200 and len(t.links) == 201
    assert link(t, "r100-rr").a.ipv4 == "198.18.200.1/24"
    assert link(t, "r100-rr").a.ipv6 == "2001:2:0:c8::1/64"


def test_addresses_past_256_links():
    hosts = [f"h{i}" for i in range(300)]
    t = compile_(
        {
            "testbed": {"topology": "star"},
            "star": {"spoke": [{"hosts": hosts[:150]}, {"hosts": hosts[150:]}]},
        }
    )
    check_invariants(t)
    assert t.links[256].a.ipv4 == "198.19.0.1/24"
    assert t.links[301].b.ipv4 == "198.19.45.2/24"
    assert t.links[301].b.ipv6 == "2001:2:0:12d::2/64"


# --- overrides -----------------------------------------------------------------------


def test_overrides():
    t = load_testbed(
        None, {"pairs": 3, "rate": "100Mbit", "rtt": "50ms", "loss": "0.5%", "mtu": 9000}
    )
    b = link(t, "rl-rr")
    assert len(t.hosts()) == 6
    assert b.forward.rate_bps == 100_000_000 and b.forward.delay_us == 25_000
    assert b.forward.queue_bytes == 625_000  # 100 Mbit/s × 50 ms
    assert b.forward.loss == b.reverse.loss == Loss(model="bernoulli", p=0.005)
    assert t.mtu == 9000
    assert link(t, "l3-rl").forward.rate_bps is None  # access unlimited by default


def test_overrides_as_strings_and_none():
    t = load_testbed(
        None,
        {"pairs": "4", "mtu": "9000", "buffer": "100pkt", "access_rate": "10Gbit", "rate": None},
    )
    assert len(t.hosts()) == 8 and t.mtu == 9000
    assert link(t, "rl-rr").forward.queue_packets == 100
    assert link(t, "rl-rr").forward.rate_bps == 1_000_000_000  # None: not given
    assert link(t, "l1-rl").forward.rate_bps == 10_000_000_000


def test_rtt_override_replaces_asymmetric_delays():
    t = load_testbed(EXAMPLES / "dumbbell-ge-loss.toml", {"rtt": "100ms"})
    b = link(t, "rl-rr")
    assert (b.forward.delay_us, b.reverse.delay_us) == (50_000, 50_000)
    assert b.forward.loss.model == "gilbert_elliott"  # the rest of the file stays


def test_override_does_not_touch_file_data(tmp_path):
    path = tmp_path / "d.toml"
    path.write_text('[bottleneck]\nrate = "100Mbit"\n')
    assert link(load_testbed(path, {"rate": "1Gbit"}), "rl-rr").forward.rate_bps == 1_000_000_000
    assert link(load_testbed(path), "rl-rr").forward.rate_bps == 100_000_000


def test_mtu_override_on_chain():
    t = load_testbed(EXAMPLES / "chain.toml", {"mtu": 9000})
    assert t.mtu == 9000


# --- pair RTTs -----------------------------------------------------------------------


def pair_rtt(pairs: int, **spec) -> Topology:
    return compile_({"dumbbell": {"pairs": pairs}, "bottleneck": {"rtt": "20ms"}, "pair_rtt": spec})


@pytest.mark.parametrize(
    "spec",
    [
        {"distribution": "exponential", "mean": "50ms"},
        {"distribution": "poisson", "mean": "50ms"},
        {"distribution": "poisson", "mean": "5s"},  # chunked sampler, large λ
        {"distribution": "multimodal", "modes": ["20ms", "100ms", "200ms"], "weights": [1, 2, 3]},
    ],
)
def test_pair_rtt_deterministic_by_seed(spec):
    a = pair_rtt(8, seed=7, **spec).pair_delays
    b = pair_rtt(8, seed=7, **spec).pair_delays
    c = pair_rtt(8, seed=8, **spec).pair_delays
    assert a == b
    assert a != c
    assert [(p.src, p.dst) for p in a] == [(f"l{k}", f"r{k}") for k in range(1, 9)]
    assert all(p.extra_rtt_us >= 0 for p in a)


def test_pair_rtt_fixed():
    t = pair_rtt(3, distribution="fixed", values=["20ms", "120ms", "10ms"])
    # total minus the 20 ms base; below the base clamps to 0
    assert [p.extra_rtt_us for p in t.pair_delays] == [0, 100_000, 0]


def test_pair_rtt_multimodal_proportions():
    t = pair_rtt(10, distribution="multimodal", modes=["20ms", "220ms"], weights=[3, 7], seed=3)
    extras = sorted(p.extra_rtt_us for p in t.pair_delays)
    assert extras == [0] * 3 + [200_000] * 7
    t = pair_rtt(2, distribution="multimodal", modes=["20ms", "200ms"])  # equal weights: one each
    assert sorted(p.extra_rtt_us for p in t.pair_delays) == [0, 180_000]


def test_pair_rtt_poisson_whole_ms():
    t = pair_rtt(20, distribution="poisson", mean="50ms", seed=1)
    totals = [p.extra_rtt_us + 20_000 for p in t.pair_delays if p.extra_rtt_us > 0]
    assert totals and all(x % 1000 == 0 for x in totals)
    mean_ms = sum(p.extra_rtt_us for p in t.pair_delays) / 20 / 1000 + 20
    assert 40 < mean_ms < 60


def test_pair_rtt_exponential_capped_at_10s():
    t = pair_rtt(50, distribution="exponential", mean="9s", seed=2)
    assert max(p.extra_rtt_us for p in t.pair_delays) <= 10_000_000 - 20_000


def test_pair_rtt_example():
    t = load_testbed(EXAMPLES / "dumbbell-rtt-mix.toml")
    assert sorted(p.extra_rtt_us for p in t.pair_delays) == [0, 0, 180_000, 180_000]
    assert link(t, "rl-rr").forward.queue_bytes == 250_000  # BDP of the base RTT


# --- chain and star ------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.name)
def test_examples_load(path):
    t = load_testbed(path)
    check_invariants(t)
    assert t.source == str(path)
    assert t.content_hash() == load_testbed(path).content_hash()


def test_chain_example():
    t = load_testbed(EXAMPLES / "chain.toml")
    assert t.kind == "chain"
    assert [(n.name, n.side) for n in t.nodes if n.role == "router"] == [
        ("c0", "left"),
        ("c1", "core"),
        ("c2", "right"),
    ]
    sides = {n.name: n.side for n in t.hosts()}
    assert sides == {
        "src": "left",
        "x1src": "left",
        "x1dst": "core",
        "x2src": "core",
        "x2dst": "right",
        "dst": "right",
    }
    hops = [ln for ln in t.links if ln.emulated]
    assert [(ln.name, ln.kind, ln.a.node, ln.b.node) for ln in hops] == [
        ("c0-c1", "core", "c0", "c1"),
        ("c1-c2", "core", "c1", "c2"),
    ]
    assert hops[0].forward.queue_bytes == 125_000  # 100 Mbit/s × 10 ms
    assert hops[1].forward.queue_packets == 200
    assert hops[1].forward.loss == Loss(model="bernoulli", p=0.001)
    c1 = [ln.b.ifname for ln in t.links if ln.b.node == "c1"] + [
        ln.a.ifname for ln in t.links if ln.a.node == "c1"
    ]
    assert sorted(c1) == ["h-x1dst", "h-x2src", "to-c0", "to-c2"]


def test_chain_defaults():
    t = compile_(
        {
            "testbed": {"topology": "chain"},
            "chain": {"host": [{"name": "a", "router": 0}, {"name": "b", "router": 2}]},
        }
    )
    assert [n.name for n in t.nodes] == ["c0", "c1", "c2", "a", "b"]  # 3 routers by default
    assert all(ln.forward.delay_us == 10_000 for ln in t.links if ln.emulated)
    assert link(t, "a-c0").forward.rate_bps is None  # access unlimited by default


def test_chain_access_rate_precedence():
    t = compile_(
        {
            "testbed": {"topology": "chain"},
            "chain": {
                "routers": 2,
                "access_rate": "100Mbit",
                "link": [{"rate": "50Mbit"}],
                "host": [
                    {"name": "a", "router": 0, "access_rate": "unlimited"},
                    {"name": "b", "router": 1},
                ],
            },
        }
    )
    assert link(t, "a-c0").forward.rate_bps is None
    assert link(t, "b-c1").forward.rate_bps == 100_000_000


def test_star_example():
    t = load_testbed(EXAMPLES / "star.toml")
    assert t.kind == "star"
    assert [(n.name, n.side) for n in t.nodes if n.role == "router"] == [
        ("hub", "core"),
        ("s1", "left"),
        ("s2", "right"),
        ("far", "right"),
    ]
    spokes = [ln for ln in t.links if ln.emulated]
    # forward is left to right: out of the left leaf, into the right leaves
    assert [(ln.a.node, ln.b.node) for ln in spokes] == [
        ("s1", "hub"),
        ("hub", "s2"),
        ("hub", "far"),
    ]
    far = spokes[2]
    assert (far.forward.delay_us, far.reverse.delay_us) == (60_000, 80_000)
    assert far.forward.queue_bytes == 1_000_000
    sides = {n.name: n.side for n in t.hosts()}
    assert sides == {"a1": "left", "a2": "left", "b1": "right", "c1": "right", "c2": "right"}


def test_star_side_override_and_access_default():
    t = compile_(
        {
            "testbed": {"topology": "star"},
            "star": {
                "spoke": [
                    {"hosts": ["a"], "rate": "100Mbit"},
                    {"hosts": ["b"], "side": "left", "rate": "200Mbit", "access_rate": "50Mbit"},
                    {"hosts": ["c"], "rate": "300Mbit"},
                ]
            },
        }
    )
    assert t.node("b").side == "left" and t.node("s2").side == "left"
    assert link(t, "s2-hub").a.node == "s2"
    assert link(t, "a-s1").forward.rate_bps is None  # access unlimited by default
    assert link(t, "b-s2").forward.rate_bps == 50_000_000


# --- content hash --------------------------------------------------------------------


def test_hash_ignores_source(tmp_path):
    text = (EXAMPLES / "dumbbell.toml").read_text()
    (tmp_path / "a.toml").write_text(text)
    (tmp_path / "b.toml").write_text(text)
    a, b = load_testbed(tmp_path / "a.toml"), load_testbed(tmp_path / "b.toml")
    assert a.source != b.source
    assert a.content_hash() == b.content_hash()
    assert a.content_hash() == load_testbed(EXAMPLES / "dumbbell.toml").content_hash()


def test_hash_ignores_spelling():
    # the same network written differently hashes alike
    a = compile_({"bottleneck": {"rate": "1Gbit", "rtt": "20ms", "buffer": "1bdp", "loss": "0%"}})
    b = compile_(
        {
            "bottleneck": {
                "rate": "1000Mbps",
                "delay_forward": "10ms",
                "delay_reverse": "10000us",
                "buffer": "2.5MB",
            }
        }
    )
    c = compile_({"testbed": {"families": ["ipv6", "ipv4"], "description": "same net"}})
    assert (
        a.content_hash()
        == b.content_hash()
        == c.content_hash()
        == load_testbed(None).content_hash()
    )


@pytest.mark.parametrize(
    "change",
    [
        {"testbed": {"name": "other"}},
        {"testbed": {"families": ["ipv4"]}},
        {"testbed": {"mtu": 9000}},
        {"dumbbell": {"pairs": 3}},
        {"dumbbell": {"access_rate": "10Gbit"}},
        {"bottleneck": {"rate": "999Mbit"}},
        {"bottleneck": {"rate_reverse": "100Mbit"}},
        {"bottleneck": {"rtt": "21ms"}},
        {"bottleneck": {"delay_forward": "9ms", "delay_reverse": "11ms"}},
        {"bottleneck": {"loss": "0.1%"}},
        {"bottleneck": {"loss_reverse": "0.1%"}},
        {"bottleneck": {"buffer": "2MB"}},
        {"bottleneck": {"buffer": "1667pkt"}},
        {"pair_rtt": {"distribution": "fixed", "values": ["20ms", "30ms"]}},
        {"pair_rtt": {"distribution": "exponential", "mean": "50ms", "seed": 2}},
    ],
)
def test_hash_changes_with_any_parameter(change):
    base = load_testbed(None).content_hash()
    assert compile_(change).content_hash() != base


def test_pair_rtt_seed_changes_hash():
    a = compile_({"pair_rtt": {"distribution": "exponential", "mean": "50ms", "seed": 1}})
    b = compile_({"pair_rtt": {"distribution": "exponential", "mean": "50ms", "seed": 2}})
    assert a.content_hash() != b.content_hash()


def test_default_buffer_has_a_floor_explicit_one_does_not():
    t = compile_({"bottleneck": {"rate": "10Mbit", "rtt": "0ms"}})
    assert link(t, "rl-rr").forward.queue_bytes == 64 * 1514  # the default: one BDP, floored
    t = compile_({"bottleneck": {"rate": "1Gbit", "rtt": "20ms"}})
    assert link(t, "rl-rr").forward.queue_bytes == 2_500_000  # above the floor: one BDP
