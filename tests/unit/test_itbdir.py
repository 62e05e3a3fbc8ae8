"""ITB's directory on an SSH host, its shell commands run here on a temporary directory
(the remote side is a local stand-in: the same argv, run by this machine's `sh`)."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from itb.backends.host import Completed
from itb.backends.ssh import itbdir
from itb.backends.ssh.remote import Remote
from itb.errors import CommandFailed


@dataclass
class LocalConn:
    name: str = "h1"
    user: str = "me"

    def run(self, argv, *, check=True, timeout=60, input=None) -> Completed:
        res = subprocess.run([str(a) for a in argv], capture_output=True, text=True)
        out = Completed(list(map(str, argv)), res.returncode, res.stdout, res.stderr)
        if check and res.returncode != 0:
            raise CommandFailed(self.name, out.argv, res.returncode, res.stderr)
        return out

    def read_text(self, path: str) -> str | None:
        try:
            return Path(path).read_text()
        except FileNotFoundError:
            return None


def remote(root: Path, uid: int | None = None) -> Remote:
    return Remote(LocalConn(), f"{root}/itbx", uid=os.getuid() if uid is None else uid)


def tree(d: Path) -> set[str]:
    return {str(p.relative_to(d)) for p in d.rglob("*")}


def test_create_makes_the_missing_ancestors_records_them_and_remove_takes_them_back(tmp_path):
    r = remote(tmp_path / "a" / "b")  # neither a nor a/b exists
    assert itbdir.status(r) == "absent"
    itbdir.create(r, {"pid": 1})
    assert itbdir.status(r) == "ours"
    mark = itbdir.marker(r)
    assert mark["parents"] == [str(tmp_path / "a"), str(tmp_path / "a" / "b")]
    assert mark["path"] == r.dir and set(itbdir.SUBDIRS) <= set(mark["entries"])
    assert tree(tmp_path) == {
        "a",
        "a/b",
        "a/b/itbx",
        "a/b/itbx/.itb-owner.json",
        "a/b/itbx/bin",
        "a/b/itbx/run",
        "a/b/itbx/emulators",
    }
    (Path(r.dir) / "run" / "rep-001").mkdir()
    (Path(r.dir) / "state.json").write_text("{}")
    assert itbdir.remove(r, mark) is None
    assert tree(tmp_path) == set()


def test_remove_leaves_a_file_it_did_not_create_with_its_directories(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "user.txt").write_text("keep")
    r = remote(shared)
    itbdir.create(r, {})
    assert itbdir.marker(r)["parents"] == []  # shared existed: not ITB's to remove
    (Path(r.dir) / "notes.txt").write_text("someone's")
    why = itbdir.remove(r, itbdir.marker(r))
    assert (
        why == f"host h1: {r.dir} holds files ITB did not create: they and the directory were left"
    )
    assert tree(tmp_path) == {"shared", "shared/user.txt", "shared/itbx", "shared/itbx/notes.txt"}


def test_an_ancestor_that_someone_filled_meanwhile_is_kept(tmp_path):
    r = remote(tmp_path / "a" / "b")
    itbdir.create(r, {})
    (tmp_path / "a" / "other.txt").write_text("x")
    assert itbdir.remove(r, itbdir.marker(r)) is None
    assert tree(tmp_path) == {"a", "a/other.txt"}  # a/b was empty and ITB's: gone


@pytest.mark.parametrize(
    "make, status",
    [
        (lambda d: d.mkdir(), "foreign"),
        (lambda d: d.write_text("x"), "notdir"),
        (lambda d: d.symlink_to("/"), "link"),
    ],
)
def test_a_directory_without_the_marker_is_not_ours(tmp_path, make, status):
    r = remote(tmp_path)
    make(Path(r.dir))
    assert itbdir.status(r) == status
    assert itbdir.foreign_reason(r, status).startswith(f"host h1: {r.dir} exists and is ")
    with pytest.raises(CommandFailed):  # never taken over
        itbdir.create(r, {})


def test_a_marker_that_names_another_directory_is_not_ours(tmp_path):
    r = remote(tmp_path)
    Path(r.dir).mkdir()
    (Path(r.dir) / itbdir.MARKER).write_text(json.dumps({"path": "/elsewhere", "entries": ["bin"]}))
    assert itbdir.status(r) == "ours" and itbdir.marker(r) is None


def test_remove_takes_only_the_entries_itb_creates_whatever_the_marker_lists(tmp_path):
    r = remote(tmp_path)
    itbdir.create(r, {})
    (tmp_path / "precious").mkdir()
    mark = {
        **itbdir.marker(r),
        "entries": ["bin", "..", "../precious", "/etc"],
        "parents": ["/", str(tmp_path.parent)],
    }
    (Path(r.dir) / "run" / "x").write_text("x")
    why = itbdir.remove(r, mark)  # run/ was not listed: kept, so is the directory
    assert why is not None and (tmp_path / "precious").is_dir()
    assert tree(tmp_path) == {"precious", "itbx", "itbx/run", "itbx/run/x", "itbx/emulators"}


def test_remote_dir_owned_by_another_user_is_a_problem_and_an_absent_one_is_not(tmp_path):
    r = remote(tmp_path, uid=os.getuid() + 1)
    why = itbdir.root_problem(r, itbdir.probe(r))
    assert why is not None and why.startswith(f"host h1: field remote_dir: {tmp_path} is owned by ")
    assert "not by the SSH user me" in why
    absent = remote(tmp_path / "nope", uid=os.getuid() + 1)
    assert itbdir.root_problem(absent, itbdir.probe(absent)) is None
    (tmp_path / "f").write_text("x")
    as_file = remote(tmp_path / "f")
    assert (
        itbdir.root_problem(as_file, itbdir.probe(as_file))
        == f"host h1: field remote_dir: {tmp_path / 'f'} is not a directory"
    )
