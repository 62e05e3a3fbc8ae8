"""The SSH backend's inventory file: what loads, and how each bad input is reported
(file, field, reason, as a ScenarioError)."""

from __future__ import annotations

from pathlib import Path

import pytest

from itb.backends.ssh import inventory
from itb.backends.ssh.inventory import Inventory
from itb.errors import ScenarioError

EM = """
[[host]]
name = "em"
address = "192.0.2.10"
role = "emulator"
emulator_ifaces = ["eth1", "eth2"]
"""

LEFT = """
[[host]]
name = "h1"
address = "192.0.2.11"
role = "left"
data_iface = "eth1"
data_addr = "10.0.0.1/24"
"""

RIGHT = """
[[host]]
name = "h2"
address = "192.0.2.12"
role = "right"
data_iface = "eth1"
data_addr = "10.0.0.2/24"
"""

FULL = """
[ssh]
user = "itb"
key = "keys/id_ed25519"
known_hosts = "kh/known_hosts"
remote_dir = "/srv/itb"
connect_timeout_s = 3.5

[[host]]
name = "h1"
address = "192.0.2.11"
port = 2222
user = "alice"
key = "/abs/alice_key"
role = "left"
data_iface = "eth1"
data_addr = "10.0.0.1/24"
nodes = ["l1"]
remote_dir = "/opt/itb-h1"

[[host]]
name = "h2"
address = "192.0.2.12"
role = "right"
data_iface = "ens5"
data_addr = "2001:db8::2/64"

[[host]]
name = "em"
address = "192.0.2.10"
role = "emulator"
emulator_ifaces = ["eth1", "eth2"]
"""


