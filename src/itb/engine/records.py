"""What a run records about itself besides the repetitions' results: its provenance
(meta.json's base: hashes, versions of the tools, CPU), the emulator's logs cut to each
repetition, the dispatch errors over all repetitions, and the manifest of its files.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from itb import native, rundir
from itb.backends import facts as inv
from itb.emulation import monitor
from itb.engine.outcome import Outcome
from itb.errors import PreflightError
from itb.scenario.scenario import Scenario

EMULATOR_LOG_MARGIN_NS = monitor.KEPT_PAST_END_NS  # after the end: the last frames' intervals
EMULATOR_LOG_WAIT_S = 3.0  # linkem writes a row ~100 ms after its interval, flushes every 100 ms


def versions() -> dict[str, str | bool | None]:
    """Versions of ITB, Python, the native programs, iperf3, the libraries the figures
    depend on (ns-3's package for a simulation, numpy, scipy, pandas; None when not
    installed) and the git tree."""
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str | bool | None] = {"itb": version("itb"), "python": platform.python_version()}
    for package in ("ns3", "numpy", "scipy", "pandas"):
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            out[package] = None
    for name in ("flow", "linkem"):
        try:
            res = subprocess.run(
                [native.binary(name), "--version"], capture_output=True, text=True, timeout=10
            )
            out[name] = res.stdout.strip() or None
        except (PreflightError, OSError, subprocess.TimeoutExpired):
            out[name] = None
    res = subprocess.run(["iperf3", "--version"], capture_output=True, text=True)
    out["iperf3"] = res.stdout.splitlines()[0] if res.returncode == 0 and res.stdout else None
    git = subprocess.run(
        ["git", "-C", str(native.REPO), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    out["git_commit"] = git.stdout.strip() if git.returncode == 0 else None
    dirty = subprocess.run(
        ["git", "-C", str(native.REPO), "status", "--porcelain"], capture_output=True, text=True
    )
    out["git_dirty"] = bool(dirty.stdout.strip()) if dirty.returncode == 0 else None
    return out


def run_meta(sc: Scenario, repetitions: int, seed: int) -> dict:
    """meta.json of a new run, before its stages add to it."""
    return {
        "format": rundir.FORMAT_VERSION,
        "scenario": sc.experiment.name,
        "scenario_hash": sc.content_hash(),
        "testbed_hash": sc.topology.content_hash(),
        "source": sc.source,
        "repetitions": repetitions,
        "seed": seed,
        "backend": "local",
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "versions": versions(),
        "cpu": inv.cpu(),
        "status": "running",
    }


def gather_emulator_logs(run_dir: Path, r: int, emulators: Mapping, outcome: Outcome) -> None:
    """The emulator logs continuously; keep this repetition's rows next to its results,
    from the start of its receivers until just after its end, then delete the log
    segments that hold only rows up to there. Rows rotated away before they were read,
    or missing in that window (the emulator could not write them: a full disk), fail
    the repetition as the testbed's fault: its bottleneck series would not be whole.
    Such a direction's rows are kept as `linkem-<dir>.incomplete.csv`, out of the tables."""
    for link, em in emulators.items():
        # an emulator on another host dates its rows on that host's clock: the window is
        # cut on it, and the rows kept are converted to the engine's clock
        off = getattr(em, "clock_offset_ns", 0)
        lo, hi = outcome.start_ns + off, outcome.end_ns + EMULATOR_LOG_MARGIN_NS + off
        dst = rundir.rep_dir(run_dir, r) / "emulator" / link
        dst.mkdir(parents=True, exist_ok=True)
        src = Path(em.log_dir)
        conf = src / monitor.CONFIG_FILE
        if conf.exists():
            shutil.copyfile(conf, dst / monitor.CONFIG_FILE)
        for d in ("ab", "ba"):
            if not monitor.log_files(src, d):
                continue
            try:
                df = _log_until(src, d, lo, hi)
            except monitor.LogGone as e:
                outcome.fail(
                    f"link emulator {link}: its log lost rows of this repetition ({e}); "
                    "a repetition this long needs a larger log_keep_bytes",
                    environment=True,
                )
                continue
            df = df[df["t_ns"] <= hi]
            gaps = monitor.gaps(src, d, df["t_ns"].tolist(), lo, hi)
            if gaps:
                outcome.fail(gap_reason(link, gaps, outcome.zero_ns + off), environment=True)
            if off:
                df = df.assign(t_ns=df["t_ns"] - off)
            df.to_csv(dst / f"linkem-{d}{'.incomplete' if gaps else ''}.csv", index=False)
            monitor.drop_consumed(src, d, hi)


