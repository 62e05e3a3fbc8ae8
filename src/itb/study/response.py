"""`itb study response-function` (docs/cc.md): does each congestion control respond to
random loss as its publication says?

One flow per point through the emulated bottleneck, with Bernoulli loss p on the data
direction only, a fixed RTT and a link far faster than the flow (the loss, not the
link, sets the rate). The loss range of each algorithm is planned from its published
response function so that the average window spans the range where the formula
holds (above the low-window regime, below what one emulated path carries).

Per point: the steady-state goodput after a warm-up, as a window w = R·RTT/MSS (the
rate in MSS per RTT); the loss rate the emulator applied to the flow over the same
span (the fit's p: a few dozen seeded draws can be 30 % off the configured p); every
congestion event's decrease β = 1 − cwnd_after / cwnd_before from the sender's
tcp_info samples (cwnd before entering Recovery, cwnd once back in Open). Per
algorithm: the fit log w = log c − d·log p, compared with the published c and d, and
the median β against the published decrease. The result models and the fit are in
itb.analysis.response.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from itb.analysis.cells import cell_transfers
from itb.analysis.response import Event, Results, fit_algorithm
from itb.analysis.response import Point as PointResult
from itb.bench.sweep import Outcome, Sweep, SweepCell, drive
from itb.cc.published import PUBLISHED, nominal_beta, switch_beta
from itb.engine import rundir
from itb.engine.collect import bottleneck_frames
from itb.errors import ScenarioError

Say = Callable[[str], None]
MSS = 1448                 # bytes: 1500-byte MTU with timestamps
LINK_SHARE_LIMIT = 0.9     # above this share of C the link, not the loss, may set the rate
MAX_LOSS = 0.05
MEASURED_EVENTS = 40       # mean loss intervals a point measures (within 20–60 s)
# A point lasts its warm-up and measured span (plus SETUP_S for the connection): the flow
# does not hold the repetition (`wait = false`), a small awaited UDP stream on the
# reverse direction (no loss there; the fit reads the data direction only) does, and the
# flow is stopped when it ends. The volume leaves room for a flow 3x faster than planned,
# so that it does not finish early; one that does is measured up to its end.
VOLUME_MARGIN = 3.0
SETUP_S = 10
CLOCK = "clock"
# The bottleneck of a point, when not given: this many times the algorithm's top planned
# rate, at least 1 Gbit/s: above the flows, but not so far that a slow start runs the
# emulator past what it can carry (a 3 Gbit/s link let BIC's reach 2.7 Gbit/s, 230 ms
# behind schedule). A point is left out when the link dropped packets while it was
# measured, or it ran at more than LINK_SHARE_LIMIT of C: then the link set the rate.
LINK_HEADROOM = 1.25
TRANSFER = "rf"


@dataclass(frozen=True)
class ResponseArgs:
    """None: each algorithm's own (itb.cc.published): its RTT, its rate cap, its window
    range, its measured span, and a bottleneck LINK_HEADROOM times its top planned rate."""
    ccs: tuple[str, ...]
    points: int = 5
    rtt_ms: float | None = None
    rate_bps: int | None = None      # the bottleneck: far above every planned rate
    max_rate_bps: int | None = None  # caps the planned window (CPU of one emulated path)
    interval_ms: float = 5.0         # tcp_info sampling: several samples per RTT
    repeat: int = 1
    seed: int = 1
    windows: tuple[float, float] | None = None  # overrides each algorithm's range
    max_measure_s: float | None = None  # the longest measured span of a point

    def key(self) -> dict:
        return {"ccs": list(self.ccs), "points": self.points, "rtt_ms": self.rtt_ms,
                "windows": list(self.windows) if self.windows else None,
                "rate_bps": self.rate_bps, "max_rate_bps": self.max_rate_bps,
                "interval_ms": self.interval_ms, "repeat": self.repeat, "seed": self.seed,
                "max_measure_s": self.max_measure_s}


@dataclass(frozen=True)
class Point:
    cc: str
    p: float
    plan_window: float   # segments the published (or planning) response function gives
    warmup_s: float
    measure_s: float
    volume: int
    seed: int            # the emulator's loss draws: independent from point to point
    rtt_ms: float
    rate_bps: int        # the bottleneck

    @property
    def name(self) -> str:
        return f"{self.cc}-p{self.p:.3g}"


def check_ccs(ccs: tuple[str, ...]) -> None:
    for cc in ccs:
        if cc not in PUBLISHED:
            raise ScenarioError(None, "--cc", f"{cc!r} has no loss response function to check "
                                              f"(choose from {', '.join(PUBLISHED)})")


def plan(a: ResponseArgs) -> list[Point]:
    """Loss rates log-spaced so the planned window spans the algorithm's range."""
    check_ccs(a.ccs)
    if a.points < 3:
        raise ScenarioError(None, "--points", "a fit of c and d needs at least 3 points")
    out = []
    for cc in a.ccs:
        pub = PUBLISHED[cc]
        rtt_ms = a.rtt_ms or pub.rtt_ms
        max_rate = a.max_rate_bps or pub.max_rate_bps
        rtt = rtt_ms / 1e3
        w_cap = max_rate * rtt / (8 * MSS)
        lo, hi = a.windows or pub.windows
        top = hi
        hi = min(hi, w_cap)
        if hi <= lo:
            raise ScenarioError(None, "--max-rate", f"{cc}: windows of {lo:g}–{top:g} "
                                f"segments need more than {max_rate / 1e6:g} Mbit/s at "
                                f"{rtt_ms:g} ms")
        link = a.rate_bps or int(max(1e9, LINK_HEADROOM * hi * MSS * 8 / rtt))
        for i, w in enumerate(np.geomspace(hi, lo, a.points)):
            p = min(pub.loss_for(w), MAX_LOSS)
            epoch_s = rtt / (p * w)  # mean time between congestion events
            warmup = float(np.clip(3 * epoch_s, 5, 15))
            measure = float(np.clip(MEASURED_EVENTS * epoch_s, 20,
                                    a.max_measure_s or pub.max_measure_s))
            rate = w * MSS * 8 / rtt
            volume = int(max(rate / 8 * (warmup + measure) * VOLUME_MARGIN, 10e6))
            # The i-th point of every algorithm shares a seed: the same loss draws at
            # the same p compare algorithms on a common footing.
            out.append(Point(cc, float(f"{p:.3g}"), float(w), warmup, measure, volume,
                             a.seed + i, rtt_ms, link))
    return out


