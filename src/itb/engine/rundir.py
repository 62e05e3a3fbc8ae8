"""The run directory: everything one `itb run` produced, readable without the tool's state.

    RUN/
      scenario.toml            the file as given
      scenario.resolved.json   testbed and experiment, resolved (what the hash covers)
      meta.json                versions, host, sysctls, seed, stages, dispatch error, status
      calibration.json         measured vs configured path properties before the runs
      rep-001/                 one directory per repetition
        result.json            status (ok / failed / interrupted), reason, dispatch records
        nodes/<node>/...       raw logs of every process (flow CSV/JSON, stdout, stderr)
        emulator/<link>/...    the link emulator's per-interval logs for this repetition
      transfers.parquet  samples.parquet  bottleneck.parquet  metrics.json
      report/                  figures and report.html
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from itb.errors import ItbError

FORMAT_VERSION = 1


class RunDirError(ItbError):
    exit_code = 2


def write_json(path: Path, data) -> None:
    """Atomic: a reader never sees half a file (also after a kill)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, default=str))
    os.replace(tmp, path)


def read_json(path: Path):
    return json.loads(path.read_text())


def rep_dir(run: Path, repetition: int) -> Path:
    return run / f"rep-{repetition:03d}"


def rep_result(run: Path, repetition: int) -> dict | None:
    path = rep_dir(run, repetition) / "result.json"
    return read_json(path) if path.exists() else None


def repetitions_done(run: Path, total: int) -> set[int]:
    """Repetitions that finished (ok or failed): --resume does not redo them."""
    done = set()
    for r in range(1, total + 1):
        res = rep_result(run, r)
        if res and res.get("status") in ("ok", "failed"):
            done.add(r)
    return done


def default_run_dir(root: Path, name: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = root / f"{name}-{stamp}"
    n = 1
    while path.exists():
        n += 1
        path = root / f"{name}-{stamp}-{n}"
    return path


def open_for_resume(run: Path, scenario_hash: str) -> dict:
    meta_path = run / "meta.json"
    if not meta_path.exists():
        raise RunDirError(f"{run}: not a run directory (no meta.json); nothing to resume")
    meta = read_json(meta_path)
    if meta.get("scenario_hash") != scenario_hash:
        raise RunDirError(f"{run}: it was run with another scenario (hash "
                          f"{str(meta.get('scenario_hash'))[:12]}…, this one {scenario_hash[:12]}…); "
                          "resume needs the same file")
    return meta
