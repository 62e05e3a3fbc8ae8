"""What `itb study profile stage0` prints at the end: one row per CPU point and per way of
transferring."""

from __future__ import annotations

from itb.study.profile_stage0.args import Stage0Args
from itb.study.profile_stage0.results import Stage0Results
from itb.study.registry import Shown, Table, fixed
from itb.sweep.sweep import Outcome


def tables(res: Outcome[Stage0Results], a: Stage0Args) -> list[Shown]:
    r = res.results
    t = Table(
        title=f"stage 0 ({res.status})",
        columns=["part", "what", "congestion control / mechanism", "runs", "result"],
    )
    for p in r.cpu:
        failed = p.goodput_bps.n_failed
        t.rows.append(
            [
                "cpu",
                f"{p.input_bps / 1e6:g} Mbit/s, RTT {p.rtt_ms:g} ms",
                p.mechanism,
                str(p.send_cpu_pct.n),
                f"sender {fixed(p.send_cpu_pct.mean, 1)} %, receiver "
                f"{fixed(p.recv_cpu_pct.mean, 1)} % of a core"
                + (f" ({failed} failed)" if failed else ""),
            ]
        )
    for q in r.files + r.streams:
        g = q.goodput_bps.mean
        t.rows.append(
            [
                q.part,
                q.label,
                q.mechanism,
                str(q.goodput_bps.n),
                f"{fixed(None if g is None else g / 1e6, 1)} Mbit/s"
                + (f" ({q.goodput_bps.n_failed} failed)" if q.goodput_bps.n_failed else ""),
            ]
        )
    return [t]
