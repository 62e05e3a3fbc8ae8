#!/usr/bin/env python3
"""The simulator's speed (docs/simulation.md): simulated seconds per wall second, and
memory, for N bulk TCP flows on a dumbbell, N = 1, 12, 100, at 1 and 10 Gbit/s, RTT 20
and 200 ms (a one-BDP queue, Linux's cubic, every flow from its own host pair with its fair share
of the whole simulated time to send). An emulated run takes 1 wall second per second by
construction: the speed is the ratio to it.

    python3 bench/simulator.py [--quick] [--seconds 3] [--rates 1Gbit,10Gbit] [--json OUT]

`--quick`: 1 and 12 flows at 1 Gbit/s, 20 ms. Per point: simulated time, wall time, the
speed, peak memory of itb-sim and its growth per flow over the 1-flow point. Exit
status 0 once the figures are printed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from itb import cc
from itb.backends import open_testbed
from itb.scenario.scenario import scenario_from_data


def scenario(flows: int, rate: str, rtt: str, seconds: float):
    # each flow's fair share of the whole simulated time: they run to its end
    volume = int(float(rate.removesuffix("Gbit")) * 1e9 * seconds / 8 / flows)
    doc = {
        "testbed": {"name": "simspeed", "topology": "dumbbell"},
        "dumbbell": {"pairs": flows},
        "bottleneck": {"rate": rate, "rtt": rtt, "buffer": "1bdp"},
        "experiment": {"duration": f"{seconds}s", "repetitions": 1},
        "transfer": [
            {"id": f"f{k}", "src": f"l{k}", "dst": f"r{k}", "at": "0s", "volume": f"{volume}B",
             "cc": "cubic"}
            for k in range(1, flows + 1)
        ],
    }  # fmt: skip
    return scenario_from_data(doc, "bench/simulator.py")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seconds", type=float, default=3.0, help="simulated seconds per point")
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--rates", default="1Gbit,10Gbit", help="the bottleneck rates measured (default both)"
    )
    a = ap.parse_args()
    points = (
        [(1, "1Gbit", "20ms"), (12, "1Gbit", "20ms")]
        if a.quick
        else [
            (n, rate, rtt)
            for rate in a.rates.split(",")
            for rtt in ("20ms", "200ms")
            for n in (1, 12, 100)
        ]
    )
    rows = []
    print("flows  rate     RTT    simulated s  wall s   speed (sim s / wall s)  peak MiB  MiB/flow")
    base: dict = {}
    for n, rate, rtt in points:
        sc = scenario(n, rate, rtt, a.seconds)
        tb = open_testbed(sc.topology, cc.support(), simulate=True)
        tb.preflight(sc)
        with tempfile.TemporaryDirectory() as d:
            res = tb.simulate(
                list(sc.experiment.events), Path(d), sc.experiment.duration_us,
                sc.experiment.interval_us, 1,
            )  # fmt: skip
        if res["status"] != "ok":  # (its flows run to the timeline's end: "unfinished")
            print(f"{n} {rate} {rtt}: {res['reason']}")
            continue
        speed = res["simulated_s"] / res["wall_s"]
        rss = res["peak_rss_bytes"] / 2**20
        if n == 1:
            base[rate, rtt] = rss
        per = (rss - base[rate, rtt]) / (n - 1) if n > 1 and (rate, rtt) in base else float("nan")
        rows.append(
            {"flows": n, "rate": rate, "rtt": rtt, "simulated_s": res["simulated_s"],
             "wall_s": res["wall_s"], "speed": speed, "peak_mib": rss, "mib_per_flow": per}
        )  # fmt: skip
        print(
            f"{n:5d}  {rate:7s}  {rtt:5s}  {res['simulated_s']:11.3f}  {res['wall_s']:7.2f}"
            f"  {speed:22.3f}  {rss:8.1f}  {per:8.2f}",
            flush=True,
        )
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
