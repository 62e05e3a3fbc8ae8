"""Reservation through EnOSlib without a testbed: the helper's calls into EnOSlib (a fake
enoslib module records them), the mapping of its hosts to ITB's inventory, release on
failure and on interruption, and the shipped Grid'5000 example against EnOSlib's real
schema (in EnOSlib's own environment, when built)."""

from __future__ import annotations

import ipaddress
import json
import sys
import types
from pathlib import Path

import pytest

from itb.backends.ssh import enos, enos_helper, inventory
from itb.errors import BackendError, ScenarioError

REPO = Path(__file__).resolve().parents[2]
G5K_EXAMPLE = REPO / "docs" / "examples" / "g5k-inventory.toml"


class FakeAddress:
    def __init__(self, iface: str, cidr: str, net: str):
        self.interface, self.ip, self.net = iface, ipaddress.ip_interface(cidr), net


class FakeHost:
    def __init__(self, alias, address, extra=None, addresses=()):
        self.alias, self.address, self.port = alias, address, 22
        self.user, self.keyfile, self.extra = "root", None, extra or {}
        self.addresses = list(addresses)

    def filter_addresses(self, networks):
        names = {n for n in networks}
        return [a for a in self.addresses if a.net in names]


@pytest.fixture
def fake_enoslib(monkeypatch):
    calls = []
    hosts = {
        "left": [
            FakeHost("n1", "10.0.0.1", addresses=[FakeAddress("eth1", "192.168.1.1/24", "L")])
        ],
        "right": [
            FakeHost("n2", "10.0.0.2", addresses=[FakeAddress("eth1", "192.168.2.1/24", "R")])
        ],
        "emulator": [
            FakeHost(
                "n3",
                "10.0.0.3",
                addresses=[
                    FakeAddress("eth1", "192.168.1.254/24", "L"),
                    FakeAddress("eth2", "192.168.2.254/24", "R"),
                ],
            )
        ],
        "control": [FakeHost("n1", "10.0.0.1")],
    }
    networks = {"data_left": ["L"], "data_right": ["R"]}

    class Provider:
        def __init__(self, conf):
            calls.append(("provider", type(self).__name__, conf))

        def init(self):
            calls.append(("init",))
            return hosts, networks

        def destroy(self, wait=False):
            calls.append(("destroy",))

    def conf_class(name):
        return type(
            name,
            (),
            {
                "from_dictionary": classmethod(
                    lambda cls, d: calls.append(("conf", name, d)) or {"conf": name}
                )
            },
        )

    mod = types.ModuleType("enoslib")
    for name in ("Static", "G5k", "CBM", "Vagrant"):
        setattr(mod, name, type(name, (Provider,), {}))
    for name in ("StaticConf", "G5kConf", "CBMConf", "VagrantConf"):
        setattr(mod, name, conf_class(name))
    mod.sync_info = lambda roles, nets: calls.append(("sync_info", sorted(nets))) or roles
    monkeypatch.setitem(sys.modules, "enoslib", mod)
    return calls


def test_g5k_reservation_calls_enoslib_and_finds_the_data_plane(fake_enoslib):
    config = {
        "job_name": "itb",
        "resources": {"machines": [], "networks": []},
        "data_networks": ["data_left", "data_right"],
    }
    got = enos_helper.reserve("g5k", config)
    kinds = [c[0] for c in fake_enoslib]
    assert kinds == ["conf", "provider", "init", "sync_info"]
    assert fake_enoslib[0][1] == "G5kConf" and "data_networks" not in fake_enoslib[0][2]
    assert fake_enoslib[1][1] == "G5k"
    by = {h["name"]: h for h in got["hosts"]}
    assert sorted(by) == ["n1", "n2", "n3"]  # n1 once, in two roles
    assert by["n1"]["roles"] == ["left", "control"]
    assert by["n3"]["data"] == {
        "data_left": [["eth1", "192.168.1.254/24"]],
        "data_right": [["eth2", "192.168.2.254/24"]],
    }
    hosts = [enos.to_host(e) for e in got["hosts"]]
    assert hosts[0] == {
        "name": "n1",
        "address": "10.0.0.1",
        "port": 22,
        "role": "left",
        "user": "root",
        "data_iface": "eth1",
        "data_addr": "192.168.1.1/24",
    }
    assert hosts[2]["role"] == "emulator" and hosts[2]["emulator_ifaces"] == ["eth1", "eth2"]


def test_static_reservation_skips_discovery_and_release_destroys(fake_enoslib):
    enos_helper.reserve("static", {"resources": {}, "data_networks": ["data"]})
    assert "sync_info" not in [c[0] for c in fake_enoslib]  # extra gives the data plane
    enos_helper.release("static", {"resources": {}})
    assert fake_enoslib[-1] == ("destroy",)


def test_a_missing_provider_class_is_named(fake_enoslib, monkeypatch):
    monkeypatch.delattr(sys.modules["enoslib"], "Vagrant")
    with pytest.raises(RuntimeError, match=r"enoslib\[vagrant\]"):
        enos_helper.reserve("vagrant", {"resources": {}})


def test_the_helper_answers_errors_as_one_json_line(tmp_path, capsys, fake_enoslib):
    conf = tmp_path / "c.json"
    conf.write_text("{}")
    assert enos_helper.main(["h", "reserve", "mars", str(conf)]) == 1
    assert "unknown provider kind 'mars'" in json.loads(capsys.readouterr().out)["error"]
    assert enos_helper.main(["h", "bogus"]) == 2


