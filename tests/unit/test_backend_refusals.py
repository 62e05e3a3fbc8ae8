"""What a backend cannot run is said before anything is written (the sweep asks each
cell's backend, `Backend.unsupported`, before it makes its directory; a run's testbed
asks again at preflight), naming the backend: a command held to a profile runs on this
machine only, ns-3's models only in simulation, a command in no simulation."""

from __future__ import annotations

from itb.backends import registry
from itb.backends.ssh.backend import Ssh
from itb.scenario.scenario import timeline_on
from tests.unit.test_sim_config import TOPO

PACED = {
    "command": [
        {"id": "g", "host": "l1", "at": "0s", "argv": ["true"], "profile": [[0, "100Mbit"]]}
    ]
}
NS3 = {"transfer": [{"id": "t", "src": "l1", "dst": "r1", "volume": "1MB", "cc": "ns3:TcpBbr"}]}


def test_a_paced_command_runs_locally_and_is_refused_on_ssh_hosts_and_in_simulation():
    sc = timeline_on(TOPO, PACED, "t.toml")
    assert registry.named("local").unsupported(sc) is None
    assert Ssh("inv.toml").unsupported(sc) == (
        "cannot run on --backend ssh: command g: a command held to a profile runs on the "
        "local backend only (its pacer is a cgroup of this machine)"
    )
    assert registry.named("sim").unsupported(sc).startswith("cannot be simulated: g: ")


def test_an_ns3_model_is_refused_everywhere_but_in_simulation():
    sc = timeline_on(TOPO, NS3, "t.toml")
    for backend in (registry.named("local"), Ssh("inv.toml")):
        assert backend.unsupported(sc) == (
            f"cannot run on --backend {backend.name}: t: ns3:TcpBbr is ns-3's model, run only "
            "in simulation (--backend sim)"
        )
    assert registry.named("sim").unsupported(sc) is None


def test_a_sweeps_key_names_its_backend_and_gives_it_back():
    ssh = Ssh("runs/lab/inventory.toml")
    for backend in (registry.named("local"), registry.named("sim"), ssh):
        key = {"apps": ["BU"], "seed": 1} | backend.key()
        again, rest = registry.from_key(key)
        assert again.name == backend.name and rest == {"apps": ["BU"], "seed": 1}
    assert ssh.key() == {"inventory": "runs/lab/inventory.toml"}
    assert registry.named("sim").key() == {"backend": "sim"} and registry.named().key() == {}
