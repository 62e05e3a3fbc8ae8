"""A `[[pingpong]]`'s processes: the TCP pair exchanging `count` messages of `size`
(replies of `reply_size`), the echo sending with the same congestion control."""

from __future__ import annotations

from itb.engine.kinds import tcp
from itb.engine.kinds.builder import Builder
from itb.engine.procspec import ProcSpec
from itb.scenario.experiment.events import Pingpong

LISTENERS = 1


def procs(e: Pingpong, b: Builder) -> list[ProcSpec]:
    pp = ["--pingpong", "--msg-size", e.size, "--count", e.count]
    if e.reply_size:
        pp += ["--reply-size", e.reply_size]
    recv = ["--streams", 1, "--cc", b.kernel_cc(e.cc), *pp]  # the echo sends with the same CC
    send = ["--streams", 1, "--bytes", e.size * e.count, *pp]
    if e.rate_bps:
        recv += ["--rate-bps", e.rate_bps]
        send += ["--rate-bps", e.rate_bps]
    return tcp.pair(e, b, recv, send, wait=True)
