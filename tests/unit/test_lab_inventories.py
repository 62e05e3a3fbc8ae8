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
