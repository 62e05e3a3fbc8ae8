#!/usr/bin/env python3
"""Paced-window benchmark: does a congestion control keep its window bounded while pacing,
not the window, limits the flow?

One flow at a time through the local testbed (1 Gbit/s bottleneck, 20 ms RTT, one-BDP
queue), paced at 200 Mbit/s (`rate`, SO_MAX_PACING_RATE) for --seconds, with each
algorithm in turn, after a 10 s warm-up flow (cubic, not reported) that lets the testbed
settle; the sender's tcp_info is sampled every 100 ms. A congestion control that grows only
while cwnd-limited (Linux's tcp_is_cwnd_limited) stays within twice what was in flight in
the last round: with pacing, the paced BDP (200 Mbit/s x 20 ms = 345 segments of 1448
bytes) plus what a delay spike adds. With no loss, reno, bic, highspeed, htcp and scalable
stay in slow start (no HyStart), where a spike raises that ceiling for good; cubic's
HyStart and Vegas leave slow start. Reported per algorithm: the largest cwnd (a window
never shrinks here, so the 100 ms samples miss no maximum), its ratio to the paced BDP
(target: at most 3), the goodput, which implementation ran (kernel or ITB's eBPF), and the
emulator's worst release lag during the flow (late: more than 200 us behind schedule),
which is what delays ACKs and so inflates what is in flight.

Run as root from the repository after `make setup`:
    .venv/bin/python bench/paced_window.py [--seconds 30] [--cc reno,cubic,...] [--out DIR]
Exit 0 once the figures are printed; 1 if a run failed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
ITB = ROOT / ".venv" / "bin" / "itb"
ALL = ("reno", "cubic", "bbr", "bic", "highspeed", "htcp", "scalable", "vegas", "nocc")
PACE_BPS, RTT_S, MSS = 200e6, 0.020, 1448
PACED_BDP = PACE_BPS * RTT_S / 8 / MSS
GAP_S = 5  # between flows: the previous one's queue drains
WARMUP_S = 15  # the warm-up flow's 10 s and a gap

SCENARIO = """
[testbed]
name = "paced-window"
ack_every_segment = {ack_every_segment}
[dumbbell]
pairs = 1
[bottleneck]
rate = "1Gbit"
rtt = "20ms"

[experiment]
duration = "{duration}s"
interval = "100ms"

[[transfer]]
id = "warm-up"
src = "l1"
dst = "r1"
at = "0s"
cc = "cubic"
rate = "200Mbit"
volume = "250MB"
"""
TRANSFER = """
[[transfer]]
id = "{cc}"
src = "l1"
dst = "r1"
at = "{at}s"
cc = "{cc}"
rate = "200Mbit"
volume = "{volume}"
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--cc", default=",".join(ALL))
    ap.add_argument(
        "--ack-every-segment",
        action="store_true",
        help="hosts acknowledge each segment at once (testbed option "
        "ack_every_segment): no ACK waits for the receiving application",
    )
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "paced-window")
    a = ap.parse_args()
    ccs = a.cc.split(",")
    step = a.seconds + GAP_S
    volume = int(PACE_BPS / 8 * a.seconds)  # the flow ends after --seconds at 200 Mbit/s
    text = SCENARIO.format(
        duration=int(WARMUP_S + step * len(ccs) + 20),
        ack_every_segment=str(a.ack_every_segment).lower(),
    )
    text += "".join(
        TRANSFER.format(cc=c, at=WARMUP_S + i * step, volume=f"{volume}B")
        for i, c in enumerate(ccs)
    )
    a.out.mkdir(parents=True, exist_ok=True)
    scen = a.out / "scenario.toml"
    scen.write_text(text)
    run = a.out / "run"
    if run.exists():
        shutil.rmtree(run)  # this benchmark's own previous output
    res = subprocess.run(
        [str(ITB), "run", str(scen), "--out", str(run)], capture_output=True, text=True
    )
    if res.returncode != 0:
        print(res.stdout[-2000:], res.stderr[-2000:], file=sys.stderr)
        return 1
    meta = json.loads((run / "meta.json").read_text())
    impl = {c["name"]: f"{c['kernel_name']} ({c['source']})" for c in meta["congestion_controls"]}
    tr = pd.read_parquet(run / "transfers.parquet").set_index("transfer")
    s = pd.read_parquet(run / "samples.parquet")
    s = s[s.series == "tcp_info"]
    link = pd.read_parquet(run / "bottleneck.parquet")
    print(
        f"paced at {PACE_BPS / 1e6:.0f} Mbit/s through 1 Gbit/s, 20 ms: paced BDP "
        f"{PACED_BDP:.0f} segments; {a.seconds:.0f} s per flow, tcp_info every 100 ms"
    )
    print(
        f"{'cc':10} {'implementation':24} {'max cwnd':>9} {'x BDP':>6} "
        f"{'goodput Mbit/s':>15} {'emulator max lag ms':>20} {'ok':>3}"
    )
    worst = 0.0
    for c in ccs:
        x = s[s.transfer == c]
        row = tr.loc[c]
        ratio = x.cwnd.max() / PACED_BDP
        if c != "nocc":  # the control: no congestion control, a fixed 2^20 window
            worst = max(worst, ratio)
        gp = row["bytes"] * 8 / row["completion_s"] / 1e6 if row["ok"] else float("nan")
        during = link[(link.t_ns >= row["start_ns"]) & (link.t_ns <= row["end_ns"])]
        print(
            f"{c:10} {impl.get(c, '?'):24} {x.cwnd.max():9.0f} {ratio:6.2f} {gp:15.1f} "
            f"{during.max_lag_us.max() / 1e3:20.1f} {'yes' if row['ok'] else 'NO':>3}"
        )
    print(f"largest ratio to the paced BDP (nocc aside): {worst:.2f} (target: at most 3)")
    return 0 if tr["ok"].all() else 1


if __name__ == "__main__":
    sys.exit(main())
