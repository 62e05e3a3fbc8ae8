"""Every backend is a `Testbed` (itb.backends.testbed): the runner and `itb calibrate`
use nothing else, so each implementation has every member of the protocol, and a new
backend missing one is caught here, not in the middle of a run."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from itb.backends import open_testbed
from itb.backends import testbed as T
from itb.backends.local.testbed import LocalTestbed
from itb.backends.sim.testbed import SimTestbed
from itb.backends.ssh.testbed import SshTestbed
from itb.backends.testbed import CcSupport
from itb.scenario.scenario import load_scenario
from tests.unit.test_ssh_placement import FAIR_SHARE, inventory

CCS = CcSupport(
    ensure=lambda names, say: [],
    release=lambda done, say: None,
    object_path=lambda name: Path("/nonexistent") / f"{name}.bpf.o",
)


def members(proto: type) -> tuple[set[str], set[str]]:
    """(methods, attributes) the protocol declares itself (a read-only property is an
    attribute)."""
    methods = {n for n, v in vars(proto).items() if not n.startswith("_") and callable(v)}
    properties = {n for n, v in vars(proto).items() if isinstance(v, property)}
    return methods, set(vars(proto).get("__annotations__", {})) | properties


@pytest.fixture(scope="module")
def testbeds():
    topo = load_scenario(FAIR_SHARE).topology
    return {
        "local": open_testbed(topo, CCS),
        "ssh": open_testbed(topo, CCS, inventory=inventory()),
        "sim": open_testbed(topo, CCS, simulate=True),
    }


def test_the_protocol_declares_the_life_of_a_testbed_and_the_hosts_of_a_testbed_of_hosts():
    methods, attributes = members(T.Testbed)
    assert methods == {
        "preflight",
        "provenance",
        "unsupported",
        "up",
        "built",
        "start",
        "down",
        "release",
    }
    assert attributes == {"name", "same_machine", "topology", "warnings"}
    methods, attributes = members(T.Hosts)
    assert {"hosts", "host", "program", "clock_offset_ns", "prepare", "gather"} <= methods
    assert attributes == {"emulators"}


def _has_the_members_of(cls: type, tb: object, proto: type) -> None:
    methods, attributes = members(proto)
    for attr in attributes:
        assert hasattr(tb, attr), f"{cls.__name__} lacks {attr}"
    for m in methods:
        impl = getattr(cls, m, None)
        assert callable(impl), f"{cls.__name__} lacks {m}()"
        want = list(inspect.signature(getattr(proto, m)).parameters)
        got = list(inspect.signature(impl).parameters)
        assert got == want, f"{cls.__name__}.{m}{got} differs from the protocol's {want}"


@pytest.mark.parametrize(
    "name,cls", [("local", LocalTestbed), ("ssh", SshTestbed), ("sim", SimTestbed)]
)
def test_each_backend_has_every_member_of_the_lifecycle_with_the_protocols_parameters(
    testbeds, name, cls
):
    tb = testbeds[name]
    assert type(tb) is cls and tb.name == name
    _has_the_members_of(cls, tb, T.Testbed)


@pytest.mark.parametrize("name,cls", [("local", LocalTestbed), ("ssh", SshTestbed)])
def test_a_testbed_of_hosts_has_every_member_of_the_hosts_half(testbeds, name, cls):
    assert isinstance(testbeds[name], T.Hosts)
    _has_the_members_of(cls, testbeds[name], T.Hosts)


def test_the_simulator_has_no_member_of_a_testbed_of_hosts_not_even_a_stub(testbeds):
    methods, attributes = members(T.Hosts)
    assert not isinstance(testbeds["sim"], T.Hosts)
    assert [m for m in methods | attributes if hasattr(SimTestbed, m)] == []


def test_only_the_local_testbed_shares_this_machines_clock(testbeds):
    assert testbeds["local"].same_machine and not testbeds["ssh"].same_machine
    assert testbeds["local"].clock_offset_ns("l1") == 0


def test_a_host_side_program_runs_from_the_package_here():
    argv = open_testbed(load_scenario(FAIR_SHARE).topology, CCS).program("l1", "udprate")
    assert argv[1:] == ["-m", "itb.backends.hostside.udprate"]


def test_the_host_side_programs_are_package_data_that_import_nothing_of_itb():
    from itb.backends import hostside

    for name in hostside.PROGRAMS:
        text = hostside.source(name).decode()
        assert "import itb" not in text and "from itb" not in text, name
