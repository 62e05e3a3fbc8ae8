"""The analysis of `itb study response-function`: per point and repetition the steady
state goodput after the warm-up as a window, the loss the link applied over the same span
and every congestion event's decrease β (from the sender's tcp_info samples); per
algorithm the fit of log w = log c − d·log p and the median β (`fit`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from itb import rundir
from itb.analysis.cells import cell_transfers
from itb.analysis.logs import bottleneck_frames
from itb.cc.published import PUBLISHED, nominal_beta, switch_beta
from itb.study.response_function.args import ResponseArgs
from itb.study.response_function.cells import ResponseCell
from itb.study.response_function.fit import fit_algorithm
from itb.study.response_function.plan import TRANSFER
from itb.study.response_function.results import Event, Results
from itb.study.response_function.results import Point as PointResult
from itb.sweep.sweep import Sweep

LINK_SHARE_LIMIT = 0.9  # above this share of C the link, not the loss, may set the rate

# ---- analysis of one flow's tcp_info log -------------------------------------------

OPEN_STATES = ("Open", "Disorder")


def decrease_events(df: pd.DataFrame, cc: str, after_s: float) -> list[dict]:
    """Each fast-recovery episode that began after `after_s`: the window before it
    (last sample in Open/Disorder), the window after (first sample back in Open/Disorder)
    and β = 1 − after/before. Timeouts (state Loss) are not decreases: skipped."""
    t = ((df["t_ns"] - df["t_ns"].iloc[0]) / 1e9).to_numpy()
    st, cw, rtt = df["ca_state"].to_numpy(), df["cwnd"].to_numpy(), df["rtt_us"].to_numpy()
    out, i, since = [], 1, 0
    while i < len(df):
        if st[i] not in OPEN_STATES and st[i - 1] in OPEN_STATES:
            j = i
            while j < len(df) and st[j] not in OPEN_STATES:
                j += 1
            if j < len(df) and t[i] >= after_s and "Loss" not in set(st[i:j]) and cw[i - 1] > 0:
                before, after = float(cw[i - 1]), float(cw[j])
                window_rtts = rtt[since:i]
                nominal = nominal_beta(
                    cc,
                    before,
                    float(window_rtts.min()) if len(window_rtts) else None,
                    float(window_rtts.max()) if len(window_rtts) else None,
                )
                out.append(
                    {
                        "t_s": float(t[i]),
                        "cwnd_before": before,
                        "cwnd_after": after,
                        "beta": 1 - after / before,
                        "nominal": nominal,
                        "nominal_switch": switch_beta(cc),
                    }
                )
            since, i = j, j
        i += 1
    return out


def link_loss(link: pd.DataFrame | None, t0_ns: int, t1_ns: int) -> tuple[float | None, int, int]:
    """The share of the data direction's segments the emulator dropped by its loss model
    between t0 and t1 (its per-interval log, same CLOCK_MONOTONIC as tcp_info's), how
    many it dropped so, and how many its full queue dropped."""
    if link is None or not len(link):
        return None, 0, 0
    span = link[(link["t_ns"] >= t0_ns) & (link["t_ns"] <= t1_ns)]
    lost, queue = int(span["drops_loss"].sum()), int(span["drops_queue"].sum())
    offered = int(span["packets"].sum() + lost + queue)
    return (lost / offered if offered else None), lost, queue


def measure_point(
    df: pd.DataFrame, cc: str, warmup_s: float, link: pd.DataFrame | None = None
) -> dict:
    """Steady-state goodput (after the warm-up, while established) as a window, and the
    loss the link applied over the same span."""
    df = df[df["stream"] == 0].reset_index(drop=True)
    t = (df["t_ns"] - df["t_ns"].iloc[0]) / 1e9
    steady = df[(t >= warmup_s) & (df["state"] == "ESTABLISHED")]
    events = decrease_events(df, cc, warmup_s)
    out = {
        "measured_s": 0.0,
        "goodput_bps": None,
        "rtt_ms": None,
        "window": None,
        "mean_cwnd": None,
        "loss_seen": None,
        "p_link": None,
        "lost": 0,
        "queue_drops": 0,
        "events": events,
    }
    if len(steady) < 20:
        return out
    first, last = steady.iloc[0], steady.iloc[-1]
    dt = (last["t_ns"] - first["t_ns"]) / 1e9
    rtt_s = steady["rtt_us"].mean() / 1e6
    mss = float(steady["snd_mss"].median())
    goodput = (last["bytes_acked"] - first["bytes_acked"]) * 8 / dt
    sent = (last["bytes_sent"] - first["bytes_sent"]) / mss
    out["p_link"], out["lost"], out["queue_drops"] = link_loss(
        link, int(first["t_ns"]), int(last["t_ns"])
    )
    out.update(
        measured_s=dt,
        goodput_bps=goodput,
        rtt_ms=rtt_s * 1e3,
        window=goodput * rtt_s / (8 * mss),
        mean_cwnd=float(steady["cwnd"].mean()),
        loss_seen=(last["total_retrans"] - first["total_retrans"]) / sent if sent else None,
    )
    return out


def _sender_log(sweep: Sweep[ResponseCell], cell: ResponseCell, r: int) -> Path:
    return rundir.rep_dir(sweep.out / cell.run, r) / "nodes" / "l1" / f"{TRANSFER}.send.csv"


def _link_log(sweep: Sweep[ResponseCell], cell: ResponseCell, r: int) -> pd.DataFrame | None:
    """The bottleneck emulator's log of the data direction (the dumbbell has one link
    emulator; its forward direction carries l1 → r1)."""
    forward = [
        f for f in bottleneck_frames(sweep.out / cell.run, r) if (f["direction"] == "forward").all()
    ]
    return forward[0] if forward else None


def _corrupt_window(sweep: Sweep[ResponseCell], cell: ResponseCell, r: int) -> str | None:
    """Why the run left the flow out (an impossible window in its tcp_info), if it did."""
    tr = cell_transfers(sweep.out, cell)
    if tr is None or "corrupt_window" not in tr:
        return None
    hit = tr[(tr["repetition"] == r) & (tr["transfer"] == TRANSFER)]["corrupt_window"].dropna()
    return str(hit.iloc[0]) if len(hit) else None


def analyse(sweep: Sweep[ResponseCell], a: ResponseArgs) -> Results:
    """Every repetition of every point, the fit of each algorithm and the congestion
    events; written to points.csv, events.csv and results.json."""
    points: list[PointResult] = []
    events: list[Event] = []
    for c in sweep.index.cells:
        for r in range(1, a.repeat + 1):
            row: dict = {
                "name": c.name,
                "cc": c.cc,
                "p": c.p,
                "plan_window": c.plan_window,
                "warmup_s": c.warmup_s,
                "rtt_ms": c.rtt_ms,
                "rate_bps": c.rate_bps,
                "repetition": r,
            }
            path = _sender_log(sweep, c, r)
            res = rundir.rep_result(sweep.out / c.run, r) or {}
            if not res or not path.exists():
                points.append(PointResult(**row, status=res.get("status", "not run"), window=None))
                continue
            # A flow slower than planned is stopped at the end of the timeline: its log
            # up to there is still a steady state to measure.
            m = measure_point(pd.read_csv(path), c.cc, c.warmup_s, _link_log(sweep, c, r))
            ev = m.pop("events")
            link_limited = m["queue_drops"] > 0 or (
                m["goodput_bps"] is not None and m["goodput_bps"] > LINK_SHARE_LIMIT * c.rate_bps
            )
            status = "ok" if m["window"] else "too short"
            if status == "ok" and m["p_link"] is not None and not m["lost"]:
                status = "no loss"  # nothing to fit the window against
            if res.get("status") != "ok":
                row["note"] = f"repetition {res.get('status')}: {res.get('reason')}"
            corrupt = _corrupt_window(sweep, c, r)
            if corrupt:
                status, ev = "corrupt window", []  # excluded (engine.window)
                row["note"] = corrupt
            row.update(
                m,
                status=status,
                events=len(ev),
                beta=float(np.median([e["beta"] for e in ev])) if ev else None,
                link_limited=link_limited,
            )
            pt = PointResult(**row)
            points.append(
                pt.model_copy(update={"published_window": PUBLISHED[pt.cc].window(pt.p_fit)})
            )
            events += [Event(cc=c.cc, p=c.p, **e) for e in ev]
    results = Results(
        points=points, fits=[fit_algorithm(cc, points, events) for cc in a.ccs], events=events
    )
    for name, rows, model in (("points", points, PointResult), ("events", events, Event)):
        table = pd.DataFrame([x.model_dump() for x in rows], columns=list(model.model_fields))
        table.to_csv(sweep.out / f"{name}.csv", index=False)
    results.save(sweep.out / "results.json")
    return results
