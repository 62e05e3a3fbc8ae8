#!/usr/bin/env python3
"""The transfer service executing its plans (`itb serve --execute`, docs/service.md):
requests submitted over HTTP, committed, and run on the local testbed as their dates
come; what each transfer became read back from the API.

One `itb serve --execute scenarios/examples/service-wan.toml --link access=956Mbit`
(1 Gbit/s, 100 ms; 956 Mbit/s is its TCP payload capacity, m = 2.5 %) serves, in turn,
`--repeat` times each: the eWAN paper's example made feasible (2 × 3.4 GB released
together, deadline 60 s, max-rate B_in) and a seeded random workload (20 requests,
offered load 0.9, horizon 40 s). Each workload's dates are shifted to start 10 s after
its submission; every request is quoted in release order and committed when held.
Printed per workload: requests admitted, transfers done by their deadline (the
target: every admitted one), failed or missed, lateness against the deadline and
against the plan's finish (p50, p99, max; negative: early).

    python3 bench/service_execute.py [--repeat 3] [--port 8472] [--json OUT]

Needs root (it builds the testbed); ~2.5 min a repetition. Exit status 0 once the
figures are printed (targets reported, not asserted).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np

from itb.service import workload

ROOT = Path(__file__).resolve().parent.parent
B_IN = 956e6
MARGIN = 0.025


def call(base: str, method: str, path: str, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        base + path, data, {"content-type": "application/json"}, method=method
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def workloads(rep: int):
    paper = workload.paper_example(B_IN, MARGIN)
    paper = [r.__class__(r.id, 3_400_000_000, r.release_s, r.deadline_s, B_IN) for r in paper]
    return {"paper": paper, "random": workload.random(1, 20, 0.9, B_IN, MARGIN, 40.0)}


def run_one(base: str, name: str, reqs, tag: str) -> dict:
    t0 = time.time() + 10.0
    held = []
    for r in sorted(reqs, key=lambda r: r.release_s):
        body = {
            "id": f"{tag}-{r.id}",
            "link": "access",
            "volume": r.volume_bytes,
            "release": t0 + r.release_s,
            "deadline": t0 + r.deadline_s,
            "max_rate": r.max_rate_bps,
        }
        st, a = call(base, "POST", "/v1/requests", body)
        assert st == 201, (st, a)
        if a["state"] == "held":
            st, c = call(base, "POST", f"/v1/requests/{body['id']}/commit")
            assert st == 200, (st, c)
            held.append(body["id"])
    last = t0 + max(r.deadline_s for r in reqs)
    while True:
        time.sleep(max(1.0, min(10.0, last - time.time())))
        got = [call(base, "GET", f"/v1/requests/{i}")[1] for i in held]
        if time.time() > last and all(g["run"] and g["run"]["state"] != "launched" for g in got):
            break
        if time.time() > last + 120:
            break
    late = [g["run"]["late"] for g in got if g["run"] and g["run"]["late"] is not None]
    vs_plan = [
        g["run"]["finish"] - g["finish"] for g in got if g["run"] and g["run"]["finish"] is not None
    ]
    states = [g["run"]["state"] if g["run"] else "none" for g in got]
    return {
        "workload": name,
        "requests": len(reqs),
        "admitted": len(held),
        "met": sum(bool(g["run"] and g["run"]["met"]) for g in got),
        "states": {s: states.count(s) for s in sorted(set(states))},
        "late_s": late,
        "vs_plan_s": vs_plan,
        "reasons": [g["run"]["reason"] for g in got if g["run"] and g["run"]["reason"]],
    }


def pct(xs, q):
    return float(np.percentile(xs, q)) if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--port", type=int, default=8472)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    itb = Path(sys.executable).parent / "itb"
    tmp = Path(tempfile.mkdtemp(prefix="itb-svc-exec-"))
    argv = [str(itb), "serve", "--db", str(tmp / "s.db"), "--link", f"access={B_IN / 1e6:.0f}Mbit",
            "--margin", str(MARGIN), "--port", str(a.port),
            "--execute", str(ROOT / "scenarios/examples/service-wan.toml")]  # fmt: skip
    log = open(tmp / "serve.log", "w")
    server = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{a.port}"
    rows = []
    try:
        for _ in range(120):
            try:
                if call(base, "GET", "/v1/links")[0] == 200:
                    break
            except OSError:
                pass
            if server.poll() is not None:
                sys.exit(f"itb serve exited: {(tmp / 'serve.log').read_text()[-2000:]}")
            time.sleep(0.5)
        for rep in range(1, a.repeat + 1):
            for name, reqs in workloads(rep).items():
                row = run_one(base, name, reqs, f"{name}{rep}")
                rows.append(row)
                print(
                    f"{name} rep {rep}: {row['admitted']}/{row['requests']} admitted, "
                    f"{row['met']} met their deadline, runs {row['states']}, latest "
                    f"{max(row['late_s'], default=float('nan')):+.3f} s",
                    flush=True,
                )
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=60)
        log.close()
    print(
        "\nworkload  reps  admitted  met/admitted  late p50 / p99 / max (s)   vs plan p50 / p99 / max (s)"
    )
    for name in ("paper", "random"):
        rs = [r for r in rows if r["workload"] == name]
        late = [x for r in rs for x in r["late_s"]]
        vp = [x for r in rs for x in r["vs_plan_s"]]
        adm = sum(r["admitted"] for r in rs)
        print(
            f"{name:8s}  {len(rs):4d}  {adm:4d}/{sum(r['requests'] for r in rs):<4d}"
            f"  {sum(r['met'] for r in rs):4d}/{adm:<4d}"
            f"      {pct(late, 50):+.3f} / {pct(late, 99):+.3f} / {max(late, default=float('nan')):+.3f}"
            f"      {pct(vp, 50):+.3f} / {pct(vp, 99):+.3f} / {max(vp, default=float('nan')):+.3f}"
        )
    reasons = [x for r in rows for x in r["reasons"]]
    if reasons:
        print("not met:", *sorted(set(reasons))[:5], sep="\n  ")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
