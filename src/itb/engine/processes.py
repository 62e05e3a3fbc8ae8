"""One repetition's events as processes on nodes: which program, where, when, logging where.

Receivers (flow recv, flow udp-recv) start in a prelude before the timeline's zero and
must say "ready" before it; senders and commands start at their dates. Every process
logs into the repetition's directory, under nodes/<node>/<event id>.<role>.*, and
every one's stdout and stderr together are bounded: a command's by its `output_limit`
(default 64 MiB), ITB's own programs (which print a few lines) by the same 64 MiB.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from itb import native
from itb.backends import cgroup
from itb.engine import pacing
from itb.engine.pacing import PaceSpec
from itb.scenario.experiment import profile as profiles
from itb.scenario.experiment.events import Command, Pingpong, SetLink, Transfer, Udp
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


def build(
    events: list,
    topo: Topology,
    rep_dir: Path,
    interval_us: int,
    cc_names: Mapping[str, str] | None = None,
    first_port: int = BASE_PORT + 1,
) -> RepetitionPlan:
    """`cc_names` maps the scenario's canonical congestion controls to the names the
    kernel knows them by here (ITB's eBPF ones are itb_<name>); default: the same.
    The receivers listen on consecutive ports from `first_port` (a session's jobs, which
    run together, each get their own)."""
    flow = native.binary("flow")

    def kernel_cc(name: str) -> str:
        return (cc_names or {}).get(name, name)

    procs: list[ProcSpec] = []
    sets: list[SetLink] = []
    n_listeners = sum(isinstance(e, (Transfer, Pingpong, Udp)) for e in events)
    prelude = prelude_seconds(n_listeners, sum(isinstance(e, Command) and e.paced for e in events))
    port = first_port - 1

    def files(node: str, ident: str) -> dict:
        d = rep_dir / "nodes" / node
        d.mkdir(parents=True, exist_ok=True)
        stem = str(d / ident)
        return {
            "log": stem + ".csv",
            "summary": stem + ".json",
            "stdout": stem + ".out",
            "stderr": stem + ".err",
        }

    def spec(ident, e, role, node, at_us, argv, f, **kw) -> ProcSpec:
        return ProcSpec(
            id=ident,
            event=e.id,
            role=role,
            node=node,
            at_us=at_us,
            argv=tuple(str(a) for a in argv),
            stdout=f["stdout"],
            stderr=f["stderr"],
            files={"log": f["log"], "summary": f["summary"]},
            **kw,
        )

    for e in events:
        if isinstance(e, SetLink):
            sets.append(e)
            continue
        if isinstance(e, Command):
            f = files(e.host, f"{e.id}.command")
            argv, held = e.argv, None
            if e.paced:
                group = pacing.cgroup_for(e.id)
                held = PaceSpec(
                    str(group), e.profile, kernel_cc(e.cc) if e.cc else None, e.control_port
                )
                # in it from its first instruction, so from its first connection
                argv = (native.binary("itb-incgroup"), str(cgroup.seen_from_nodes(group)), *argv)
            procs.append(
                spec(
                    f"{e.id}.command",
                    e,
                    "command",
                    e.host,
                    e.at_us,
                    argv,
                    f,
                    wait=e.wait,
                    check=e.check,
                    pace=held,
                    output_limit_bytes=e.output_limit_bytes or DEFAULT_OUTPUT_LIMIT,
                )
            )
            continue
        port += 1
        where = listen = endpoint(topo, e.dst, port)
        common = ["--interval-us", interval_us]
        if isinstance(e, Udp):
            fr, fs = files(e.dst, f"{e.id}.udp-recv"), files(e.src, f"{e.id}.udp-send")
            recv_s = prelude + (e.at_us + e.duration_us) / 1e6 + UDP_DRAIN_S
            procs.append(
                spec(
                    f"{e.id}.udp-recv",
                    e,
                    "udp-recv",
                    e.dst,
                    None,
                    [
                        flow,
                        "udp-recv",
                        "--listen",
                        listen,
                        "--duration-s",
                        f"{recv_s:.3f}",
                        *common,
                        "--log",
                        fr["log"],
                        "--summary",
                        fr["summary"],
                    ],
                    fr,
                    ready=True,
                    wait=e.wait,
                )
            )
            send = [
                flow,
                "udp-send",
                "--to",
                where,
                "--rate-bps",
                e.rate_bps,
                "--size",
                e.size,
                "--duration-s",
                f"{e.duration_us / 1e6:.6f}",
                "--summary",
                fs["summary"],
            ]
            if e.arrivals == "poisson":
                send += ["--poisson", "--seed", e.seed]
            procs.append(
                spec(f"{e.id}.udp-send", e, "udp-send", e.src, e.at_us, send, fs, wait=e.wait)
            )
            continue
        fr, fs = files(e.dst, f"{e.id}.recv"), files(e.src, f"{e.id}.send")
        accept_s = int(prelude + e.at_us / 1e6 + ACCEPT_SLACK_S)
        if isinstance(e, Transfer) and e.protocol == "udt":
            udt = native.binary("itb-udt")
            recv = [
                udt,
                "recv",
                "--listen",
                listen,
                "--bytes",
                e.volume,
                *common,
                "--log",
                fr["log"],
                "--summary",
                fr["summary"],
                "--accept-timeout-s",
                accept_s,
                "--idle-timeout-s",
                IDLE_TIMEOUT_S,
            ]
            send = [
                udt,
                "send",
                "--to",
                where,
                "--bytes",
                e.volume,
                *common,
                "--log",
                fs["log"],
                "--summary",
                fs["summary"],
                "--idle-timeout-s",
                IDLE_TIMEOUT_S,
            ]
            if e.udt_control == "native":  # UDT4's congestion control, capped at the rate
                send += ["--cc", "native"]
                send += ["--max-rate-bps", e.rate_bps] if e.rate_bps else []
            else:
                send += ["--profile", profiles.Profile.of(e.profile).flow_arg()]
            procs.append(
                spec(f"{e.id}.recv", e, "recv", e.dst, None, recv, fr, ready=True, wait=e.wait)
            )
            procs.append(spec(f"{e.id}.send", e, "send", e.src, e.at_us, send, fs, wait=e.wait))
            continue
        recv = [
            flow,
            "recv",
            "--listen",
            listen,
            *common,
            "--log",
            fr["log"],
            "--summary",
            fr["summary"],
            "--accept-timeout-s",
            accept_s,
            "--idle-timeout-s",
            IDLE_TIMEOUT_S,
        ]
        send = [
            flow,
            "send",
            "--to",
            where,
            "--cc",
            kernel_cc(e.cc),
            *common,
            "--log",
            fs["log"],
            "--summary",
            fs["summary"],
            "--control-stdin",
        ]
        wait = True
        if isinstance(e, Pingpong):
            pp = ["--pingpong", "--msg-size", e.size, "--count", e.count]
            if e.reply_size:
                pp += ["--reply-size", e.reply_size]
            recv += [
                "--streams",
                1,
                "--cc",
                kernel_cc(e.cc),
                *pp,
            ]  # the echo sends with the same CC
            send += ["--streams", 1, "--bytes", e.size * e.count, *pp]
            if e.rate_bps:
                recv += ["--rate-bps", e.rate_bps]
                send += ["--rate-bps", e.rate_bps]
        else:
            wait = e.wait
            recv += ["--streams", e.streams, "--bytes", e.volume]
            send += ["--streams", e.streams, "--bytes", e.volume]
            if e.rate_bps and e.enforce != "tbf":  # (tbf: the source host's egress keeps it)
                send += ["--rate-bps", e.rate_bps]
            if e.socket_buffer_bytes:
                recv += ["--socket-buffer", e.socket_buffer_bytes]
                send += ["--socket-buffer", e.socket_buffer_bytes]
            if e.profile:
                send += ["--profile", profiles.Profile.of(e.profile).flow_arg()]
                if e.pace_headroom:
                    send += ["--pace-headroom", e.pace_headroom]
            if e.enforce == "application":
                send += ["--app-cap"]
            if e.source_file:
                send += ["--file", e.source_file]
            if e.sink_file:
                recv += ["--file", e.sink_file]
        procs.append(spec(f"{e.id}.recv", e, "recv", e.dst, None, recv, fr, ready=True, wait=wait))
        procs.append(
            spec(f"{e.id}.send", e, "send", e.src, e.at_us, send, fs, stdin=True, wait=wait)
        )
    return RepetitionPlan(procs, sets, prelude)
