"""SSH backend: an inventory's L2 segments and wires, and a chain's or a star's routers,
links and hosts placed on them."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from itb.backends.ssh.inventory import from_dict
from itb.backends.ssh.placement import place
from itb.errors import ScenarioError
from itb.scenario import load_testbed

ROOT = Path(__file__).resolve().parents[2]
SRC = "/lab/inventory.toml"


def host(name: str, segment: str, n: int) -> dict:
    return {
        "name": name,
        "address": f"192.0.2.{n}",
        "role": "host",
        "segment": segment,
        "data_iface": "eth1",
        "data_addr": f"10.0.0.{n}/24",
    }


def emulator(name: str, n: int, *wires: tuple) -> dict:
    """wires: (ifaces, between[, link])"""
    ws = []
    for w in wires:
        d = {"ifaces": list(w[0]), "between": list(w[1])}
        if len(w) > 2:
            d["link"] = w[2]
        ws.append(d)
    return {"name": name, "address": f"192.0.2.{n}", "role": "emulator", "wire": ws}


def inv(*hosts: dict):
    return from_dict({"host": list(hosts)}, SRC)


def chain_lab(wires=None, hosts_per_segment=2):
    """Segments s0 - s1 - s2 - s3 joined by three wires of one emulator host."""
    wires = wires or [
        (("a1", "b1"), ("s0", "s1")),
        (("a2", "b2"), ("s1", "s2")),
        (("a3", "b3"), ("s2", "s3")),
    ]
    ends = [
        host(f"h{4 * s + k}", f"s{s}", 10 + 4 * s + k)
        for s in range(4)
        for k in range(hosts_per_segment)
    ]
    return inv(emulator("em", 2, *wires), *ends)


def chain(routers: int = 4):
    """c0 - c1 - c2 - c3, two hosts on each router."""
    hosts = "".join(
        f'\n[[chain.host]]\nname = "n{r}{k}"\nrouter = {r}\n'
        for r in range(routers)
        for k in range(2)
    )
    text = f'[testbed]\nname = "c"\ntopology = "chain"\n[chain]\nrouters = {routers}\n{hosts}'
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / f"chain-{routers}.toml"
        p.write_text(text)
        return load_testbed(p, {})


def test_a_chain_of_three_links_runs_on_three_wires_with_its_routers_on_their_segments():
    p = place(chain(), chain_lab())
    assert [(w.link.name, w.host, w.ifaces, w.segments) for w in p.wires] == [
        ("c0-c1", "em", ("a1", "b1"), ("s0", "s1")),
        ("c1-c2", "em", ("a2", "b2"), ("s1", "s2")),
        ("c2-c3", "em", ("a3", "b3"), ("s2", "s3")),
    ]
    # router r's hosts n{r}0, n{r}1 on segment s{r}'s hosts h{4r}, h{4r+1}
    assert p.hosts == {f"n{r}{k}": f"h{4 * r + k}" for r in range(4) for k in range(2)}
    assert p.emulators == {"c0-c1": "em", "c1-c2": "em", "c2-c3": "em"}


def test_a_wire_written_the_other_way_round_is_turned_so_that_ab_runs_along_the_link():
    wires = [
        (("a1", "b1"), ("s0", "s1")),
        (("b2", "a2"), ("s2", "s1")),  # written s2 → s1
        (("a3", "b3"), ("s2", "s3")),
    ]
    p = place(chain(), chain_lab(wires))
    assert p.wires[1].ifaces == ("a2", "b2") and p.wires[1].segments == ("s1", "s2")


def test_wires_named_by_link_may_come_in_any_order_and_on_several_emulator_hosts():
    ends = [host(f"h{s}", f"s{s}", 10 + s) for s in range(4)]
    i = inv(
        emulator("em1", 2, (("x", "y"), ("s2", "s3"), "c2-c3")),
        emulator("em2", 3, (("x", "y"), ("s1", "s2"), "c1-c2"), (("p", "q"), ("s0", "s1"))),
        *ends,
    )
    c = chain(4)
    with pytest.raises(ScenarioError):  # two hosts per router, one per segment here
        place(c, i)
    p = place(c, i, only={"n00", "n10", "n20", "n30"})
    assert {w.link.name: w.host for w in p.wires} == {
        "c0-c1": "em2",
        "c1-c2": "em2",
        "c2-c3": "em1",
    }
    assert p.hosts == {"n00": "h0", "n10": "h1", "n20": "h2", "n30": "h3"}


def test_a_star_of_three_branches_puts_its_hub_on_the_segment_every_wire_meets():
    topo = load_testbed(ROOT / "scenarios" / "examples" / "star.toml", {})
    ends = [
        host(n, seg, 10 + k)
        for k, (n, seg) in enumerate(
            [("h1", "b1"), ("h2", "b1"), ("h3", "b2"), ("h4", "b3"), ("h5", "b3")]
        )
    ]
    i = inv(
        emulator(
            "em",
            2,
            (("a1", "h1"), ("b1", "hub")),
            (("a2", "h2"), ("hub", "b2")),
            (("a3", "h3"), ("b3", "hub")),  # the far spoke's wire written leaf first
        ),
        *ends,
    )
    p = place(topo, i)
    by_link = {w.link.name: w for w in p.wires}
    assert {w.segments[0] if w.link.a.node == "hub" else w.segments[1] for w in p.wires} == {"hub"}
    assert by_link["hub-far"].ifaces == ("h3", "a3")  # turned: hub → far
    assert p.hosts == {"a1": "h1", "a2": "h2", "b1": "h3", "c1": "h4", "c2": "h5"}


def test_more_emulated_links_than_wires_is_refused_naming_the_links():
    with pytest.raises(ScenarioError) as e:
        place(chain(5), chain_lab())
    assert "emulates 4 links (c0-c1, c1-c2, c2-c3, c3-c4)" in e.value.reason
    assert "3 wire(s)" in e.value.reason and e.value.exit_code == 2


def test_a_wire_naming_a_link_the_scenario_lacks_is_refused():
    wires = [(("a1", "b1"), ("s0", "s1"), "c0-c9"), (("a2", "b2"), ("s1", "s2"))]
    wires.append((("a3", "b3"), ("s2", "s3")))
    with pytest.raises(ScenarioError) as e:
        place(chain(), chain_lab(wires))
    assert "no emulated link 'c0-c9'" in e.value.reason and "c0-c1, c1-c2, c2-c3" in e.value.reason


def test_a_chain_finds_its_row_of_segments_in_any_order_of_wires_and_hosts():
    # s1 - s0 - s2 - s3: the chain's routers c0 … c3 take s1, s0, s2, s3
    wires = [
        (("a1", "b1"), ("s0", "s1")),
        (("a2", "b2"), ("s0", "s2")),
        (("a3", "b3"), ("s2", "s3")),
    ]
    p = place(chain(), chain_lab(wires))
    assert [w.segments for w in p.wires] == [("s1", "s0"), ("s0", "s2"), ("s2", "s3")]
    assert p.wires[0].ifaces == ("b1", "a1")  # turned: c0 on s1 faces b1
    assert p.hosts["n00"] == "h4" and p.hosts["n10"] == "h0"  # c0's hosts on s1's


def test_a_chain_that_does_not_fit_a_star_of_wires_is_refused_saying_why():
    # three wires meeting at s0: no row of four segments for c0 … c3
    wires = [
        (("a1", "b1"), ("s0", "s1")),
        (("a2", "b2"), ("s0", "s2")),
        (("a3", "b3"), ("s0", "s3")),
    ]
    with pytest.raises(ScenarioError) as e:
        place(chain(), chain_lab(wires))
    assert "emulated links (c0–c1, c1–c2, c2–c3) cannot be laid" in e.value.reason
    assert "em: s0–s1; em: s0–s2; em: s0–s3" in e.value.reason and e.value.exit_code == 2


@pytest.mark.parametrize(
    "wires, field, words",
    [
        (  # s0-s1, s1-s2, s2-s0: a loop
            [
                (("a1", "b1"), ("s0", "s1")),
                (("a2", "b2"), ("s1", "s2")),
                (("a3", "b3"), ("s2", "s0")),
            ],
            "host 'em'.wire[2].between",
            "L2 loop",
        ),
        (  # s3 on no wire
            [(("a1", "b1"), ("s0", "s1")), (("a2", "b2"), ("s1", "s2"))],
            "host 'h12'.segment",
            "segment 's3' is on no wire",
        ),
        (  # one interface on two wires
            [
                (("a1", "b1"), ("s0", "s1")),
                (("b1", "b2"), ("s1", "s2")),
                (("a3", "b3"), ("s2", "s3")),
            ],
            "host 'em'.wire[1].ifaces",
            "b1 is also wire 0's",
        ),
        (  # two separate networks
            [(("a1", "b1"), ("s0", "s1")), (("a3", "b3"), ("s2", "s3"))],
            "host",
            "2 separate networks (s0, s1; s2, s3)",
        ),
    ],
)
def test_inventories_whose_wires_do_not_make_one_tree_are_refused(wires, field, words):
    ends = [host(f"h{4 * s}", f"s{s}", 10 + s) for s in range(4)]
    with pytest.raises(ScenarioError) as e:
        inv(emulator("em", 2, *wires), *ends)
    assert e.value.field == field and words in e.value.reason, e.value


@pytest.mark.parametrize(
    "extra, field, words",
    [
        ({"role": "host", "segment": None}, "segment", 'a "host" names its L2 segment'),
        ({"wire": [{"ifaces": ["x", "y"]}]}, "wire", "only an emulator host has wires"),
    ],
)
def test_fields_that_do_not_belong_to_a_role_are_refused(extra, field, words):
    h = host("h0", "s0", 10) | extra
    if h.get("segment") is None:
        h.pop("segment")
    with pytest.raises(ScenarioError) as e:
        inv(emulator("em", 2, (("a", "b"), ("s0", "s1"))), h, host("h1", "s1", 11))
    assert e.value.field == f"host 'h0'.{field}" and words in e.value.reason


def test_a_lab_chain_with_its_wires_dealt_over_two_emulator_hosts_places_the_shipped_scenario(
    tmp_path,
):
    from itb.backends.ssh import inventory, labhosts
    from itb.scenario.scenario import load_scenario

    hosts = labhosts.hosts_for(4, "198.19.3", True, "chain", 3, 2)
    (tmp_path / "inventory.toml").write_text(labhosts.inventory(tmp_path, hosts))
    i = inventory.load(tmp_path / "inventory.toml")  # em1: s0–s1, s2–s3; em2: s1–s2
    topo = load_scenario(ROOT / "scenarios" / "examples" / "chain-transfers.toml").topology
    p = place(topo, i)
    assert [(w.link.name, w.host, w.segments) for w in p.wires] == [
        ("c0-c1", "em1", ("s0", "s1")),
        ("c1-c2", "em2", ("s1", "s2")),
        ("c2-c3", "em1", ("s2", "s3")),
    ]
    assert p.hosts == {"src": "h1", "x1": "h2", "x2": "h3", "dst": "h4"}