def _doc(a: ResponseArgs, pt: Point) -> dict:
    run_s = pt.warmup_s + pt.measure_s
    return {
        # every segment acknowledged on its own: the ACK pattern the response functions
        # assume (otherwise ~10 segments per ACK here, TSO bursts and delayed ACKs, which
        # makes Linux's BIC grow several times faster and HighSpeed slower)
        "testbed": {"name": f"rf-{pt.name}"[:64], "ack_every_segment": True},
        "dumbbell": {"pairs": 1},
        "bottleneck": {"rate": f"{pt.rate_bps}bit", "rtt": f"{pt.rtt_ms:g}ms",
                       "loss": pt.p, "loss_reverse": 0},
        "experiment": {"name": f"response-{pt.name}", "repetitions": a.repeat, "seed": pt.seed,
                       "interval": f"{a.interval_ms:g}ms",
                       "duration": f"{int(run_s + SETUP_S) + 30}s"},
        "transfer": [{"id": TRANSFER, "src": "l1", "dst": "r1", "at": "0s", "cc": pt.cc,
                      "volume": f"{pt.volume}B", "wait": False}],
        # the point's clock: the flow is stopped when this ends
        "udp": [{"id": CLOCK, "src": "r1", "dst": "l1", "at": "0s", "rate": "16kbit",
                 "duration": f"{int(run_s + SETUP_S)}s", "size": 100}],
    }


def sweep_of(a: ResponseArgs, out: Path) -> Sweep:
    cells = [SweepCell(pt.name, _doc(a, pt), {
        "cc": pt.cc, "p": pt.p, "plan_window": pt.plan_window, "warmup_s": pt.warmup_s,
        "measure_s": pt.measure_s, "volume": pt.volume, "rtt_ms": pt.rtt_ms,
        "rate_bps": pt.rate_bps}) for pt in plan(a)]
    return Sweep(out, "response-function", a.key(), cells, a.repeat, a.seed)


def run_study(a: ResponseArgs, out: Path, say: Say = print,
              tick: Say = lambda s: None) -> Outcome[Results]:
    from itb.report.build import analyse_run
    from itb.report.response import build_response_report

    return drive(sweep_of(a, out), lambda sw: analyse(sw, a),
                 lambda sw, res: build_response_report(out, sw.state, res), say, tick,
                 analyse_run)


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
                nominal = nominal_beta(cc, before, float(window_rtts.min()) if len(window_rtts) else None,
                                       float(window_rtts.max()) if len(window_rtts) else None)
                out.append({"t_s": float(t[i]), "cwnd_before": before, "cwnd_after": after,
                            "beta": 1 - after / before, "nominal": nominal,
                            "nominal_switch": switch_beta(cc)})
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


