"""The lab's two inventories describe the same hosts: the plain one, and the one that
goes through EnOSlib's static provider (its machines mapped as ITB maps what EnOSlib
returns)."""

from __future__ import annotations

import tomllib

from itb.backends.ssh import enos, inventory, labhosts


def _both(tmp_path, emulator=True):
    hosts = labhosts.hosts_for(4, "198.19.3", emulator)
    (tmp_path / "inventory.toml").write_text(labhosts.inventory(tmp_path, hosts))
    (tmp_path / "enoslib-static.toml").write_text(labhosts.static_provider(tmp_path, hosts))
    return (
        hosts,
        inventory.load(tmp_path / "inventory.toml"),
        tomllib.loads((tmp_path / "enoslib-static.toml").read_text()),
    )


def test_the_static_provider_lists_the_same_hosts(tmp_path):
    hosts, plain, static = _both(tmp_path)
    assert [h.role for h in plain.host] == ["emulator", "left", "left", "right", "right"]
    assert plain.get("h1").address == "198.19.3.6" and plain.get("h1").data_addr == "198.19.0.1/24"
    assert plain.get("em").emulator_ifaces == ("ea", "eb")
    machines = static["provider"]["config"]["resources"]["machines"]
    entries = [
        {
            "name": m["alias"],
            "address": m["address"],
            "port": m["port"],
            "user": m["user"],
            "key": m["keyfile"],
            "roles": m["roles"],
            "extra": m["extra"],
        }
        for m in machines
    ]
    mapped = inventory.from_dict({"ssh": static["ssh"], "host": [enos.to_host(e) for e in entries]})
    strip = {"key", "user"}  # the plain inventory gives them once, in [ssh]
    assert [h.model_dump(exclude=strip) for h in mapped.host] == [
        h.model_dump(exclude=strip) for h in plain.host
    ]


def test_without_emulator_there_is_no_emulator_host(tmp_path):
    hosts, plain, _ = _both(tmp_path, emulator=False)
    assert plain.emulator() is None and len(plain.host) == 4
    assert [h.control_ip for h in hosts] == [
        "198.19.3.6",
        "198.19.3.10",
        "198.19.3.14",
        "198.19.3.18",
    ]


def test_a_chain_lab_deals_its_hosts_over_four_segments_joined_by_three_wires(tmp_path):
    hosts = labhosts.hosts_for(8, "198.19.3", True, "chain", 3, 2)
    (tmp_path / "inventory.toml").write_text(labhosts.inventory(tmp_path, hosts))
    inv = inventory.load(tmp_path / "inventory.toml")
    # two emulator hosts share the wires in turn: em1 the 1st and 3rd, em2 the 2nd
    assert [(h, w.ifaces, w.between) for h, w in inv.all_wires()] == [
        ("em1", ("a1", "b1"), ("s0", "s1")),
        ("em1", ("a3", "b3"), ("s2", "s3")),
        ("em2", ("a2", "b2"), ("s1", "s2")),
    ]
    ends = [h for h in inv.host if h.role == "host"]
    assert [(h.name, h.seg) for h in ends] == [(f"h{i}", f"s{(i - 1) % 4}") for i in range(1, 9)]
    # control /30s: emulator hosts 0 and 1, h1 … h8 from 2 on; data addresses .1 … .8
    assert inv.get("em2").address == "198.19.3.6" and inv.get("h1").address == "198.19.3.10"
    assert inv.get("h8").data_addr == "198.19.0.8/24"


def test_a_star_lab_joins_three_leaves_to_a_hub_without_hosts(tmp_path):
    hosts = labhosts.hosts_for(6, "198.19.3", True, "star", 3, 1)
    (tmp_path / "inventory.toml").write_text(labhosts.inventory(tmp_path, hosts))
    (tmp_path / "enoslib-static.toml").write_text(labhosts.static_provider(tmp_path, hosts))
    inv = inventory.load(tmp_path / "inventory.toml")
    assert [w.between for _h, w in inv.all_wires()] == [("b1", "hub"), ("hub", "b2"), ("hub", "b3")]
    assert sorted({h.seg for h in inv.host if h.role == "host"}) == ["b1", "b2", "b3"]
    # the EnOSlib static provider carries the same segments and wires
    static = tomllib.loads((tmp_path / "enoslib-static.toml").read_text())
    machines = static["provider"]["config"]["resources"]["machines"]
    em = next(m for m in machines if m["alias"] == "em")
    assert [w["between"] for w in em["extra"]["wire"]] == [
        ["b1", "hub"],
        ["hub", "b2"],
        ["hub", "b3"],
    ]
    assert next(m for m in machines if m["alias"] == "h2")["extra"]["segment"] == "b2"
