"""The run directory's format, in a low layer so that everything above reads it the same
way: its layout and commit markers (`layout`, whose functions are re-exported here),
its JSON records as typed, versioned models and their one reader (`records`), the
endpoints' summaries (`flow_summary`). See docs/run-directory.md."""

from itb.rundir.layout import (
    MIN_FREE_BYTES,
    check_space,
    commit,
    damaged,
    default_run_dir,
    open_for_resume,
    read_json,
    read_table,
    rep_dir,
    rep_record,
    rep_result,
    repetitions_done,
    sync_dir,
    verify,
    write_bytes,
    write_json,
    write_table,
)
from itb.rundir.records import FORMAT_VERSION, RunDirError

__all__ = [
    "FORMAT_VERSION",
    "MIN_FREE_BYTES",
    "RunDirError",
    "check_space",
    "commit",
    "damaged",
    "default_run_dir",
    "open_for_resume",
    "read_json",
    "read_table",
    "rep_dir",
    "rep_record",
    "rep_result",
    "repetitions_done",
    "sync_dir",
    "verify",
    "write_bytes",
    "write_json",
    "write_table",
]
