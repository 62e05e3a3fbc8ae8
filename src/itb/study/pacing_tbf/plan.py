"""The plan of `itb study pacing-vs-tbf`: per congestion control, RTT, socket buffer,
pattern and mechanism, one dumbbell cell of transfers of one volume started together.

A source host is limited to R in all: with `tbf` by a token bucket on its egress at R
(its flows unpaced: `enforce = "tbf"`, itb.scenario.buckets), with `pacing` by each of
its n flows paced at R / n. A bucket's rate counts frames and a pacing rate payload, so
pacing runs at R × 1448/1514, the payload that R of full frames carries: both deliver
the same payload rate."""

from __future__ import annotations

from pathlib import Path

from itb.analysis.fairshare import tcp_payload_share
from itb.study.pacing_tbf.args import PacingTbfArgs
from itb.study.pacing_tbf.cells import PacingTbfCell
from itb.study.pursuit import testbed_doc
from itb.suite.apps.parts import rate, secs
from itb.sweep.index import SweepIndex
from itb.sweep.sweep import Sweep, SweepCell

# TCP payload (timestamps) in a full Ethernet frame at MTU 1500: 1448/1514
PAYLOAD_SHARE = tcp_payload_share()
# (source, destination) of each flow of a pattern; flows of one source share its limit
FLOWS = {
    "1flow": [("l1", "r1")],
    "2flows-1host": [("l1", "r1"), ("l1", "r2")],
    "2flows-2hosts": [("l1", "r1"), ("l2", "r2")],
}


def ideal_s(a: PacingTbfArgs, pattern: str) -> float:
    """A flow's completion time at its fair share: min(R / its host's flows, C / flows) of
    frames, so that much times PAYLOAD_SHARE of payload."""
    flows = FLOWS[pattern]
    per_host = sum(1 for s, _ in flows if s == flows[0][0])
    wire = min(a.limit_bps / per_host, a.capacity_bps / len(flows))
    return a.volume_bytes * 8 / (wire * PAYLOAD_SHARE)


def cell_doc(a: PacingTbfArgs, name: str, cc: str, rtt: float, buf: int, pattern: str,
             mech: str) -> dict:  # fmt: skip
    flows = FLOWS[pattern]
    per_host = {s: sum(1 for x, _ in flows if x == s) for s, _ in flows}
    doc = testbed_doc(
        f"ptbf-{name}",
        f"{pattern}, {cc}, {mech} at {a.limit_bps / 1e6:g} Mbit/s per host, RTT {rtt:g} ms "
        "(eWAN, PFLDnet 2006, §V.B)",
        2,
        a.capacity_bps,
        rtt,
        False,
    )
    duration = 3 * ideal_s(a, pattern) + 40 * rtt / 1000 + 30
    doc["experiment"] = {
        "name": f"ptbf-{name}",
        "duration": secs(int(duration) + 1),
        "repetitions": a.repeat,
        "seed": a.seed,
    }
    doc["transfer"] = []
    for k, (src, dst) in enumerate(flows):
        share = a.limit_bps / per_host[src]
        t = {
            "id": f"f{k + 1}",
            "src": src,
            "dst": dst,
            "volume": f"{a.volume_bytes}B",
            "cc": cc,
            "socket_buffer": f"{buf}B",
            "rate": rate(share if mech == "tbf" else share * PAYLOAD_SHARE),
        }
        if mech == "tbf":
            t["enforce"] = "tbf"
        doc["transfer"].append(t)
    return doc


def sweep_of(a: PacingTbfArgs, out: Path) -> Sweep[PacingTbfCell]:
    cells = []
    for cc in a.ccs:
        for rtt in a.rtts_ms:
            for buf in a.buffers:
                for pattern in a.patterns:
                    for mech in ("tbf", "pacing"):
                        name = f"{cc}-rtt{rtt:g}-buf{buf}-{pattern}-{mech}"
                        cell = PacingTbfCell(
                            name=name,
                            cc=cc,
                            rtt_ms=rtt,
                            buffer_bytes=buf,
                            pattern=pattern,
                            mechanism=mech,
                            flows=len(FLOWS[pattern]),
                            ideal_s=ideal_s(a, pattern),
                        )
                        doc = cell_doc(a, name, cc, rtt, buf, pattern, mech)
                        cells.append(SweepCell(cell, doc))
    return Sweep(out, "pacing-vs-tbf", SweepIndex[PacingTbfCell], a.key(), cells, a.repeat, a.seed)
