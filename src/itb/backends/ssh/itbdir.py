"""ITB's directory on an SSH host, `<remote_dir>/<prefix>`: created by ITB, marked as its
own, and removed entry by entry as recorded — never a directory ITB did not make.

- `create` makes the directory with `mkdir` (not `-p`: an existing one is never taken
  over) after the ancestors of `remote_dir` that were missing (each recorded), and
  writes the owner marker `.itb-owner.json` in it before anything else: the entries ITB
  creates there (`ENTRIES`) and the ancestors it created.
- `remove` checks the marker first: a directory without it (or whose marker names
  another path) is left alone, whatever it holds. Otherwise it removes the recorded
  entries, the marker, then the directory and the recorded ancestors with `rmdir`,
  which removes only empty directories: a file someone else put there keeps them.
- `root_problem` says why `remote_dir` cannot be used on the host: it exists but is not
  a directory, or is owned by neither the SSH user nor root-for-root.

Every command is an argv list; the shell snippets are constants that take the paths as
positional parameters.
"""

from __future__ import annotations

import json
import posixpath
import time
from dataclasses import dataclass

from itb.backends.ssh.remote import PROCS_FILE, Remote

MARKER = ".itb-owner.json"
STATE_FILE = "state.json"
# everything ITB creates in its directory, and nothing else is ever removed from it
ENTRIES = ("bin", "run", "emulators", STATE_FILE, STATE_FILE + ".tmp", PROCS_FILE)
SUBDIRS = ("bin", "run", "emulators")

# Line 1: absent | ours | foreign | notdir | link (of ITB's directory, $1); line 2: the
# type, uid and owner of remote_dir ($3) or "-"; then "+A" for each ancestor A missing.
_PROBE = (
    "d=$1; m=$2; root=$3; shift 3; "
    'if [ -L "$d" ]; then echo link; elif [ -d "$d" ]; then '
    'if [ -f "$d/$m" ]; then echo ours; else echo foreign; fi; '
    'elif [ -e "$d" ]; then echo notdir; else echo absent; fi; '
    'stat -L -c "%F|%u|%U" -- "$root" 2>/dev/null || echo -; '
    'for a; do [ -e "$a" ] || [ -L "$a" ] || echo "+$a"; done'
)
# $1 ITB's directory, $2 its marker's text, $3 the user to give them to (or ""), then
# the missing ancestors to create, shallowest first. Stops at the first failure.
_CREATE = (
    "set -e; d=$1; mk=$2; u=$3; shift 3; "
    'for p; do mkdir -- "$p"; done; '
    f'mkdir -- "$d"; printf "%s\\n" "$mk" > "$d/{MARKER}"; '
    + "mkdir -- "
    + " ".join(f'"$d/{x}"' for x in SUBDIRS)
    + "; "
    + 'if [ -n "$u" ]; then chown -- "$u" "$@" "$d" '
    + " ".join(f'"$d/{x}"' for x in (MARKER, *SUBDIRS))
    + "; fi"
)
# $1 ITB's directory, then its recorded entries, "::", the ancestors ITB created, deepest
# first. Prints "kept" when the directory holds something else (it and they stay).
_REMOVE = (
    "d=$1; shift; "
    'while [ $# -gt 0 ] && [ "$1" != :: ]; do rm -rf -- "$d/$1"; shift; done; '
    "[ $# -gt 0 ] && shift; "
    f'rm -f -- "$d/{MARKER}"; '
    'if ! rmdir -- "$d" 2>/dev/null; then echo kept; exit 0; fi; '
    'for p; do rmdir -- "$p" 2>/dev/null || break; done'
)


@dataclass(frozen=True)
class Probe:
    """What one command saw on the host: ITB's directory's status, remote_dir's type
    and owner ("kind|uid|user", None when absent), the missing ancestors of it."""

    status: str
    root: str | None
    missing: tuple[str, ...]


def root_of(r: Remote) -> str:
    return posixpath.dirname(r.dir)


def probe(r: Remote) -> Probe:
    lines = r.run(
        ["sh", "-c", _PROBE, "sh", r.dir, MARKER, root_of(r), *_ancestors(root_of(r))]
    ).stdout.split("\n")
    root = lines[1].strip() if len(lines) > 1 else "-"
    return Probe(
        lines[0].strip() or "absent",
        None if root in ("", "-") else root,
        tuple(x[1:] for x in lines[2:] if x.startswith("+")),
    )


def status(r: Remote) -> str:
    """absent, ours (it has the owner marker), foreign (a directory without it), notdir
    (a file or other) or link (a symbolic link: never followed)."""
    return probe(r).status


def marker(r: Remote) -> dict | None:
    """The owner marker when it is ITB's for this very directory, else None."""
    try:
        data = json.loads(r.conn.read_text(f"{r.dir}/{MARKER}") or "null")
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("path") != r.dir:
        return None
    return data


def foreign_reason(r: Remote, st: str) -> str:
    what = {
        "foreign": "a directory without ITB's owner marker",
        "notdir": "not a directory",
        "link": "a symbolic link",
    }.get(st, st)
    return f"host {r.name}: {r.dir} exists and is {what}: ITB did not create it and leaves it alone"


def root_problem(r: Remote, seen: Probe) -> str | None:
    """Why remote_dir cannot hold ITB's directory on this host (None: it can, or ITB
    will create it)."""
    if seen.root is None:
        return None  # absent: ITB creates it (and records that it did)
    parts = seen.root.split("|")
    root = root_of(r)
    if len(parts) != 3 or parts[0] != "directory":
        return f"host {r.name}: field remote_dir: {root} is not a directory"
    uid, owner = parts[1], parts[2]
    if uid != str(r.uid):
        return (
            f"host {r.name}: field remote_dir: {root} is owned by {owner}, not by the "
            f"SSH user {r.conn.user}: ITB works only in a directory of its user's or one "
            "it creates (choose another remote_dir, or give it to that user)"
        )
    return None


def create(r: Remote, engine: dict) -> None:
    """Creates ITB's directory (with the ancestors of remote_dir that are missing), its
    marker and its subdirectories, in one command (`CommandFailed` if any step fails:
    an existing directory is never taken over)."""
    parents = list(probe(r).missing)  # shallowest first
    text = json.dumps(
        {
            "itb_dir": 1,
            "path": r.dir,
            "created": time.time(),
            "engine": engine,
            "entries": list(ENTRIES),
            "parents": parents,
        }
    )
    r.run(["sh", "-c", _CREATE, "sh", r.dir, text, r.conn.user if r.sudo else "", *parents])


def remove(r: Remote, mark: dict) -> str | None:
    """Removes what the marker `mark` (read from r.dir, see `marker`) records; returns
    why something was left (None: all gone)."""
    entries = [e for e in mark.get("entries") or [] if e in ENTRIES]
    root = root_of(r)
    parents = [p for p in mark.get("parents") or [] if _is_ancestor(p, root)]
    res = r.run(["sh", "-c", _REMOVE, "sh", r.dir, *entries, "::", *reversed(parents)])
    if res.stdout.strip() == "kept":
        return (
            f"host {r.name}: {r.dir} holds files ITB did not create: they and the "
            "directory were left"
        )
    return None


def _ancestors(path: str) -> list[str]:
    """'/a/b/c' → ['/a', '/a/b', '/a/b/c']."""
    parts = path.strip("/").split("/")
    return ["/" + "/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _is_ancestor(p: str, root: str) -> bool:
    return isinstance(p, str) and p in _ancestors(root)
