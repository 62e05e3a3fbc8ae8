"""`itb serve --db FILE` on files that are not its store, and its other arguments: each
refused with a message naming the file and why, the file left byte for byte as it was
(and none created), before anything listens."""

from __future__ import annotations

import resource
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.service.server import ITB, free_port


def serve(*args: str, preexec_fn=None) -> subprocess.CompletedProcess:
    argv = [str(ITB), "serve", "--port", str(free_port()), *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, preexec_fn=preexec_fn)


def other_apps_database(path: Path) -> bytes:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE meta (k TEXT, v TEXT)")  # a table of the same name, not ITB's
    db.execute("INSERT INTO meta VALUES ('owner', 'someone else')")
    db.commit()
    db.close()
    return path.read_bytes()


def format_one_store(path: Path) -> bytes:
    """A store as ITB wrote them before dates were integers (format 1)."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('format', '1')")
    db.execute("CREATE TABLE requests (id TEXT PRIMARY KEY, release_s REAL)")
    db.commit()
    db.close()
    return path.read_bytes()


@pytest.mark.parametrize(
    "kind, make, code, says",
    [
        ("a directory", lambda p: p.mkdir() or b"", 2, "is a directory"),
        ("a text file", lambda p: (p.write_text("notes\n"), p.read_bytes())[1], 2,
         "not a SQLite database"),
        ("another application's database", other_apps_database, 2, "another application"),
        ("a store of format 1", format_one_store, 2, "format 1"),
    ],
)  # fmt: skip
def test_a_db_that_is_not_an_itb_store_is_refused_and_left_unchanged(
    tmp_path, kind, make, code, says
):
    path = tmp_path / "x.db"
    before = make(path)
    res = serve("--db", str(path), "--link", "a=1Gbit")
    assert res.returncode == code and says in res.stderr and str(path) in res.stderr, res.stderr
    assert "serving" not in res.stdout
    if path.is_file():
        assert path.read_bytes() == before, kind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.db"], kind  # no -wal, no .lock


def test_a_read_only_db_is_refused_and_left_unchanged(tmp_path):
    path = tmp_path / "x.db"
    before = other_apps_database(path)
    path.write_bytes(b"")  # an empty file would be made a store: it cannot be written
    subprocess.run(["chattr", "+i", str(path)], check=True)  # (root ignores file modes)
    try:
        res = serve("--db", str(path), "--link", "a=1Gbit")
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)
    assert res.returncode == 3 and "cannot be opened for writing" in res.stderr, res.stderr
    assert path.read_bytes() == b"" and before


def test_a_new_db_on_a_full_disk_is_refused_and_not_left_behind(tmp_path):
    """A write past RLIMIT_FSIZE fails as on a full disk."""

    def full():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))

    path = tmp_path / "x.db"
    res = serve("--db", str(path), "--link", "a=1Gbit", preexec_fn=full)
    assert res.returncode == 3 and "cannot be written" in res.stderr, res.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args, says",
    [
        (["--hold", "inf"], "--hold"),
        (["--hold", "nan"], "--hold"),
        (["--margin", "nan"], "--margin"),
        (["--link", "a/b=1Gbit"], "--link"),
        (["--link", "<style>=1Gbit"], "--link"),
    ],
)
def test_bad_arguments_are_refused_before_the_store_is_made(tmp_path, args, says):
    link = [] if "--link" in args else ["--link", "a=1Gbit"]
    res = serve("--db", str(tmp_path / "x.db"), *link, *args)
    assert res.returncode == 2 and says in res.stderr, res.stderr
    assert list(tmp_path.iterdir()) == []