AFTER_ZERO = " after the repetition's zero"


def gap_reason(link: str, gaps: list[monitor.Gap], zero_ns: int) -> str:
    """One line: the link, the first lost span (seconds after the repetition's zero),
    how many more."""
    g = gaps[0]
    more = f"; {len(gaps) - 1} more gap(s)" if len(gaps) > 1 else ""
    return (
        f"link emulator {link}: its log ({monitor.DIRECTIONS[g.direction]}) lost the rows "
        f"{g.describe(zero_ns, AFTER_ZERO)}{more}: the bottleneck "
        "series is not whole"
    )


def _log_until(src: Path, direction: str, lo_ns: int, hi_ns: int) -> pd.DataFrame:
    """The emulator's rows from lo_ns on, once it has written them up to hi_ns (it
    writes them with a delay)."""
    deadline = time.monotonic() + EMULATOR_LOG_WAIT_S + max(0, hi_ns - time.monotonic_ns()) / 1e9
    while True:
        df = monitor.read_window(src, direction, lo_ns, hi_ns)
        if (len(df) and df["t_ns"].iloc[-1] >= hi_ns) or time.monotonic() > deadline:
            return df
        time.sleep(0.1)


def dispatch_summary(run_dir: Path, reps: int) -> dict:
    """Dispatch error of every timed event over all repetitions (ms): p50, p99, max."""
    import numpy as np

    errors, per_rep = [], []
    for r in range(1, reps + 1):
        res = rundir.rep_result(run_dir, r)
        if not res:
            continue
        e = [d["error_ns"] / 1e6 for d in res.get("dispatch", [])]
        errors += e
        if e:
            per_rep.append(
                {
                    "repetition": r,
                    "events": len(e),
                    "p99_ms": float(np.percentile(e, 99)),
                    "max_ms": max(e),
                }
            )
    if not errors:
        return {"events": 0}
    return {
        "events": len(errors),
        "p50_ms": float(np.percentile(errors, 50)),
        "p99_ms": float(np.percentile(errors, 99)),
        "max_ms": max(errors),
        "per_repetition": per_rep,
        "start_skew": start_skew(run_dir, reps),
    }


def start_skew(run_dir: Path, reps: int) -> dict:
    """How far from its planned date each timed event started, on the engine's clock,
    bounded: |dispatch error| plus the uncertainty of its node's clock offset (half the
    round trip of the exchange that measured it; 0 for a namespace of this machine)."""
    import numpy as np

    skews, unc, every = [], [], []
    for r in range(1, reps + 1):
        res = rundir.rep_result(run_dir, r) or {}
        for d in res.get("dispatch", []):
            if d.get("kind") in ("set",) or str(d.get("node", "")).startswith("emulator:"):
                continue
            u = d.get("clock_uncertainty_ns", 0)
            skews.append((abs(d["error_ns"]) + u) / 1e6)
            unc.append(u / 1e6)
            every.append(
                {
                    "repetition": r,
                    "id": d["id"],
                    "node": d.get("node"),
                    "skew_ms": round(skews[-1], 6),
                    "error_ms": round(d["error_ns"] / 1e6, 6),
                    "clock_uncertainty_ms": round(u / 1e6, 6),
                }
            )
    if not skews:
        return {"events": 0}
    return {
        "events": len(skews),
        "p50_ms": float(np.percentile(skews, 50)),
        "p99_ms": float(np.percentile(skews, 99)),
        "max_ms": max(skews),
        "clock_uncertainty_max_ms": max(unc),
        "definition": "|dispatch error| + clock offset uncertainty, engine clock",
        "per_event": every,
    }


def manifest(run_dir: Path) -> list[dict]:
    """Every file of the run directory but meta.json, with its size."""
    return [
        {"path": str(p.relative_to(run_dir)), "bytes": p.stat().st_size}
        for p in sorted(run_dir.rglob("*"))
        if p.is_file() and p.name != "meta.json"
    ]
