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

Its JSON records are read back through their typed models (`itb.rundir.records`):
a wrong shape, or a run of another format, is a `RunDirError` naming file and field.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from itb.errors import OutputError, os_reason
from itb.rundir.records import (
    FORMAT_VERSION,  # noqa: F401 (rundir.FORMAT_VERSION, as before)
    RepResult,
    RunDirError,
    RunMeta,
    load_json,
    read_checked,
    read_record,
)

MIN_FREE_BYTES = 1 << 20  # less free space than this after a repetition: it may be cut


def write_json(path: Path, data) -> None:
    """Atomic and durable: a reader never sees half a file, also after a kill or a power
    cut (written to a temporary file, synced, renamed, directory synced). A write error
    leaves the previous file and no temporary one, and raises `OutputError`."""
    write_bytes(path, json.dumps(data, indent=1, default=str).encode())


def write_table(path: Path, df) -> None:
    """A Parquet table, as atomically and durably as `write_json`."""
    import io

    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    write_bytes(path, buf.getvalue())


def write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        sync_dir(path.parent)
    except OSError as e:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        raise OutputError(path, f"cannot write: {os_reason(e)}") from None


def sync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_json(path: Path):
    """A JSON file of the run; `RunDirError` naming the file when it is not valid. A
    record of the run is read with its model instead (`itb.rundir.records.read_record`)."""
    return load_json(path)


def read_table(path: Path):
    """A Parquet table of the run; `RunDirError` naming the file when it cannot be read."""
    import pandas as pd

    try:
        return pd.read_parquet(path)
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
        raise RunDirError(
            f"{path}: not a readable Parquet table ({str(e)[:200]}); the file "
            "is damaged: `itb report RUN` rebuilds it from the raw logs"
        ) from None


def damaged(run: Path, meta: RunMeta | None = None) -> list[str]:
    """Every committed repetition whose files differ from its commit marker (or whose
    marker is not a repetition's result), and every one `meta` records as ended whose
    marker is gone, as "rep-NNN: what differs"."""
    out = [
        f"{rd.name}: {problem}"
        for rd in sorted(run.glob("rep-[0-9][0-9][0-9]"))
        if (rd / "result.json").exists() and (problem := verify(rd)) is not None
    ]
    for r, status in enumerate(meta.repetition_status if meta is not None else [], 1):
        marker = rep_dir(run, r) / "result.json"
        if status != "not run" and not marker.exists():
            out.append(
                f"{marker.parent.name}: no commit marker ({marker}), though meta.json "
                f"records the repetition {status}"
            )
    return sorted(out)


def _digest_and_sync(path: Path) -> tuple[int, str]:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
        os.fsync(f.fileno())
    return path.stat().st_size, h.hexdigest()


def commit(rd: Path, result: dict) -> None:
    """The repetition's commit marker, written last: every file of the repetition is
    synced, then result.json lists them (size, SHA-256) and is itself synced. Without
    it, or when a file no longer matches it, the repetition is not done."""
    files = []
    try:
        for p in sorted(rd.rglob("*")):
            if p.is_file() and p.name != "result.json":
                size, digest = _digest_and_sync(p)
                files.append({"path": str(p.relative_to(rd)), "bytes": size, "sha256": digest})
        for d in sorted({p.parent for p in rd.rglob("*")} | {rd}):
            sync_dir(d)
    except OSError as e:
        raise OutputError(rd, f"cannot sync the repetition's files: {os_reason(e)}") from None
    write_json(rd / "result.json", {**result, "files": files})


def verify(rd: Path) -> str | None:
    """None when the repetition's files are those its commit marker lists, else what
    differs (first problem only)."""
    try:
        res = read_record(rd / "result.json", RepResult)
    except FileNotFoundError:
        return "no commit marker (result.json)"
    except RunDirError as e:
        return str(e)
    for f in res.files:  # runs before markers listed files: nothing to check
        p = rd / f.path
        if not p.is_file():
            return f"{f.path} is missing"
        size, digest = _digest_and_sync(p)
        if size != f.bytes:
            return f"{f.path} has {size} bytes, {f.bytes} when committed"
        if digest != f.sha256:
            return f"{f.path} changed since it was committed (SHA-256 differs)"
    return None


def check_space(run: Path) -> None:
    """`OutputError` when the run directory's filesystem is (nearly) full: what the
    programs of the last repetition wrote may be cut."""
    try:
        st = os.statvfs(run)
    except OSError as e:
        raise OutputError(run, f"cannot be read: {os_reason(e)}") from None
    if st.f_bavail * st.f_frsize < MIN_FREE_BYTES:
        raise OutputError(
            run,
            f"its filesystem is full ({st.f_bavail * st.f_frsize} bytes "
            "free): the run stopped; free space and resume it (--resume)",
        )


def rep_dir(run: Path, repetition: int) -> Path:
    return run / f"rep-{repetition:03d}"


def rep_result(run: Path, repetition: int) -> dict | None:
    """The repetition's result.json as written, once checked against `RepResult`; None
    when it has none."""
    path = rep_dir(run, repetition) / "result.json"
    return read_checked(path, RepResult) if path.exists() else None


def rep_record(run: Path, repetition: int) -> RepResult | None:
    """The repetition's result.json, typed; None when it has none."""
    path = rep_dir(run, repetition) / "result.json"
    return read_record(path, RepResult) if path.exists() else None


def repetitions_done(run: Path, total: int, say=None) -> set[int]:
    """Repetitions that finished (ok, or failed for a reason of the experiment) and whose
    files match their commit marker: --resume does not redo them. One that failed
    because its environment broke (an emulator or worker died, the disk filled) is
    redone; so is one whose files changed, and `say` is told why."""
    done = set()
    for r in range(1, total + 1):
        rd = rep_dir(run, r)
        if not (rd / "result.json").exists():
            continue
        problem = verify(rd)
        if problem is None:
            res = read_record(rd / "result.json", RepResult)
            if res.status == "ok" or (res.status == "failed" and not res.environment):
                done.add(r)
        elif say is not None:
            say(f"repetition {r}: {problem}: it is redone")
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
    """meta.json of the run to resume, as written (the runner goes on with it), once it
    is checked: a run description of this format (`RunMeta`), of the same scenario."""
    meta_path = run / "meta.json"
    if not meta_path.exists():
        raise RunDirError(f"{run}: not a run directory (no meta.json); nothing to resume")
    meta = read_checked(meta_path, RunMeta)
    if meta["scenario_hash"] != scenario_hash:
        raise RunDirError(
            f"{run}: it was run with another scenario (hash "
            f"{meta['scenario_hash'][:12]}…, this one {scenario_hash[:12]}…); "
            "resume needs the same file"
        )
    return meta
