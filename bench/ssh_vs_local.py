#!/usr/bin/env python3
"""SSH backend vs local backend on the same scenario, in one invocation: the NXE
fair-share scenario (four 50 MB transfers into a 100 Mbit/s, 20 ms bottleneck) run N
times on the lab (`itb lab up`: one sshd per namespace, the engine over real SSH) and
N times on the local testbed; prints each one's mean completion time, the local
backend's 95 % interval, the fluid model's fair-share ideal, exact volumes and the
SSH run's measured start skew (p99).

Run as root from the repository: `.venv/bin/python bench/ssh_vs_local.py [--repeat N]
[--scenario FILE] [--lab-args "…"] [--keep DIR]`. It brings a lab up under
ITB_PREFIX=benchssh (control network --control-net, default 198.19.9; `--lab-args`: more
options of `itb lab up`, e.g. "--topology chain --links 3 --hosts 4" for
scenarios/examples/chain-transfers.toml) and down again. Besides the mean of all
transfers, each transfer id's mean completion time is compared (its SSH mean within the
local 95 % interval or not).

`--compare-bench SSH_DIR LOCAL_DIR` compares two benchmark directories instead (e.g.
`itb bench --quick --capacity 1Gbit --inventory runs/lab/inventory.toml` against the
same without --inventory): per cell, each one's mean completion time with its 95 %
interval, and whether the SSH mean lies within the local interval.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
from scipy import stats

REPO = Path(__file__).resolve().parents[1]


def itb(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "itb.cli", *args], env=env, text=True, capture_output=True
    )


def figures(run: Path) -> dict:
    tr = pd.read_parquet(run / "transfers.parquet")
    fwd = tr[tr["kind"] == "transfer"]
    metrics = json.loads((run / "metrics.json").read_text())
    meta = json.loads((run / "meta.json").read_text())
    ct = fwd["completion_s"].dropna()
    n = len(ct)
    half = (stats.t.ppf(0.975, n - 1) * ct.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    ideal = _ideal(metrics)
    return {
        "transfers": int(len(fwd)),
        "completed": int(n),
        "exact_volumes": bool((fwd["bytes"] == fwd["bytes_expected"]).all()),
        "mean_s": float(ct.mean()),
        "ci95_half_s": float(half),
        "ideal_s": ideal,
        "vs_ideal_pct": 100 * (ct.mean() - ideal) / ideal if ideal else None,
        "skew": meta.get("dispatch", {}).get("start_skew", {}),
        "by_id": {
            str(k): (float(g.mean()), _half(g)) for k, g in fwd.groupby("transfer")["completion_s"]
        },
    }


def _half(ct: pd.Series) -> float:
    """Half-width of the 95 % t interval of a mean (nan from one sample)."""
    ct = ct.dropna()
    n = len(ct)
    return float(stats.t.ppf(0.975, n - 1) * ct.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan


def _ideal(metrics: dict) -> float | None:
    """The fair-share ideal mean completion time, wherever metrics.json holds it."""
    stack = [metrics]
    while stack:
        d = stack.pop()
        if isinstance(d, dict):
            for k, v in d.items():
                if k in ("ideal_mean_s", "fair_share_ideal_mean_s") and isinstance(v, (int, float)):
                    return float(v)
                stack.append(v)
        elif isinstance(d, list):
            stack.extend(d)
    return None


def compare_bench(ssh_dir: Path, local_dir: Path) -> int:
    def rows(d: Path) -> dict:
        table = json.loads((d / "table.json").read_text())
        return {(r["app"], r.get("variant"), r["class"], r["cc"]): r for r in table["rows"]}

    ssh, loc = rows(ssh_dir), rows(local_dir)
    inside = total = 0
    print(
        f"{'cell':<16} {'ssh T_mean (s)':>22} {'local T_mean (s)':>22} {'diff %':>8}  ssh in local 95 %"
    )
    for key in sorted(set(ssh) & set(loc), key=str):
        a, b = ssh[key], loc[key]
        if a["t_mean"] is None or b["t_mean"] is None:
            continue
        name = "-".join(str(k) for k in key if k)
        ci_a, ci_b = a.get("t_mean_ci95"), b.get("t_mean_ci95")
        within = ci_b is not None and abs(a["t_mean"] - b["t_mean"]) <= ci_b
        total += 1
        inside += within
        print(
            f"{name:<16} {fmt(a['t_mean'], ci_a):>22} {fmt(b['t_mean'], ci_b):>22} "
            f"{100 * (a['t_mean'] - b['t_mean']) / b['t_mean']:>+8.1f}  {within}"
        )
    print(f"{inside} of {total} cells: the SSH mean within the local 95 % interval")
    return 0


def fmt(mean: float, ci: float | None) -> str:
    return f"{mean:.3f} ± {ci:.3f}" if ci is not None else f"{mean:.3f} ± –"


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--compare-bench":
        return compare_bench(Path(sys.argv[2]), Path(sys.argv[3]))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scenario", default=str(REPO / "scenarios/nxe/fair-share-4x50M.toml"))
    ap.add_argument("--control-net", default="198.19.9")
    ap.add_argument("--lab-args", default="", help="more options of `itb lab up`")
    ap.add_argument("--keep", help="keep the run directories here")
    a = ap.parse_args()
    work = Path(a.keep or tempfile.mkdtemp(prefix="itb-ssh-bench-"))
    env = {**os.environ, "ITB_PREFIX": "benchssh"}
    lab = work / "lab"
    up = itb(
        "lab",
        "up",
        "--dir",
        str(lab),
        "--control-net",
        a.control_net,
        *shlex.split(a.lab_args),
        env=env,
    )
    if up.returncode:
        print(up.stderr, file=sys.stderr)
        return 1
    try:
        ssh = itb(
            "run",
            a.scenario,
            "--repeat",
            str(a.repeat),
            "--out",
            str(work / "ssh"),
            "--inventory",
            str(lab / "inventory.toml"),
            env=env,
        )
    finally:
        itb("lab", "down", "--dir", str(lab), env=env)
    local = itb("run", a.scenario, "--repeat", str(a.repeat), "--out", str(work / "local"), env=env)
    for name, res in (("ssh", ssh), ("local", local)):
        if res.returncode:
            print(f"{name} run failed:\n{res.stdout[-2000:]}{res.stderr[-2000:]}", file=sys.stderr)
            return 1
    s, lo = figures(work / "ssh"), figures(work / "local")
    inside = abs(s["mean_s"] - lo["mean_s"]) <= lo["ci95_half_s"]
    print(f"scenario {a.scenario}, {a.repeat} repetitions each")
    for name, f in (("ssh  ", s), ("local", lo)):
        print(
            f"{name}: {f['completed']}/{f['transfers']} transfers completed, exact volumes "
            f"{f['exact_volumes']}, mean completion {f['mean_s']:.3f} s "
            f"(95 % interval ± {f['ci95_half_s']:.3f} s)"
            + (
                f", fair-share ideal {f['ideal_s']:.3f} s → {f['vs_ideal_pct']:+.1f} %"
                if f["ideal_s"]
                else ""
            )
        )
    for tid, (m_ssh, h_ssh) in sorted(s["by_id"].items()):
        m_lo, h_lo = lo["by_id"].get(tid, (math.nan, math.nan))
        print(
            f"transfer {tid}: ssh {fmt(m_ssh, h_ssh)} s, local {fmt(m_lo, h_lo)} s, "
            f"ssh mean within the local 95 % interval: {abs(m_ssh - m_lo) <= h_lo} "
            f"(difference {100 * (m_ssh - m_lo) / m_lo:+.1f} %)"
        )
    sk = s["skew"]
    print(
        f"ssh start skew over {sk.get('events')} events: p50 {sk.get('p50_ms', 0):.3f} ms, "
        f"p99 {sk.get('p99_ms', 0):.3f} ms, max {sk.get('max_ms', 0):.3f} ms "
        f"(clock offset uncertainty ≤ {sk.get('clock_uncertainty_max_ms', 0):.3f} ms)"
    )
    print(
        f"ssh mean within the local 95 % interval: {inside} "
        f"(difference {s['mean_s'] - lo['mean_s']:+.3f} s)"
    )
    print(f"run directories: {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
