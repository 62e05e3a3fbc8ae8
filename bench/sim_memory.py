#!/usr/bin/env python3
"""The simulator's memory against its estimate (docs/simulation.md, "Refused before
anything runs"): each point is simulated once and itb-sim's peak resident memory (its
VmHWM) is set beside `itb.backends.sim.memory.estimate` of the same scenario, with the
estimate's terms. The estimate's per-item costs were calibrated on these points.

    python3 bench/sim_memory.py [--full] [--only TEXT] [--json OUT]

Points (dumbbells): one UDP stream of 400 Mbit/s into 100 Mbit/s (its queue of 10 or
50 MB fills: datagrams); four reno transfers on 100 Mbit/s, 20 ms, queues of 10 and
50 MB (segments in flight; the 50 MB one for 20 s), one reno transfer held by its
16 MiB socket buffers (a 50 MB queue, 25 s: no loss); 10 and 20 cubic transfers on
1 Gbit/s at 20 and 200 ms, one-BDP queues; 1 000 short transfers of 1 and of 8 streams
(the connections' state); `--full` adds 10 000 background flows (about 2 minutes
alone). The ratio is estimate / measured.
Exit status 0 once the figures are printed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from itb import cc
from itb.backends import open_testbed
from itb.backends.sim import memory
from itb.scenario.experiment.background import events_for_repetition
from itb.scenario.scenario import scenario_from_data


def dumbbell(pairs, rate, rtt, buf, duration, transfers=(), udp=(), background=()) -> dict:
    doc: dict = {
        "testbed": {"name": "simmem", "topology": "dumbbell"},
        "dumbbell": {"pairs": pairs},
        "bottleneck": {"rate": rate, "rtt": rtt, "buffer": buf},
        "experiment": {"duration": duration, "repetitions": 1},
    }
    for key, items in (("transfer", transfers), ("udp", udp), ("tcp_background", background)):
        if items:
            doc[key] = list(items)
    return doc


def bulk(n: int, cc_name: str, volume: str = "1GB") -> list[dict]:
    return [
        {"id": f"t{k}", "src": f"l{k}", "dst": f"r{k}", "at": "0s", "volume": volume, "cc": cc_name}
        for k in range(1, n + 1)
    ]


def short(n: int, streams: int) -> list[dict]:
    return [
        {"id": f"t{k}", "src": f"l{k % 100 + 1}", "dst": f"r{k % 100 + 1}", "at": f"{k}ms",
         "volume": "10kB", "cc": "cubic", "streams": streams}
        for k in range(n)
    ]  # fmt: skip


UDP = [{"id": "u", "src": "l1", "dst": "r1", "at": "0s", "rate": "400Mbit", "duration": "3s",
        "size": 1472}]  # fmt: skip
BACKGROUND = [
    {"src": [f"l{k}" for k in range(1, 101)], "dst": [f"r{k}" for k in range(1, 101)],
     "at": "0s", "duration": "5s", "mean_gap": "0.5ms",
     "sizes": {"distribution": "fixed", "mean": "10kB"}, "cc": "cubic"}
]  # fmt: skip

POINTS = {
    "udp 400M into 100M, 10 MB queue": dumbbell(1, "100Mbit", "20ms", "10MB", "3.5s", udp=UDP),
    "udp 400M into 100M, 50 MB queue": dumbbell(1, "100Mbit", "20ms", "50MB", "3.5s", udp=UDP),
    "4 reno x 2 MB, 100M 20ms 10 MB": dumbbell(4, "100Mbit", "20ms", "10MB", "2s", bulk(4, "reno", "2MB")),
    "4 reno, 100M 20ms 10 MB, 7 s": dumbbell(4, "100Mbit", "20ms", "10MB", "7s", bulk(4, "reno")),
    "4 reno, 100M 20ms 50 MB, 20 s": dumbbell(4, "100Mbit", "20ms", "50MB", "20s", bulk(4, "reno")),
    "1 reno, 100M 20ms 50 MB, 25 s": dumbbell(1, "100Mbit", "20ms", "50MB", "25s", bulk(1, "reno")),
    "10 cubic, 1G 20ms 1 BDP, 3 s": dumbbell(10, "1Gbit", "20ms", "1bdp", "3s", bulk(10, "cubic")),
    "20 cubic, 1G 200ms 1 BDP, 4 s": dumbbell(20, "1Gbit", "200ms", "1bdp", "4s", bulk(20, "cubic")),
    "1000 short transfers": dumbbell(100, "1Gbit", "20ms", "1bdp", "3s", short(1000, 1)),
    "1000 short transfers x 8 streams": dumbbell(100, "1Gbit", "20ms", "1bdp", "3s", short(1000, 8)),
}  # fmt: skip
FULL = {
    "10000 background flows": dumbbell(100, "1Gbit", "20ms", "1bdp", "6s", background=BACKGROUND),
}


def measure(name: str, doc: dict) -> dict:
    sc = scenario_from_data(doc, f"bench/sim_memory.py: {name}")
    events = events_for_repetition(sc.experiment, 1)
    est = memory.estimate(sc.topology, list(sc.experiment.events))
    tb = open_testbed(sc.topology, cc.support(), simulate=True)
    tb.preflight(sc)
    with tempfile.TemporaryDirectory() as d:
        res = tb.simulate(
            events, Path(d), sc.experiment.duration_us, sc.experiment.interval_us, 1
        )  # fmt: skip
    if res["status"] != "ok":
        raise SystemExit(f"{name}: {res['reason']}")
    peak = res["peak_rss_bytes"]
    return {
        "point": name,
        "measured_mib": peak / 2**20,
        "estimate_mib": est.total_bytes / 2**20,
        "ratio": est.total_bytes / peak,
        "wall_s": res["wall_s"],
        "terms_mib": {k: v / 2**20 for k, v in est.terms.items() if v},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--only", default="", help="the points whose name contains this")
    a = ap.parse_args()
    rows = []
    print(f"{'point':36s} {'measured MiB':>12s} {'estimate MiB':>12s} {'ratio':>6s} {'wall s':>7s}")
    for name, doc in (POINTS | (FULL if a.full else {})).items():
        if a.only not in name:
            continue
        r = measure(name, doc)
        rows.append(r)
        print(
            f"{name:36s} {r['measured_mib']:12.1f} {r['estimate_mib']:12.1f} "
            f"{r['ratio']:6.2f} {r['wall_s']:7.1f}",
            flush=True,
        )
    ratios = [r["ratio"] for r in rows]
    print(f"estimate / measured: {min(ratios):.2f} to {max(ratios):.2f}")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
