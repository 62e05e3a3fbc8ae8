"""What the studies of long-lived flows share (`itb study rtt-sweep`, `itb study
incremental`): a K = 10 dumbbell whose sources are paced at C_a = C / 10 (the
documents' 1 Gbit/s hosts on a 10 Gbit/s bottleneck, INRIA RR-6244 §5.1), flows that
send until a date and are then stopped, and each flow's goodput over a window of the
timeline, read from the receivers' 100 ms goodput series.

A flow is a `[[transfer]]` of more bytes than it can send at C_a before the end, with
`wait = false`; the repetition lasts until a `[[command]]` `sleep` on the first host
ends at that date. What a flow received in [t0, t1] over t1 − t0 is its goodput there.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from itb import rundir
from itb.analysis.statistics import jain_index
from itb.study.pursuit import testbed_doc
from itb.suite.apps.parts import rate, secs
from itb.suite.classes import DATA_CENTRE_K

SOURCES_K = DATA_CENTRE_K  # C_a = C / K (K = 10)
INTERVAL = "100ms"  # the receivers' goodput series step
SLACK_S = 60.0  # a flow's volume lasts this long past the end at C_a (never reached)


def flows_doc(
    name: str,
    description: str,
    *,
    capacity_bps: int,
    rtt_ms: float,
    ccs: list[str],
    starts_s: list[float],
    end_s: float,
    repeat: int,
    seed: int,
    streams: int = 1,
) -> dict:
    """A scenario of len(ccs) flows on as many host pairs (flow k from l<k> to r<k>, its
    congestion control ccs[k], started at starts_s[k], paced at C_a = C / 10 over its
    `streams` parallel connections), stopped at `end_s`; the bottleneck's queue one BDP."""
    access = capacity_bps / SOURCES_K
    doc = testbed_doc(name, description, len(ccs), capacity_bps, rtt_ms, False)
    doc["experiment"] = {
        "name": name,
        "duration": secs(math.ceil(end_s + 30)),
        "interval": INTERVAL,
        "repetitions": repeat,
        "seed": seed,
    }
    doc["transfer"] = [
        {
            "id": f"f{k + 1}",
            "src": f"l{k + 1}",
            "dst": f"r{k + 1}",
            "at": secs(at),
            "volume": f"{int(access / 8 * (end_s - at + SLACK_S))}B",
            "cc": cc,
            "streams": streams,
            "rate": rate(access),
            "wait": False,
        }
        for k, (cc, at) in enumerate(zip(ccs, starts_s))
    ]
    doc["command"] = [{"id": "end", "host": "l1", "argv": ["sleep", f"{end_s:g}"]}]
    return doc


def window_goodputs(
    samples: pd.DataFrame, transfers: pd.DataFrame, t0_s: float, t1_s: float
) -> dict[int, dict[str, float]]:
    """Per repetition, each flow's goodput (bit/s) over [t0_s, t1_s] of the timeline:
    the bytes of its goodput intervals, each pro rata of the part of it inside the window
    (the receiver's intervals count from its own start, not from the window's), over the
    window's length. A flow with no interval there (not started) is left out."""
    g = samples[samples["series"] == "goodput"]
    zero = rep_zeros(transfers)
    span = t1_s - t0_s
    out: dict[int, dict[str, float]] = {}
    for rep, rows in g.groupby("repetition"):
        end = (rows["t_ns"] - zero[int(rep)]) / 1e9
        length = rows["interval_s"].astype(float)
        overlap = (end.clip(upper=t1_s) - (end - length).clip(lower=t0_s)).clip(lower=0.0)
        part = rows["bytes"].astype(float) * (overlap / length.where(length > 0))
        inside = part[overlap > 0].groupby(rows.loc[overlap > 0, "transfer"]).sum()
        out[int(rep)] = {str(t): float(b) * 8 / span for t, b in inside.items()}
    return out


def jain_or_none(goodputs: list[float]) -> float | None:
    """Jain's index of the flows' goodputs; None for fewer than 2 flows or no traffic."""
    if len(goodputs) < 2 or not any(goodputs):
        return None
    return jain_index(goodputs)


def repetitions_of(run: Path) -> tuple[list[int], int]:
    """The repetitions of a cell's run that ended "ok" (1-based) and how many failed, from
    its meta.json (none yet: none of either)."""
    meta = run / "meta.json"
    statuses = rundir.read_json(meta).get("repetition_status", []) if meta.exists() else []
    ok = [k + 1 for k, s in enumerate(statuses) if s == "ok"]
    failed = sum(s not in ("ok", "not run", None) for s in statuses)
    return ok, failed


def rep_zeros(transfers: pd.DataFrame) -> dict[int, int]:
    """Each repetition's zero on the engine's clock (ns), from its transfers' rows."""
    zero = transfers.groupby("repetition")["rep_start_ns"].first()
    return {int(r): int(z) for r, z in zero.items()}


def complete_repetitions(
    transfers: pd.DataFrame, expected: int | None = None
) -> tuple[list[tuple[int, pd.DataFrame]], int]:
    """The repetitions whose forward transfers all completed (and, with `expected`, are
    that many), each with its forward rows; and the failed forward transfers of all."""
    fwd = transfers[transfers["direction"] == "forward"]
    out, failed = [], 0
    for rep, g in fwd.groupby("repetition", sort=True):
        ok = g["ok"].astype(bool) & g["completion_s"].notna()
        failed += int((~ok).sum())
        if int(ok.sum()) == (len(g) if expected is None else expected):
            out.append((int(rep), g))
    return out, failed
