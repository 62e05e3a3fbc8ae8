"""SSH backend: placing a scenario's hosts on an inventory, the remote clock estimate,
and the node worker's clock / --record / --kill modes (run as a real process)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from itb.backends.clock import ClockEstimate, estimate
from itb.backends.ssh.inventory import from_dict
from itb.backends.ssh.placement import Placement, access_rate_bps, place, placed_topology
from itb.errors import ScenarioError
from itb.scenario.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
FAIR_SHARE = ROOT / "scenarios" / "nxe" / "fair-share-4x50M.toml"
WORKER = ROOT / "src" / "itb" / "backends" / "hostside" / "worker.py"
SRC = "/lab/inventory.toml"


@pytest.fixture(scope="module")
def topo():
    return load_scenario(FAIR_SHARE).topology


def end_host(name: str, role: str, n: int, **extra) -> dict:
    return {
        "name": name,
        "address": f"192.0.2.{n}",
        "role": role,
        "data_iface": "eth1",
        "data_addr": f"10.0.0.{n}/24",
        **extra,
    }


EMULATOR = {
    "name": "em",
    "address": "192.0.2.250",
    "role": "emulator",
    "emulator_ifaces": ["eth1", "eth2"],
}


def inventory(
    left=("h2", "h10", "h3", "h4"),
    right=("s1", "s2", "s3", "s4"),
    emulator=True,
    extra: dict | None = None,
):
    """Left hosts get 10.0.0.1.., right 10.0.0.101..; `extra` adds fields per host name."""
    extra = extra or {}
    hosts = [end_host(h, "left", 1 + i, **extra.get(h, {})) for i, h in enumerate(left)]
    hosts += [end_host(h, "right", 101 + i, **extra.get(h, {})) for i, h in enumerate(right)]
    if emulator:
        hosts.append(EMULATOR)
    return from_dict({"host": hosts}, SRC)


# --- placement -------------------------------------------------------------------------


def test_fair_share_scenario_is_the_expected_dumbbell(topo):
    assert sorted(n.name for n in topo.hosts() if n.side == "left") == ["l1", "l2", "l3", "l4"]
    assert sorted(n.name for n in topo.hosts() if n.side == "right") == ["r1", "r2", "r3", "r4"]
    assert [lk.name for lk in topo.links if lk.emulated] == ["rl-rr"]


def test_hosts_placed_by_side_in_natural_name_order(topo):
    inv = inventory()
    p = place(topo, inv)
    assert isinstance(p, Placement)
    # h2 < h3 < h4 < h10 (natural), not "h10" < "h2" (lexicographic)
    assert p.hosts == {
        "l1": "h2",
        "l2": "h3",
        "l3": "h4",
        "l4": "h10",
        "r1": "s1",
        "r2": "s2",
        "r3": "s3",
        "r4": "s4",
    }
    assert p.host_of("l4") == "h10"
    assert "rl" not in p.hosts and "rr" not in p.hosts  # routers are not placed
    assert p.emulator == "em"
    assert p.link is not None and p.link.name == "rl-rr" and p.link.emulated
    assert p.link.forward.rate_bps == 100_000_000


def test_explicit_nodes_are_honoured(topo):
    # h2 would take l1 by order; it asks for l3 instead, and s4 for r1
    inv = inventory(extra={"h2": {"nodes": ["l3"]}, "s4": {"nodes": ["r1"]}})
    p = place(topo, inv)
    assert p.hosts["l3"] == "h2" and p.hosts["r1"] == "s4"
    # the rest by order among the hosts that named nothing
    assert [p.hosts[n] for n in ("l1", "l2", "l4")] == ["h3", "h4", "h10"]
    assert [p.hosts[n] for n in ("r2", "r3", "r4")] == ["s1", "s2", "s3"]
    assert len(set(p.hosts.values())) == 8


def test_one_host_may_play_several_nodes(topo):
    inv = inventory(left=("h1",), extra={"h1": {"nodes": ["l1", "l2", "l3", "l4"]}})
    p = place(topo, inv)
    assert {p.hosts[n] for n in ("l1", "l2", "l3", "l4")} == {"h1"}


@pytest.mark.parametrize(
    "side, kw, have", [("left", {"left": ("h1", "h2", "h3")}, 3), ("right", {"right": ("s1",)}, 1)]
)
def test_too_few_hosts_of_a_side_is_bad_input_exit_2(topo, side, kw, have):
    with pytest.raises(ScenarioError) as info:
        place(topo, inventory(**kw))
    msg = str(info.value)
    assert msg.startswith(SRC + ": ")
    # a left or right host's segment is its role
    assert f"4 host(s) on segment '{side}'" in msg
    assert f"has {have} free host(s) there" in msg
    assert info.value.exit_code == 2


def test_nodes_naming_a_missing_scenario_host(topo):
    with pytest.raises(ScenarioError) as info:
        place(topo, inventory(extra={"h2": {"nodes": ["l9"]}}))
    msg = str(info.value)
    assert SRC in msg and "host 'h2'" in msg and "no host 'l9'" in msg
    assert "l1, l2, l3, l4, r1" in msg  # says what there is


def test_same_node_claimed_twice(topo):
    with pytest.raises(ScenarioError) as info:
        place(topo, inventory(extra={"h2": {"nodes": ["l1"]}, "h3": {"nodes": ["l1"]}}))
    msg = str(info.value)
    assert SRC in msg and "host 'h3'" in msg and "'l1' is already played by 'h2'" in msg


def test_placed_topology_carries_inventory_addresses(topo):
    inv = inventory()
    p = place(topo, inv)
    t = placed_topology(topo, inv, p)
    for node, host in p.hosts.items():
        assert t.address(node) == inv.get(host).ip
    assert t.address("l1") == "10.0.0.1" and t.address("l4") == "10.0.0.2"  # h10 is 2nd
    l1 = next(lk for lk in t.links if lk.name == "l1-rl")
    assert (l1.a.ipv4, l1.a.ipv6) == ("10.0.0.1/24", None)
    # routers keep the scenario's addresses
    for r in ("rl", "rr"):
        assert t.address(r) == topo.address(r)
    old = {(lk.name, e.node): e for lk in topo.links for e in (lk.a, lk.b)}
    for lk in t.links:
        for e in (lk.a, lk.b):
            if e.node in ("rl", "rr"):
                assert e == old[(lk.name, e.node)]
    # the original is unchanged, the rest of the topology too
    assert topo.address("l1") == "198.18.1.1"
    assert [lk.name for lk in t.links] == [lk.name for lk in topo.links]
    assert [lk.forward for lk in t.links] == [lk.forward for lk in topo.links]


def test_placed_topology_with_ipv6_data_addresses(topo):
    inv = inventory()
    hosts = [h.model_dump() for h in inv.host]
    hosts[0]["data_addr"] = "2001:db8::7/64"  # h2 plays l1
    inv6 = from_dict({"host": hosts}, SRC)
    t = placed_topology(topo, inv6, place(topo, inv6))
    l1 = next(lk for lk in t.links if lk.name == "l1-rl")
    assert (l1.a.ipv4, l1.a.ipv6) == (None, "2001:db8::7/64")
    assert t.address("l1") == "2001:db8::7"


def test_access_rate(topo):
    assert access_rate_bps(topo, "l1") == 50_000_000
    assert access_rate_bps(topo, "r4") == 50_000_000
    assert access_rate_bps(topo, "nobody") is None


def test_without_emulator_host_the_real_network_is_the_path(topo):
    p = place(topo, inventory(emulator=False))
    assert p.link is None and p.emulator is None
    assert len(p.hosts) == 8


# --- clock estimate --------------------------------------------------------------------

OFFSET = 7_654_321_000  # the node's clock minus ours
# (one-way out, one-way back) per exchange, ns: the 4th is the quickest and asymmetric
DELAYS = [
    (400_000, 380_000),
    (250_000, 900_000),
    (120_000, 160_000),
    (30_000, 10_000),
    (600_000, 600_000),
    (80_000, 90_000),
    (1_000_000, 20_000),
    (55_000, 45_000),
]


def synthetic_exchange(delays, offset=OFFSET):
    def exchange(seq):
        out, back = delays[seq]
        t1 = 1_000_000_000 + seq * 10_000_000
        return t1, t1 + out + offset, t1 + out + back

    return exchange


def test_estimate_picks_the_shortest_round_trip():
    est = estimate(synthetic_exchange(DELAYS), samples=len(DELAYS))
    assert isinstance(est, ClockEstimate) and est.samples == len(DELAYS)
    assert est.rtt_ns == 40_000 == min(a + b for a, b in DELAYS)
    assert est.uncertainty_ns == 20_000
    # from the quickest exchange: true offset + (out - back) / 2
    assert est.offset_ns == OFFSET + (30_000 - 10_000) // 2
    assert abs(est.offset_ns - OFFSET) <= est.uncertainty_ns
    assert not est.same_clock
    assert est.to_json()["uncertainty_ns"] == 20_000


def test_estimate_spread_is_over_the_quicker_half():
    est = estimate(synthetic_exchange(DELAYS), samples=len(DELAYS))
    quick = sorted(DELAYS, key=sum)[: len(DELAYS) // 2]
    offsets = [OFFSET + (a - b) // 2 for a, b in quick]
    assert est.spread_ns == max(offsets) - min(offsets)


@pytest.mark.parametrize("offset", [0, -3_000_000_000, 123_456_789])
def test_true_offset_within_uncertainty_for_even_delays(offset):
    import random

    rnd = random.Random(offset)
    delays = [
        (2 * rnd.randrange(5_000, 500_000), 2 * rnd.randrange(5_000, 500_000)) for _ in range(16)
    ]
    est = estimate(synthetic_exchange(delays, offset))
    assert est.rtt_ns == min(a + b for a, b in delays)
    assert est.offset_ns - est.uncertainty_ns <= offset <= est.offset_ns + est.uncertainty_ns


def test_symmetric_delays_give_the_exact_offset():
    delays = [(d, d) for d in (300_000, 70_000, 500_000, 90_000)]
    est = estimate(synthetic_exchange(delays), samples=4)
    assert est.offset_ns == OFFSET and est.rtt_ns == 140_000 and est.spread_ns == 0


# --- the worker as a process -----------------------------------------------------------


class WorkerProc:
    def __init__(self, *args: str):
        env = {k: v for k, v in os.environ.items() if k != "ITB_DIE_WITH_PARENT"}
        env["PYTHONPATH"] = str(ROOT / "src")
        self.p = subprocess.Popen(
            [sys.executable, "-m", "itb.backends.hostside.worker", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.lines.put(json.loads(line))

    def send(self, **cmd):
        self.p.stdin.write(json.dumps(cmd) + "\n")
        self.p.stdin.flush()

    def next(self, pred=lambda e: True, timeout=5.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("no such event from the worker")
            try:
                e = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if pred(e):
                return e

    def close(self):
        if self.p.poll() is None:
            try:
                self.send(op="quit")
                self.p.stdin.close()
                self.p.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.p.kill()
                self.p.wait()


@pytest.fixture
def worker_factory():
    made = []

    def make(*args):
        w = WorkerProc(*args)
        made.append(w)
        return w

    yield make
    for w in made:
        w.close()


def start_time(pid: int) -> int:
    """/proc/PID/stat field 22 (after the command in parentheses)."""
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(") ", 1)[1].split()[19])


def test_worker_answers_clock_with_its_monotonic_time(worker_factory):
    w = worker_factory()
    hello = w.next(lambda e: e["ev"] == "hello")
    assert hello["pid"] == w.p.pid
    for seq in (3, 4, 5):
        sent = time.monotonic_ns()
        w.send(op="clock", seq=seq)
        ans = w.next(lambda e: e["ev"] == "clock")
        received = time.monotonic_ns()
        assert set(ans) == {"ev", "seq", "t_ns"} and ans["seq"] == seq
        assert sent <= ans["t_ns"] <= received


def test_clock_estimate_against_a_local_worker_finds_no_offset(worker_factory):
    w = worker_factory()
    w.next(lambda e: e["ev"] == "hello")

    def exchange(seq):
        t1 = time.monotonic_ns()
        w.send(op="clock", seq=seq)
        ans = w.next(lambda e: e["ev"] == "clock" and e["seq"] == seq)
        return t1, ans["t_ns"], time.monotonic_ns()

    est = estimate(exchange, samples=8)
    assert est.samples == 8 and est.rtt_ns > 0
    assert abs(est.offset_ns) <= est.uncertainty_ns + 1  # +1: the midpoint is rounded down


def test_record_writes_worker_and_child(worker_factory, tmp_path):
    record = tmp_path / "pids"
    w = worker_factory("--record", str(record))
    hello = w.next(lambda e: e["ev"] == "hello")
    w.send(
        op="spawn",
        id="s",
        at_ns=0,
        argv=["sleep", "30"],
        stdout=str(tmp_path / "o"),
        stderr=str(tmp_path / "e"),
    )
    d = w.next(lambda e: e["ev"] == "dispatched")
    child = d["pid"]
    expected = {(hello["pid"], start_time(hello["pid"])), (child, start_time(child))}
    lines = record.read_text().splitlines()
    assert {tuple(int(x) for x in line.split()) for line in lines} == expected
    assert len(lines) == 2
    w.send(op="quit")
    x = w.next(lambda e: e["ev"] == "exited")
    assert x["id"] == "s" and x["rc"] == -signal.SIGTERM
    assert w.p.wait(timeout=5) == 0


def test_without_record_nothing_is_written(worker_factory, tmp_path):
    w = worker_factory()
    w.next(lambda e: e["ev"] == "hello")
    w.send(
        op="spawn",
        id="t",
        at_ns=0,
        argv=["true"],
        stdout=str(tmp_path / "o"),
        stderr=str(tmp_path / "e"),
    )
    assert w.next(lambda e: e["ev"] == "exited")["rc"] == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e", "o"]


def run_kill(record: Path) -> str:
    r = subprocess.run(
        [sys.executable, str(WORKER), "--kill", str(record)],
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_kill_recorded_kills_only_the_same_process(tmp_path):
    live = subprocess.Popen(["sleep", "30"], start_new_session=True)
    reused = subprocess.Popen(["sleep", "30"], start_new_session=True)
    gone = subprocess.Popen(["true"])
    gone.wait()
    try:
        record = tmp_path / "pids"
        record.write_text(
            f"{live.pid} {start_time(live.pid)}\n"
            f"{reused.pid} {start_time(reused.pid) + 1}\n"  # a PID reused by another process
            f"{gone.pid} 12345\n"  # no longer there
            "not a line\n\n"
        )
        assert run_kill(record) == "1"
        assert live.wait(timeout=5) == -signal.SIGKILL
        time.sleep(0.1)
        assert reused.poll() is None  # start time differs: left alone
    finally:
        for p in (live, reused):
            if p.poll() is None:
                p.kill()
                p.wait()


def test_kill_with_a_missing_record_kills_nothing(tmp_path):
    assert run_kill(tmp_path / "absent") == "0"
