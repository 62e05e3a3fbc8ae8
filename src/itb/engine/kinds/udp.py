"""A `[[udp]]` stream's processes: `flow udp-recv` (ready before zero, listening until
the stream's end and a drain) and `flow udp-send` at its date."""

from __future__ import annotations

from itb.engine.kinds.builder import Builder
from itb.engine.procspec import UDP_DRAIN_S, ProcSpec
from itb.scenario.experiment.events import Udp

LISTENERS = 1


def procs(e: Udp, b: Builder) -> list[ProcSpec]:
    listen = b.next_endpoint(e.dst)
    fr, fs = b.files(e.dst, f"{e.id}.udp-recv"), b.files(e.src, f"{e.id}.udp-send")
    recv_s = b.prelude_s + (e.at_us + e.duration_us) / 1e6 + UDP_DRAIN_S
    recv = [
        b.flow, "udp-recv", "--listen", listen, "--duration-s", f"{recv_s:.3f}", *b.common(),
        "--log", fr["log"], "--summary", fr["summary"],
    ]  # fmt: skip
    send = [
        b.flow, "udp-send", "--to", listen, "--rate-bps", e.rate_bps, "--size", e.size,
        "--duration-s", f"{e.duration_us / 1e6:.6f}", "--summary", fs["summary"],
    ]  # fmt: skip
    if e.arrivals == "poisson":
        send += ["--poisson", "--seed", e.seed]
    return [
        b.spec(f"{e.id}.udp-recv", e, "udp-recv", e.dst, None, recv, fr, ready=True, wait=e.wait),
        b.spec(f"{e.id}.udp-send", e, "udp-send", e.src, e.at_us, send, fs, wait=e.wait),
    ]
