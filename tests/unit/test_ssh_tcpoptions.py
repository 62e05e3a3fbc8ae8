"""The testbed's TCP options on an SSH host (itb.backends.ssh.tcpoptions), against a host
that records the commands it is given: one host route per peer with the kernel's device,
gateway and source and the options' metrics, TSO and GSO off, each recorded before it is
made; the restore removes exactly those routes and puts the offloads back as they were."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from itb.backends.ssh import tcpoptions
from itb.errors import PreflightError
from itb.scenario import load_testbed


@dataclass
class Done:
    stdout: str = ""
    returncode: int = 0


@dataclass
class FakeHost:
    name: str = "h1"
    existing: dict[str, str] = field(default_factory=dict)  # prefix → a route already there
    ran: list[list[str]] = field(default_factory=list)

    def run(self, argv, check=True, timeout=60, input=None):
        self.ran.append(list(argv))
        if argv[:3] == ["ip", "route", "get"]:
            return Done(f"{argv[3]} via 10.0.0.254 dev eth1 src 10.0.0.1 uid 0\n    cache\n")
        if argv[:4] == ["ip", "route", "show", "exact"]:
            return Done(self.existing.get(argv[4], ""))
        if argv[:2] == ["ethtool", "-k"]:
            return Done(
                "Features for eth1:\ntcp-segmentation-offload: on\n"
                "\ttx-tcp-segmentation: on\ngeneric-segmentation-offload: off [fixed]\n"
            )
        return Done()


def test_the_options_become_host_routes_with_their_metrics_and_offloads_off():
    t = load_testbed(None, {"pairs": 2})
    t = t.model_copy(update={"ack_every_segment": True, "open_receive_window": True})
    host, state, saved = FakeHost(), {}, []
    tcpoptions.apply(host, t, ["l1"], "eth1", state, lambda: saved.append(len(host.ran)))
    peers = [t.address(n) for n in ("l2", "r1", "r2")]
    # 1 Gbit/s · 20 ms: BDP 2.5 MB, buffer 2 × BDP = 5 MB under the 16 MiB floor: 16 MiB,
    # in 1448-byte segments: ceil(16777216 / 1448) = 11587
    adds = [c for c in host.ran if c[:3] == ["ip", "route", "add"]]
    assert adds == [
        ["ip", "route", "add", f"{p}/32", "via", "10.0.0.254", "dev", "eth1", "src", "10.0.0.1",
         "quickack", "1", "initrwnd", "11587"]
        for p in sorted(peers)
    ]  # fmt: skip
    assert ["ethtool", "-K", "eth1", "tso", "off", "gso", "off"] in host.ran
    # each change saved in the state before it was made
    assert state["offloads"] == [
        ["eth1", {"tcp-segmentation-offload": "on", "generic-segmentation-offload": "off"}]
    ]
    assert [r[0] for r in state["routes"]] == [f"{p}/32" for p in sorted(peers)]
    assert len(saved) == 1 + len(peers)
    undo = FakeHost()
    assert tcpoptions.restore(undo, state) == {"routes": 3, "offloads": 1}
    assert undo.ran == [
        *(["ip", "route", "del", f"{p}/32", "dev", "eth1"] for p in sorted(peers)),
        ["ethtool", "-K", "eth1", "tso", "on", "gso", "off"],
    ]


def test_only_open_receive_window_adds_initrwnd_and_leaves_the_offloads():
    t = load_testbed(None, {"pairs": 1}).model_copy(update={"open_receive_window": True})
    host, state = FakeHost(), {}
    tcpoptions.apply(host, t, ["l1"], "eth1", state, lambda: None)
    assert not any(c[0] == "ethtool" for c in host.ran) and "offloads" not in state
    (add,) = [c for c in host.ran if c[:3] == ["ip", "route", "add"]]
    assert add[-2:] == ["initrwnd", "11587"] and "quickack" not in add


def test_a_route_already_there_to_a_peer_is_refused_at_preflight():
    t = load_testbed(None, {"pairs": 1}).model_copy(update={"ack_every_segment": True})
    peer = t.address("r1")
    host = FakeHost(existing={f"{peer}/32": f"{peer} dev eth0 scope link"})
    with pytest.raises(PreflightError, match=f"host h1: a route to {peer}/32 is already there"):
        tcpoptions.check(host, t, ["l1"])
