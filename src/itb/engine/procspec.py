"""A repetition's processes as the engine runs them (`ProcSpec`, `RepetitionPlan`), and
what every event kind's processes share (itb.engine.kinds builds each kind's;
itb.engine.processes walks the events): which program, where, when, logging where.

Receivers (flow recv, flow udp-recv) start in a prelude before the timeline's zero and
must say "ready" before it; senders and commands start at their dates. Every process
logs into the repetition's directory, under nodes/<node>/<event id>.<role>.*, and
every one's stdout and stderr together are bounded: a command's by its `output_limit`
(default 64 MiB), ITB's own programs (which print a few lines) by the same 64 MiB.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from itb.engine.pacing import PaceSpec
from itb.scenario.experiment.events import SetLink
from itb.scenario.experiment.sections import DEFAULT_OUTPUT_LIMIT
from itb.scenario.testbed.model import Topology

BASE_PORT = 20000
IDLE_TIMEOUT_S = 60
ACCEPT_SLACK_S = 30
UDP_DRAIN_S = 1.0


@dataclass(frozen=True)
class ProcSpec:
    id: str  # unique in the repetition: "<event id>.<role>"
    event: str
    role: str  # recv, send, udp-recv, udp-send, command
    node: str
    at_us: int | None  # relative to the timeline's zero; None: in the prelude
    argv: tuple[str, ...]
    stdout: str
    stderr: str
    files: dict = field(default_factory=dict)  # log / summary paths
    stdin: bool = False
    ready: bool = False  # wait for its "ready" line before the timeline starts
    wait: bool = True  # the repetition ends only once it has exited
    check: bool = True  # a non-zero exit fails the repetition
    pace: PaceSpec | None = None  # a command held to a profile / cc (itb.engine.pacing)
    # stdout and stderr together kept on disk; what comes after is read and dropped
    output_limit_bytes: int = DEFAULT_OUTPUT_LIMIT


@dataclass
class RepetitionPlan:
    procs: list[ProcSpec]
    sets: list[SetLink]
    prelude_s: float

    def listeners(self) -> list[ProcSpec]:
        return [p for p in self.procs if p.at_us is None]


PACED_SETUP_S = 0.5  # a paced command's cgroup and pacer (bpftool: mount, load, attach, show)


def prelude_seconds(n_listeners: int, n_paced: int = 0) -> float:
    """Time between starting the receivers and the timeline's zero."""
    return 1.0 + 0.01 * n_listeners + PACED_SETUP_S * n_paced


def endpoint(topo: Topology, node: str, port: int) -> str:
    addr = topo.address(node)
    return f"[{addr}]:{port}" if ":" in addr else f"{addr}:{port}"