def write(tmp_path: Path, text: str, name: str = "inventory.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def load_error(path: Path) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        inventory.load(path)
    e = info.value
    assert e.file == str(path)
    assert str(e).startswith(f"{path}: {e.field}: ")
    return e


# --- a valid inventory ------------------------------------------------------------------


def test_full_inventory_loads_every_field(tmp_path):
    path = write(tmp_path, FULL)
    inv = inventory.load(path)
    assert isinstance(inv, Inventory) and inv.source == str(path)
    assert (
        inv.ssh.user,
        inv.ssh.key,
        inv.ssh.known_hosts,
        inv.ssh.remote_dir,
        inv.ssh.connect_timeout_s,
    ) == ("itb", "keys/id_ed25519", "kh/known_hosts", "/srv/itb", 3.5)
    assert [h.name for h in inv.host] == ["h1", "h2", "em"]
    h1, h2, em = inv.host
    assert (h1.address, h1.port, h1.user, h1.role, h1.data_iface, h1.data_addr, h1.nodes) == (
        "192.0.2.11",
        2222,
        "alice",
        "left",
        "eth1",
        "10.0.0.1/24",
        ("l1",),
    )
    assert h1.ip == "10.0.0.1" and h2.ip == "2001:db8::2" and em.ip == ""
    assert (h2.port, h2.user, h2.nodes, h2.remote_dir) == (22, None, None, None)
    assert em.emulator_ifaces == ("eth1", "eth2") and em.data_iface is None
    # per-host values override [ssh], absent ones fall back to it
    assert inv.user(h1) == "alice" and inv.user(h2) == "itb"
    assert inv.key(h1) == Path("/abs/alice_key")
    assert inv.by_role("left") == [h1] and inv.by_role("right") == [h2]
    assert inv.emulator() is em and inv.get("h2") is h2
    with pytest.raises(KeyError):
        inv.get("nope")


def test_defaults_when_ssh_table_is_absent(tmp_path):
    inv = inventory.load(write(tmp_path, LEFT))
    (h1,) = inv.host
    assert inv.user(h1) == "root" and inv.key(h1) is None
    assert inv.ssh.remote_dir == "/var/tmp/itb" and inv.ssh.connect_timeout_s == 10.0
    assert inv.emulator() is None


def test_relative_paths_resolve_from_the_inventory_directory(tmp_path, monkeypatch):
    sub = tmp_path / "lab"
    sub.mkdir()
    path = write(sub, FULL)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # not the cwd: the file's directory
    inv = inventory.load(path)
    h1, h2, _ = inv.host
    assert inv.key(h2) == sub / "keys" / "id_ed25519"
    assert inv.known_hosts() == sub / "kh" / "known_hosts"
    assert inv.key(h1) == Path("/abs/alice_key")  # absolute stays as written


def test_default_known_hosts_sits_next_to_the_inventory(tmp_path):
    inv = inventory.load(write(tmp_path, LEFT))
    assert inv.known_hosts() == tmp_path / "known_hosts"


def test_home_relative_key_is_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    inv = inventory.load(write(tmp_path, '[ssh]\nkey = "~/.ssh/id"\n' + LEFT))
    assert inv.key(inv.host[0]) == tmp_path / "home" / ".ssh" / "id"


def test_remote_dir_per_host_overrides_ssh_and_gets_the_prefix(tmp_path, monkeypatch):
    inv = inventory.load(write(tmp_path, FULL))
    h1, h2, _ = inv.host
    monkeypatch.setenv("ITB_PREFIX", "ci7")
    assert inv.remote_dir(h1) == "/opt/itb-h1/ci7"
    assert inv.remote_dir(h2) == "/srv/itb/ci7"  # [ssh].remote_dir + the prefix
    monkeypatch.delenv("ITB_PREFIX")
    assert inv.remote_dir(h2) == "/srv/itb/itb"  # default prefix


# --- bad inputs -------------------------------------------------------------------------


def test_missing_file(tmp_path):
    e = load_error(tmp_path / "absent.toml")
    assert e.field == "(file)" and "no such file" in e.reason


def test_bad_toml(tmp_path):
    e = load_error(write(tmp_path, "[[host]\nname = \n"))
    assert e.field == "(file)" and "not valid TOML" in e.reason


@pytest.mark.parametrize(
    "text, field, extra",
    [
        (LEFT + 'colour = "blue"\n', "host 'h1'.colour", "colour"),
        ('[ssh]\nusr = "x"\n' + LEFT, "ssh.usr", "usr"),
        ("hosts = []\n" + LEFT, "hosts", "hosts"),
    ],
)
def test_unknown_field(tmp_path, text, field, extra):
    e = load_error(write(tmp_path, text))
    assert e.field == field and extra in str(e)
    assert "not permitted" in e.reason


def test_emulator_host_without_emulator_ifaces(tmp_path):
    e = load_error(write(tmp_path, LEFT + EM.replace('emulator_ifaces = ["eth1", "eth2"]', "")))
    assert "host 'em'" in e.field  # the host by name, not by index
    assert "emulator_ifaces" in str(e) and "emulator host needs" in e.reason


def test_emulator_host_without_emulator_ifaces_names_the_field(tmp_path):
    e = load_error(write(tmp_path, EM.replace('emulator_ifaces = ["eth1", "eth2"]', "")))
    assert e.field == "host 'em'.emulator_ifaces"


@pytest.mark.parametrize("drop", ['data_iface = "eth1"\n', 'data_addr = "10.0.0.1/24"\n'])
def test_end_host_without_data_iface_or_data_addr(tmp_path, drop):
    e = load_error(write(tmp_path, LEFT.replace(drop, "")))
    assert e.field == f"host 'h1'.{drop.split()[0]}"
    assert "a left host needs its data-plane" in e.reason


def test_right_host_without_data_addr_names_its_role(tmp_path):
    e = load_error(write(tmp_path, RIGHT.replace('data_addr = "10.0.0.2/24"\n', "")))
    assert "host 'h2'" in e.field and "a right host needs" in e.reason


@pytest.mark.parametrize("addr", ["10.0.0.1", "2001:db8::1"])
def test_data_addr_without_prefix_length(tmp_path, addr):
    e = load_error(write(tmp_path, LEFT.replace("10.0.0.1/24", addr)))
    assert e.field == "host 'h1'.data_addr"
    assert "prefix length" in e.reason and addr in e.reason


def test_data_addr_not_an_address(tmp_path):
    e = load_error(write(tmp_path, LEFT.replace("10.0.0.1/24", "ten.0.0.1/24")))
    assert e.field == "host 'h1'.data_addr" and "ten.0.0.1/24" in e.reason


@pytest.mark.parametrize(
    "port, reason", [("0", "1..65535"), ("65536", "1..65535"), ('"ssh"', "integer")]
)
def test_bad_port(tmp_path, port, reason):
    e = load_error(write(tmp_path, LEFT + f"port = {port}\n"))
    assert e.field == "host 'h1'.port" and reason in e.reason


def test_bad_role(tmp_path):
    e = load_error(write(tmp_path, LEFT.replace('"left"', '"middle"')))
    assert e.field == "host 'h1'.role" and "'emulator'" in e.reason


def test_host_without_name_is_named_by_index(tmp_path):
    e = load_error(write(tmp_path, EM + LEFT.replace('name = "h1"\n', "")))
    assert e.field == "host[1].name" and "required" in e.reason.lower()


def test_duplicate_host_names(tmp_path):
    e = load_error(write(tmp_path, LEFT + RIGHT.replace('"h2"', '"h1"')))
    assert "host names must be unique" in e.reason and e.field == "host 'h1'.name"


def test_two_emulator_hosts(tmp_path):
    em2 = EM.replace('"em"', '"em2"').replace('"192.0.2.10"', '"192.0.2.20"')
    e = load_error(write(tmp_path, LEFT + EM + em2))
    # both join left and right: a second path between two segments is an L2 loop
    assert "L2 loop" in e.reason and e.field == "host 'em2'.emulator_ifaces"


def test_source_key_is_not_accepted(tmp_path):
    e = load_error(write(tmp_path, 'source = "x"\n' + LEFT))
    assert e.field == "source" and "not permitted" in e.reason


def test_unreadable_file_is_a_scenario_error(tmp_path):
    (tmp_path / "d.toml").mkdir()
    with pytest.raises(ScenarioError) as info:
        inventory.load(tmp_path / "d.toml")
    assert info.value.field == "(file)"
    assert (
        info.value.reason == "is a directory, not an inventory file (ITB reads only regular files)"
    )


@pytest.mark.parametrize("text", ["", '[ssh]\nuser = "x"\n'])
def test_no_hosts_at_all(tmp_path, text):
    e = load_error(write(tmp_path, text))
    assert e.field == "host" and "no host" in e.reason


def test_from_dict_without_source_says_command_line():
    with pytest.raises(ScenarioError) as info:
        inventory.from_dict({})
    assert info.value.file == "<command line>" and info.value.field == "host"


@pytest.mark.parametrize(
    "value, why",
    [
        ("/", "system directory"),
        ("/etc", "system directory"),
        ("/var/tmp", "system directory"),
        ("/etc/itb", "lies in one"),
        ("/usr/local/itb", "lies in one"),
        ("../..", "absolute path"),
        ("itb", "absolute path"),
        ("/srv/../etc", "not normalised"),
        ("/srv/itb/", "not normalised"),
        ("//srv", "not normalised"),
        ("/srv/it\nb", "control character"),
    ],
)
def test_remote_dir_that_is_not_a_directory_of_its_own_is_refused(tmp_path, value, why):
    e = load_error(write(tmp_path, "[ssh]\nremote_dir = " + _toml_str(value) + "\n" + LEFT))
    assert e.field == "ssh.remote_dir" and why in e.reason
    e = load_error(write(tmp_path, LEFT + "remote_dir = " + _toml_str(value) + "\n"))
    assert e.field == "host 'h1'.remote_dir" and why in e.reason


def _toml_str(v: str) -> str:
    import json

    return json.dumps(v)  # a JSON string is a TOML basic string


@pytest.mark.parametrize(
    "value", ["/srv/itb", "/var/tmp/itb", "/tmp/itb", "/home/alice/itb", "/opt/itb", "/run/itb"]
)
def test_remote_dir_of_its_own_is_accepted(tmp_path, value):
    inv = inventory.load(write(tmp_path, "[ssh]\nremote_dir = " + _toml_str(value) + "\n" + LEFT))
    assert inv.remote_dir(inv.host[0]) == value + "/itb"


def test_two_hosts_at_one_address_and_port_are_refused(tmp_path):
    twin = RIGHT.replace('"192.0.2.12"', '"192.0.2.11"')
    e = load_error(write(tmp_path, LEFT + twin))
    assert e.field == "host 'h2'.address"
    assert "192.0.2.11:22 is also host 'h1''s" in e.reason


def test_one_address_on_two_ports_is_two_hosts(tmp_path):
    twin = RIGHT.replace('"192.0.2.12"', '"192.0.2.11"\nport = 2222')
    inv = inventory.load(write(tmp_path, LEFT + twin))
    assert [(h.address, h.port) for h in inv.host] == [("192.0.2.11", 22), ("192.0.2.11", 2222)]