def measure_point(df: pd.DataFrame, cc: str, warmup_s: float,
                  link: pd.DataFrame | None = None) -> dict:
    """Steady-state goodput (after the warm-up, while established) as a window, and the
    loss the link applied over the same span."""
    df = df[df["stream"] == 0].reset_index(drop=True)
    t = (df["t_ns"] - df["t_ns"].iloc[0]) / 1e9
    steady = df[(t >= warmup_s) & (df["state"] == "ESTABLISHED")]
    events = decrease_events(df, cc, warmup_s)
    out = {"measured_s": 0.0, "goodput_bps": None, "rtt_ms": None, "window": None,
           "mean_cwnd": None, "loss_seen": None, "p_link": None, "lost": 0,
           "queue_drops": 0, "events": events}
    if len(steady) < 20:
        return out
    first, last = steady.iloc[0], steady.iloc[-1]
    dt = (last["t_ns"] - first["t_ns"]) / 1e9
    rtt_s = steady["rtt_us"].mean() / 1e6
    mss = float(steady["snd_mss"].median())
    goodput = (last["bytes_acked"] - first["bytes_acked"]) * 8 / dt
    sent = (last["bytes_sent"] - first["bytes_sent"]) / mss
    out["p_link"], out["lost"], out["queue_drops"] = link_loss(link, int(first["t_ns"]),
                                                               int(last["t_ns"]))
    out.update(measured_s=dt, goodput_bps=goodput, rtt_ms=rtt_s * 1e3,
               window=goodput * rtt_s / (8 * mss), mean_cwnd=float(steady["cwnd"].mean()),
               loss_seen=(last["total_retrans"] - first["total_retrans"]) / sent if sent else None)
    return out


def _sender_log(sweep: Sweep, cell: dict, r: int) -> Path:
    return rundir.rep_dir(sweep.out / cell["run"], r) / "nodes" / "l1" / f"{TRANSFER}.send.csv"


def _link_log(sweep: Sweep, cell: dict, r: int) -> pd.DataFrame | None:
    """The bottleneck emulator's log of the data direction (the dumbbell has one link
    emulator; its forward direction carries l1 → r1)."""
    forward = [f for f in bottleneck_frames(sweep.out / cell["run"], r)
               if (f["direction"] == "forward").all()]
    return forward[0] if forward else None


def _corrupt_window(sweep: Sweep, cell: dict, r: int) -> str | None:
    """Why the run left the flow out (an impossible window in its tcp_info), if it did."""
    tr = cell_transfers(sweep.out, cell)
    if tr is None or "corrupt_window" not in tr:
        return None
    hit = tr[(tr["repetition"] == r) & (tr["transfer"] == TRANSFER)]["corrupt_window"].dropna()
    return str(hit.iloc[0]) if len(hit) else None


def analyse(sweep: Sweep, a: ResponseArgs) -> Results:
    """Every repetition of every point, the fit of each algorithm and the congestion
    events; written to points.csv, events.csv and results.json."""
    points: list[PointResult] = []
    events: list[Event] = []
    for c in sweep.state["cells"]:
        for r in range(1, a.repeat + 1):
            row = {k: c[k] for k in ("name", "cc", "p", "plan_window", "warmup_s", "rtt_ms",
                                     "rate_bps")}
            row["repetition"] = r
            path = _sender_log(sweep, c, r)
            res = rundir.rep_result(sweep.out / c["run"], r) or {}
            if not res or not path.exists():
                points.append(PointResult(**row, status=res.get("status", "not run"),
                                          window=None))
                continue
            # A flow slower than planned is stopped at the end of the timeline: its log
            # up to there is still a steady state to measure.
            m = measure_point(pd.read_csv(path), c["cc"], c["warmup_s"], _link_log(sweep, c, r))
            ev = m.pop("events")
            link_limited = m["queue_drops"] > 0 or (
                m["goodput_bps"] is not None and m["goodput_bps"] > LINK_SHARE_LIMIT * c["rate_bps"])
            status = "ok" if m["window"] else "too short"
            if status == "ok" and m["p_link"] is not None and not m["lost"]:
                status = "no loss"  # nothing to fit the window against
            if res.get("status") != "ok":
                row["note"] = f"repetition {res.get('status')}: {res.get('reason')}"
            corrupt = _corrupt_window(sweep, c, r)
            if corrupt:
                status, ev = "corrupt window", []  # excluded (engine.window)
                row["note"] = corrupt
            row.update(m, status=status, events=len(ev),
                       beta=float(np.median([e["beta"] for e in ev])) if ev else None,
                       link_limited=link_limited)
            pt = PointResult(**row)
            points.append(pt.model_copy(
                update={"published_window": PUBLISHED[pt.cc].window(pt.p_fit)}))
            events += [Event(cc=c["cc"], p=c["p"], **e) for e in ev]
    results = Results(points=points, fits=[fit_algorithm(cc, points, events) for cc in a.ccs],
                      events=events)
    for name, rows, model in (("points", points, PointResult), ("events", events, Event)):
        table = pd.DataFrame([x.model_dump() for x in rows], columns=list(model.model_fields))
        table.to_csv(sweep.out / f"{name}.csv", index=False)
    results.save(sweep.out / "results.json")
    return results
