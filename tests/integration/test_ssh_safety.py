"""Nothing foreign touched on SSH hosts, against real OpenSSH servers (`itb lab up`):
`itb clean --inventory` and runs leave alone a directory ITB did not create, a bad
ITB_PREFIX or remote_dir is refused before any host is touched, `itb inventory check`
lists what a host contradicts, and `itb lab down` refuses while a run uses the lab.

Every test snapshots the directories it hands to ITB and compares them afterwards.
One lab of two end hosts and an emulator host serves the module (prefix itbv).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tomli_w

from tests.integration.conftest import itb, lab_up

PREFIX = "itbv"
ONE_PAIR = """
[testbed]
name = "ssh-one-pair"
topology = "dumbbell"
[dumbbell]
pairs = 1
access_rate = "50Mbit"
[bottleneck]
rate = "100Mbit"
rtt = "20ms"
[experiment]
repetitions = 1
duration = "10s"
[[transfer]]
src = "l1"
dst = "r1"
volume = "2MB"
cc = "cubic"
"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    d = tmp_path_factory.mktemp("safety")
    scenario = d / "one-pair.toml"
    scenario.write_text(ONE_PAIR)
    with lab_up(d, PREFIX, 2, "198.19.23") as (inv, env, _):
        yield {"dir": d, "inventory": inv, "env": env, "scenario": scenario}


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path under root (directories as None, files with their bytes)."""
    out: dict[str, bytes | None] = {}
    for dirpath, _dirs, files in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        out[rel] = None
        for f in files:
            out[os.path.join(rel, f)] = Path(dirpath, f).read_bytes()
    return out


def variant(lab: dict, path: Path, ssh: dict | None = None, **hosts: dict) -> Path:
    """The lab's inventory with [ssh] fields and hosts' fields (`h1={...}`) changed; a
    value of None removes the field."""
    import tomllib

    data = tomllib.loads(lab["inventory"].read_text())
    by_name = {h["name"]: h for h in data["host"]}
    for target, changes in [(data["ssh"], ssh or {})] + [(by_name[n], c) for n, c in hosts.items()]:
        for field, v in changes.items():
            if v is None:
                target.pop(field, None)
            else:
                target[field] = v
    path.write_text(tomli_w.dumps(data))
    return path


def foreign_dir(tmp_path: Path) -> Path:
    """A remote_dir whose <prefix> directory someone else made, with a file in it."""
    d = tmp_path / "D"
    (d / PREFIX).mkdir(parents=True)
    (d / PREFIX / "notes.txt").write_text("mine")
    (d / "other.txt").write_text("also mine")
    return d


def test_clean_leaves_a_prefix_directory_it_did_not_create(lab, tmp_path):
    d = foreign_dir(tmp_path)
    inv = variant(lab, tmp_path / "inv.toml", h1={"remote_dir": str(d)})
    before = snapshot(d)
    res = itb("clean", "--inventory", str(inv), env=lab["env"])
    assert res.returncode == 0, res.stderr
    assert (
        f"host h1: {d}/{PREFIX} exists and is a directory without ITB's owner marker" in res.stdout
    )
    assert "nothing of ITB" in res.stdout
    assert snapshot(d) == before


@pytest.mark.parametrize("prefix", ["", "..", ".", "a/b"])
def test_a_bad_prefix_is_refused_and_nothing_is_removed(lab, tmp_path, prefix):
    d = foreign_dir(tmp_path)
    inv = variant(lab, tmp_path / "inv.toml", h1={"remote_dir": str(d)})
    before, parent = snapshot(d), snapshot(tmp_path)
    res = itb("clean", "--inventory", str(inv), env={**lab["env"], "ITB_PREFIX": prefix})
    assert res.returncode == 2, res.stdout + res.stderr
    assert "ITB_PREFIX" in res.stderr and "is not a prefix" in res.stderr
    assert snapshot(d) == before and snapshot(tmp_path) == parent


def test_a_run_refuses_a_prefix_directory_it_did_not_create(lab, tmp_path):
    d = foreign_dir(tmp_path)
    inv = variant(lab, tmp_path / "inv.toml", h1={"remote_dir": str(d)})
    before = snapshot(d)
    res = itb(
        "run",
        str(lab["scenario"]),
        "--inventory",
        str(inv),
        "--out",
        str(tmp_path / "run"),
        env=lab["env"],
        timeout=120,
    )
    assert res.returncode == 3, res.stdout + res.stderr
    assert (
        "without ITB's owner marker" in res.stderr and "refused, nothing was changed" in res.stderr
    )
    assert snapshot(d) == before


def test_a_run_removes_only_what_it_created_in_a_remote_dir_it_shares(lab, tmp_path):
    shared = tmp_path / "shared"  # exists, holds the user's file: kept, and so is it
    shared.mkdir()
    (shared / "user.txt").write_text("keep")
    fresh = tmp_path / "fresh" / "deeper"  # absent: ITB creates both levels, then removes them
    inv = variant(
        lab, tmp_path / "inv.toml", h1={"remote_dir": str(shared)}, h2={"remote_dir": str(fresh)}
    )
    before = snapshot(shared)
    res = itb(
        "run",
        str(lab["scenario"]),
        "--inventory",
        str(inv),
        "--out",
        str(tmp_path / "run"),
        env=lab["env"],
        timeout=180,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert snapshot(shared) == before
    assert not (tmp_path / "fresh").exists()


@pytest.mark.parametrize(
    "remote_dir, why",
    [("/", "system directory"), ("/etc", "system directory"), ("../..", "absolute path")],
)
def test_inventory_check_refuses_a_remote_dir_that_is_not_its_own(lab, tmp_path, remote_dir, why):
    inv = variant(lab, tmp_path / "inv.toml", ssh={"remote_dir": remote_dir})
    res = itb("inventory", "check", str(inv), env=lab["env"])
    assert res.returncode == 2, res.stdout + res.stderr
    assert "ssh.remote_dir" in res.stderr and why in res.stderr


def test_inventory_check_refuses_one_machine_listed_twice(lab, tmp_path):
    import tomllib

    data = tomllib.loads(lab["inventory"].read_text())
    data["host"][2]["address"] = data["host"][1]["address"]
    inv = tmp_path / "inv.toml"
    inv.write_text(tomli_w.dumps(data))
    res = itb("inventory", "check", str(inv), env=lab["env"])
    assert res.returncode == 2, res.stdout + res.stderr
    assert "host 'h2'.address" in res.stderr and "is also host 'h1''s" in res.stderr


def test_inventory_check_lists_every_claim_a_host_contradicts(lab, tmp_path):
    d = foreign_dir(tmp_path)
    other = tmp_path / "nobody"  # a remote_dir the SSH user (root) does not own
    other.mkdir()
    os.chown(other, 65534, 65534)
    inv = variant(
        lab,
        tmp_path / "inv.toml",
        h1={"data_iface": "eth9", "remote_dir": str(d)},
        h2={"data_addr": "198.19.0.77/24", "remote_dir": str(other)},
    )
    res = itb("inventory", "check", str(inv), env=lab["env"])
    assert res.returncode == 1, res.stdout + res.stderr
    for want in (
        "host h1: field data_iface: no interface 'eth9' there",
        f"host h1: {d}/{PREFIX} exists and is a directory without ITB's owner marker",
        "host h2: field data_addr: 198.19.0.77/24 is not an address of eth1",
        f"host h2: field remote_dir: {other} is owned by nobody, not by the SSH user root",
    ):
        assert want in res.stderr, res.stderr
    assert "4 problem(s)" in res.stderr


def test_inventory_check_of_the_lab_as_written_passes(lab):
    res = itb("inventory", "check", str(lab["inventory"]), env=lab["env"])
    assert res.returncode == 0, res.stdout + res.stderr
    assert "3 host(s) as the inventory says" in res.stdout


def test_a_key_that_is_a_directory_says_so(lab, tmp_path):
    inv = variant(lab, tmp_path / "inv.toml", ssh={"key": str(tmp_path)})
    res = itb(
        "run",
        str(lab["scenario"]),
        "--inventory",
        str(inv),
        "--out",
        str(tmp_path / "run"),
        env=lab["env"],
        timeout=120,
    )
    assert res.returncode == 4, res.stdout + res.stderr
    assert f"field key: {tmp_path}: is a directory, not a private key file" in res.stderr


def test_too_few_hosts_for_the_scenario_is_bad_input(lab, tmp_path):
    two = tmp_path / "two-pairs.toml"
    two.write_text(ONE_PAIR.replace("pairs = 1", "pairs = 2"))
    res = itb(
        "run",
        str(two),
        "--inventory",
        str(lab["inventory"]),
        "--out",
        str(tmp_path / "run"),
        env=lab["env"],
        timeout=120,
    )
    assert res.returncode == 2, res.stdout + res.stderr
    assert "2 host(s) on segment 'left' (l1, l2)" in res.stderr and "1 free host(s)" in res.stderr


def test_lab_down_is_refused_while_a_run_uses_the_lab_and_the_run_ends_ok(lab, tmp_path):
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "itb.cli",
            "run",
            str(lab["scenario"]),
            "--inventory",
            str(lab["inventory"]),
            "--out",
            str(tmp_path / "run"),
        ],
        env=lab["env"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        users = lab["dir"] / "lab" / "users"
        deadline = time.monotonic() + 60
        while not any(users.glob("*.json")) and time.monotonic() < deadline:
            time.sleep(0.1)
        before = snapshot(lab["dir"] / "lab")
        res = itb("lab", "down", "--dir", str(lab["dir"] / "lab"), env=lab["env"])
        assert res.returncode == 3, res.stdout + res.stderr
        assert "is in use by `itb run" in res.stderr and f"PID {run.pid}" in res.stderr
        assert "nothing was removed" in res.stderr
        out, errs = run.communicate(timeout=240)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 0, out + errs
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert meta["status"] == "complete" and meta["repetition_status"] == ["ok"]
    after = snapshot(lab["dir"] / "lab")
    assert {k for k in after if not k.startswith("users")} == {
        k for k in before if not k.startswith("users")
    }  # the lab is whole


def test_a_command_on_a_lab_that_is_down_says_the_lab_is_down(lab, tmp_path):
    inv = variant(lab, tmp_path / "inv.toml", ssh={"lab": str(tmp_path / "gone")})
    res = itb(
        "run",
        str(lab["scenario"]),
        "--inventory",
        str(inv),
        "--out",
        str(tmp_path / "run"),
        env=lab["env"],
        timeout=60,
    )
    assert res.returncode == 4, res.stdout + res.stderr
    assert f"field ssh.lab: the lab {tmp_path / 'gone'} is not up" in res.stderr
