"""A host's facts (CPU, kernel, NIC, congestion controls) come from one command, its
sections told apart by "@@name" lines: read here on this machine's loopback."""

from __future__ import annotations

import os
import platform
from pathlib import Path

from itb.backends.facts import _sections, host_facts, sysctls
from itb.backends.host import NetnsHost


def test_sections_split_on_their_marker_lines():
    assert _sections("junk\n@@a\n1\n2\n@@b\n@@c\nx y\n") == {"a": "1\n2", "b": "", "c": "x y"}


def test_the_facts_of_this_machine_in_one_command():
    calls = []
    here = NetnsHost("root", None)

    class Counting:
        def run(self, argv, check=True):
            calls.append(argv)
            return here.run(argv, check=check)

    f = host_facts(Counting(), "lo")
    assert len(calls) == 1
    assert f["cpu"]["cores"] == os.cpu_count() and f["cpu"]["kernel"] == platform.release()
    assert f["cpu"]["machine"] == platform.machine()
    assert f["nic"]["ifname"] == "lo"
    assert f["nic"]["mtu"] == int(Path("/sys/class/net/lo/mtu").read_text())
    available = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    assert f["congestion_controls"] == available


def test_without_an_interface_there_is_no_nic():
    f = host_facts(NetnsHost("root", None), None)
    assert "nic" not in f and f["cpu"]["cores"] == os.cpu_count()


def test_sysctls_in_one_command_and_an_unknown_key_is_none():
    calls = []
    here = NetnsHost("root", None)

    class Counting:
        def run(self, argv, check=True):
            calls.append(argv)
            return here.run(argv, check=check)

    keys = ["net.ipv4.tcp_rmem", "net.itb.no_such_key", "net.core.rmem_max"]
    got = sysctls(Counting(), keys)
    assert len(calls) == 1
    want_rmem = " ".join(Path("/proc/sys/net/ipv4/tcp_rmem").read_text().split())
    assert got == {
        "net.ipv4.tcp_rmem": want_rmem,
        "net.itb.no_such_key": None,
        "net.core.rmem_max": Path("/proc/sys/net/core/rmem_max").read_text().strip(),
    }
