"""The TCP `flow recv` / `flow send` pair that transfers and ping-pongs share: the
receiver ready before zero (accepting until the sender's date and a slack), the sender
at its date with its congestion control and a control channel on stdin."""

from __future__ import annotations

from itb.engine.kinds.builder import Builder
from itb.engine.procspec import ACCEPT_SLACK_S, IDLE_TIMEOUT_S, ProcSpec
from itb.scenario.experiment.events import Pingpong, Transfer


def accept_timeout_s(e: Transfer | Pingpong, b: Builder) -> int:
    return int(b.prelude_s + e.at_us / 1e6 + ACCEPT_SLACK_S)


def pair(
    e: Transfer | Pingpong, b: Builder, recv_args: list, send_args: list, wait: bool
) -> list[ProcSpec]:
    """The receiver and the sender, each with the arguments of its kind after the
    common ones."""
    listen = b.next_endpoint(e.dst)
    fr, fs = b.files(e.dst, f"{e.id}.recv"), b.files(e.src, f"{e.id}.send")
    recv = [
        b.flow, "recv", "--listen", listen, *b.common(), "--log", fr["log"],
        "--summary", fr["summary"], "--accept-timeout-s", accept_timeout_s(e, b),
        "--idle-timeout-s", IDLE_TIMEOUT_S, *recv_args,
    ]  # fmt: skip
    send = [
        b.flow, "send", "--to", listen, "--cc", b.kernel_cc(e.cc), *b.common(),
        "--log", fs["log"], "--summary", fs["summary"], "--control-stdin", *send_args,
    ]  # fmt: skip
    return [
        b.spec(f"{e.id}.recv", e, "recv", e.dst, None, recv, fr, ready=True, wait=wait),
        b.spec(f"{e.id}.send", e, "send", e.src, e.at_us, send, fs, stdin=True, wait=wait),
    ]
