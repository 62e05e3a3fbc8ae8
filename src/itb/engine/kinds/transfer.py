"""A `[[transfer]]`'s processes: over TCP the `flow` pair (streams, volume, a rate, a
profile kept by pacing or the application, socket buffers, files); over UDT ITB's UDT
endpoint (UDT4's own control capped at a rate, or a fixed-rate profile)."""

from __future__ import annotations

from itb import native
from itb.engine.kinds import tcp
from itb.engine.kinds.builder import Builder
from itb.engine.procspec import IDLE_TIMEOUT_S, ProcSpec
from itb.scenario.experiment import profile as profiles
from itb.scenario.experiment.events import Transfer

LISTENERS = 1


def procs(e: Transfer, b: Builder) -> list[ProcSpec]:
    if e.protocol == "udt":
        return _udt(e, b)
    recv: list = ["--streams", e.streams, "--bytes", e.volume]
    send: list = ["--streams", e.streams, "--bytes", e.volume]
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
    return tcp.pair(e, b, recv, send, wait=e.wait)


def _udt(e: Transfer, b: Builder) -> list[ProcSpec]:
    listen = b.next_endpoint(e.dst)
    fr, fs = b.files(e.dst, f"{e.id}.recv"), b.files(e.src, f"{e.id}.send")
    udt = native.binary("itb-udt")
    recv = [
        udt, "recv", "--listen", listen, "--bytes", e.volume, *b.common(),
        "--log", fr["log"], "--summary", fr["summary"],
        "--accept-timeout-s", tcp.accept_timeout_s(e, b), "--idle-timeout-s", IDLE_TIMEOUT_S,
    ]  # fmt: skip
    send = [
        udt, "send", "--to", listen, "--bytes", e.volume, *b.common(),
        "--log", fs["log"], "--summary", fs["summary"], "--idle-timeout-s", IDLE_TIMEOUT_S,
    ]  # fmt: skip
    if e.udt_control == "native":  # UDT4's congestion control, capped at the rate
        send += ["--cc", "native"]
        send += ["--max-rate-bps", e.rate_bps] if e.rate_bps else []
    else:
        send += ["--profile", profiles.Profile.of(e.profile).flow_arg()]
    return [
        b.spec(f"{e.id}.recv", e, "recv", e.dst, None, recv, fr, ready=True, wait=e.wait),
        b.spec(f"{e.id}.send", e, "send", e.src, e.at_us, send, fs, wait=e.wait),
    ]
