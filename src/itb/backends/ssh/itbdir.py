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

from itb.backends.ssh.remote import PROCS_FILE, Remote

MARKER = ".itb-owner.json"
STATE_FILE = "state.json"
# everything ITB creates in its directory, and nothing else is ever removed from it
ENTRIES = ("bin", "run", "emulators", STATE_FILE, STATE_FILE + ".tmp", PROCS_FILE)
SUBDIRS = ("bin", "run", "emulators")

# prints one word: absent | ours | foreign | notdir | link
_STATUS = ('if [ -L "$1" ]; then echo link; elif [ -d "$1" ]; then '
           'if [ -f "$1/$2" ]; then echo ours; else echo foreign; fi; '
           'elif [ -e "$1" ]; then echo notdir; else echo absent; fi')
_MISSING = 'for d; do [ -e "$d" ] || [ -L "$d" ] || echo "$d"; done'


def root_of(r: Remote) -> str:
    return posixpath.dirname(r.dir)


def status(r: Remote) -> str:
    """absent, ours (it has the owner marker), foreign (a directory without it), notdir
    (a file or other) or link (a symbolic link: never followed)."""
    return r.run(["sh", "-c", _STATUS, "sh", r.dir, MARKER]).stdout.strip() or "absent"


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
    what = {"foreign": "a directory without ITB's owner marker",
            "notdir": "not a directory", "link": "a symbolic link"}.get(st, st)
    return (f"host {r.name}: {r.dir} exists and is {what}: ITB did not create it and "
            "leaves it alone")


def root_problem(r: Remote) -> str | None:
    """Why remote_dir cannot hold ITB's directory on this host (None: it can, or ITB
    will create it)."""
    root = root_of(r)
    res = r.run(["stat", "-L", "-c", "%F %u %U", "--", root], check=False)
    if res.returncode != 0:
        return None  # absent: ITB creates it (and records that it did)
    kind_owner = res.stdout.strip().rsplit(" ", 2)
    if len(kind_owner) != 3 or kind_owner[0] != "directory":
        return f"host {r.name}: field remote_dir: {root} is not a directory"
    uid, owner = kind_owner[1], kind_owner[2]
    if uid != str(r.uid):
        return (f"host {r.name}: field remote_dir: {root} is owned by {owner}, not by the "
                f"SSH user {r.conn.user}: ITB works only in a directory of its user's or one "
                "it creates (choose another remote_dir, or give it to that user)")
    return None


def create(r: Remote, engine: dict) -> None:
    """Creates ITB's directory, its marker and its subdirectories (`BackendError`-free
    unless a command fails; the caller checked `status` is absent)."""
    root = root_of(r)
    chain = _ancestors(root)
    missing = r.run(["sh", "-c", _MISSING, "sh", *chain]).stdout.split("\n")
    parents = [p for p in chain if p in missing]
    for p in parents:  # shallowest first
        r.run(["mkdir", "--", p])
        if r.sudo:
            r.run(["chown", "--", r.conn.user, p])
    r.run(["mkdir", "--", r.dir])  # fails if it appeared meanwhile: never taken over
    if r.sudo:
        r.run(["chown", "--", r.conn.user, r.dir])
    r.conn.write_text(f"{r.dir}/{MARKER}", json.dumps(
        {"itb_dir": 1, "path": r.dir, "created": time.time(), "engine": engine,
         "entries": list(ENTRIES), "parents": parents}, indent=1))
    r.run(["mkdir", "--", *(f"{r.dir}/{d}" for d in SUBDIRS)])
    if r.sudo:
        r.run(["chown", "--", r.conn.user, *(f"{r.dir}/{d}" for d in SUBDIRS)])


def remove(r: Remote) -> str | None:
    """Removes what the marker records; returns why something was left (None: all gone)."""
    st = status(r)
    if st == "absent":
        return None
    if st != "ours":
        return foreign_reason(r, st)
    mark = marker(r)
    if mark is None:
        return (f"host {r.name}: {r.dir}/{MARKER} does not name this directory: left alone")
    entries = [e for e in mark.get("entries") or [] if e in ENTRIES]
    if entries:
        r.run(["rm", "-rf", "--", *(f"{r.dir}/{e}" for e in entries)])
    r.run(["rm", "-f", "--", f"{r.dir}/{MARKER}"])
    left = None
    if r.run(["rmdir", "--", r.dir], check=False).returncode != 0:
        left = (f"host {r.name}: {r.dir} holds files ITB did not create: they and the "
                "directory were left")
    root = root_of(r)
    for p in reversed([p for p in mark.get("parents") or [] if _is_ancestor(p, root)]):
        if r.run(["rmdir", "--", p], check=False).returncode != 0:
            break  # not empty (another prefix's directory, a user's file): kept
    return left


def _ancestors(path: str) -> list[str]:
    """'/a/b/c' → ['/a', '/a/b', '/a/b/c']."""
    parts = path.strip("/").split("/")
    return ["/" + "/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _is_ancestor(p: str, root: str) -> bool:
    return isinstance(p, str) and p in _ancestors(root)
