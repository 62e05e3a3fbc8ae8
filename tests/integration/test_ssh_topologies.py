"""Chains and stars over SSH: `itb lab up --topology chain|star` joins several L2
segments through emulator hosts' wires, `itb calibrate --inventory` passes on both, and
the shipped chain scenario runs over SSH with one linkem per link (its 1 ms log back
from each), exact volumes, and every host restored."""

from __future__ import annotations

import json

import pandas as pd

from tests.integration.conftest import REPO, calibrate_over_ssh, itb, lab_up, late_bursts_only

CHAIN = REPO / "scenarios" / "examples" / "chain-transfers.toml"
STAR = REPO / "scenarios" / "examples" / "star.toml"


def test_a_chain_of_three_links_on_two_emulator_hosts_calibrates_and_runs(tmp_path):
    lab = lab_up(tmp_path, "itbk", 4, "198.19.23", "--topology", "chain", "--emulators", "2")
    with lab as (inv, env, res):
        assert "a chain of 3 emulated link(s), 2 emulator host(s)" in res.stdout
        cal = calibrate_over_ssh(CHAIN, inv, env, tmp_path / "cal.json")
        assert cal["ok"] or late_bursts_only(cal), cal["checks"]
        # the default pair crosses the chain: src on s0 (h1) to dst on s3 (h4)
        assert cal["testbed"]["placement"] == {"src": "h1", "dst": "h4"}
        checks = {c["quantity"]: c for c in cal["checks"]}
        # idle RTT: 10 + 20 + 10 ms through three wires on two emulator hosts
        rtt = checks["idle RTT (median of 100 pings)"]
        assert rtt["ok"] and rtt["configured"] == 40
        tcp = checks["TCP goodput, 1 flow"]  # the path's bottleneck: the 50 Mbit/s middle link
        assert tcp["ok"] and tcp["configured"] == 50

        run = tmp_path / "run"
        res = itb(
            "run", str(CHAIN), "--inventory", str(inv), "--out", str(run), "--repeat", "1",
            env=env, timeout=300,
        )  # fmt: skip
        assert res.returncode == 0, res.stdout + res.stderr
        meta = json.loads((run / "meta.json").read_text())
        assert meta["backend"] == "ssh" and meta["status"] == "complete"
        assert meta["inventory"]["emulators"] == {"c0-c1": "em1", "c1-c2": "em2", "c2-c3": "em1"}
        tr = pd.read_parquet(run / "transfers.parquet")
        assert len(tr) == 2 and tr["ok"].all() and (tr["bytes"] == 20_000_000).all()
        links = pd.read_parquet(run / "bottleneck.parquet")
        assert set(links["link"]) == {"c0-c1", "c1-c2", "c2-c3"}  # every link's 1 ms log
        # the long flow crossed all three links, the cross flow only the middle one: the
        # middle link carried both transfers' bytes, each outer link about one
        carried = links.groupby("link")["bytes"].sum()
        assert 20e6 < carried["c0-c1"] < 22e6 and 20e6 < carried["c2-c3"] < 22e6, carried
        assert 40e6 < carried["c1-c2"] < 44e6, carried


def test_a_star_of_three_branches_calibrates(tmp_path):
    with lab_up(tmp_path, "itbq", 6, "198.19.24", "--topology", "star") as (inv, env, res):
        assert "a star of 3 emulated link(s)" in res.stdout
        cal = calibrate_over_ssh(STAR, inv, env, tmp_path / "cal.json")
        assert cal["ok"] or late_bursts_only(cal), cal["checks"]
        checks = {c["quantity"]: c for c in cal["checks"]}
        # the default pair a1 → b1: spokes s1 (5 ms) and s2 (40 ms)
        assert checks["idle RTT (median of 100 pings)"]["configured"] == 45
        assert checks["TCP goodput, 1 flow"]["configured"] == 200