def test_a_data_subnet_gives_the_end_hosts_one_address_each_added_by_itb():
    hosts = [
        {"name": "n2", "role": "right", "data_iface": "eth1", "data_addr": "192.168.2.1/24"},
        {"name": "n1", "role": "left", "data_iface": "eth1"},
        {"name": "em", "role": "emulator", "emulator_ifaces": ["a", "b"]},
    ]
    enos.assign_addresses(hosts, "10.222.0.0/30")
    assert [(h["name"], h.get("data_addr"), h.get("add_address")) for h in hosts] == [
        ("n2", "10.222.0.2/30", True),
        ("n1", "10.222.0.1/30", True),
        ("em", None, None),
    ]
    with pytest.raises(ScenarioError, match="too small"):
        enos.assign_addresses(hosts + [{"name": "n3", "role": "left"}], "10.222.0.0/30")
    with pytest.raises(ScenarioError) as info:
        enos.assign_addresses(hosts, "10.222.0.1/33")
    assert info.value.field == "provider.config.data_subnet"


def test_hosts_without_an_itb_role_are_left_out():
    assert enos.to_host({"name": "x", "address": "a", "roles": ["control"]}) is None
    extra = {
        "name": "e",
        "address": "a",
        "roles": ["emulator"],
        "extra": {"emulator_ifaces": ["p", "q"], "remote_dir": "/d"},
    }
    assert enos.to_host(extra)["emulator_ifaces"] == ["p", "q"]


def _provider_inventory(tmp_path) -> inventory.Inventory:
    path = tmp_path / "inv.toml"
    path.write_text('[ssh]\nkey = "k"\n[provider]\nkind = "static"\n[provider.config]\nx = 1\n')
    return inventory.load(path)


def test_reserve_builds_an_inventory_whose_errors_name_the_field(tmp_path, monkeypatch):
    inv = _provider_inventory(tmp_path)
    hosts = [
        {
            "name": "h1",
            "address": "10.0.0.1",
            "roles": ["left"],
            "extra": {"data_iface": "eth1", "data_addr": "192.168.1.1/24"},
        },
        {"name": "em", "address": "10.0.0.3", "roles": ["emulator"], "extra": {}},
    ]
    monkeypatch.setattr(enos, "call", lambda cmd, p, timeout=0: {"hosts": hosts})
    with pytest.raises(ScenarioError) as info:  # the emulator has no interfaces
        enos.reserve(inv)
    assert info.value.field == "host 'em'.emulator_ifaces"
    hosts[1]["extra"] = {"emulator_ifaces": ["a", "b"]}
    got = enos.reserve(inv)
    assert [h.name for h in got.host] == ["h1", "em"] and got.provider.kind == "static"
    assert got.key(got.host[0]) == tmp_path / "k"  # the inventory's directory still anchors it


def test_a_run_releases_its_reservation_on_failure_and_interruption(tmp_path, monkeypatch):
    import contextlib

    from itb.backends.ssh.backend import Ssh
    from itb.engine import runner

    inv = _provider_inventory(tmp_path)
    events = []
    monkeypatch.setattr(enos, "validate", lambda i: events.append("validate"))
    monkeypatch.setattr(enos, "release", lambda i, say=None: events.append("release"))

    def boom(*a, **k):
        raise BackendError("the run failed")

    monkeypatch.setattr(enos, "reserve", lambda i, say=None: events.append("reserve") or i)
    monkeypatch.setattr(runner, "_run", boom)
    monkeypatch.setattr(runner.owner, "exclusive", lambda what: contextlib.nullcontext())
    opts = runner.RunOptions(tmp_path / "run", backend=Ssh(str(inv.source), inv))
    with pytest.raises(BackendError):
        runner.run(None, opts, print, print)
    assert events == ["validate", "reserve", "release"]

    events.clear()

    def interrupted(i, say=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(enos, "reserve", interrupted)
    with pytest.raises(KeyboardInterrupt):
        runner.run(None, opts, print, print)
    assert events == ["validate", "release"]


def test_without_enoslibs_environment_the_error_says_how_to_build_it(tmp_path, monkeypatch):
    monkeypatch.setenv("ITB_ENOSLIB_PYTHON", str(tmp_path / "none" / "python"))
    with pytest.raises(Exception, match="make enoslib"):
        enos.python()


needs_enoslib = pytest.mark.skipif(
    not (REPO / ".venv-enoslib" / "bin" / "python").exists(),
    reason="EnOSlib's environment not built (make enoslib)",
)


@needs_enoslib
def test_the_grid5000_example_passes_enoslibs_schema(monkeypatch):
    monkeypatch.delenv("ITB_ENOSLIB_PYTHON", raising=False)
    inv = inventory.load(G5K_EXAMPLE)
    assert inv.provider.kind == "g5k" and inv.provider.accept_new_host_keys
    enos.validate(inv)  # real EnOSlib, no network


@needs_enoslib
def test_a_broken_grid5000_configuration_is_refused_naming_the_field(tmp_path, monkeypatch):
    monkeypatch.delenv("ITB_ENOSLIB_PYTHON", raising=False)
    text = G5K_EXAMPLE.read_text().replace('walltime = "02:00:00"', "walltime = 2")
    path = tmp_path / "g5k.toml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as info:
        enos.validate(inventory.load(path))
    assert info.value.field == "provider.config" and "walltime" in info.value.reason
