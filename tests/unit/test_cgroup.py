"""Removing a testbed's cgroup: ITB's own children first, a cgroup still populated by
exiting tasks waited for, a short EBUSY retried, anything else reported."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from itb.backends import cgroup
from itb.errors import BackendError


def fake(path: Path, populated: bool = False) -> Path:
    """A directory with the files of a cgroup v2 that no process is in."""
    path.mkdir()
    (path / "cgroup.procs").write_text("")
    (path / "cgroup.events").write_text(f"populated {int(populated)}\nfrozen 0\n")
    return path


def test_a_cgroup_still_populated_is_waited_for_and_ebusy_retried(tmp_path, monkeypatch):
    group = fake(tmp_path / "itb-t", populated=True)
    child = fake(group / "pace-cmd")
    calls = {"rmdir": 0, "events": 0}
    real_rmdir, real_read = Path.rmdir, Path.read_text

    def read_text(self, *a, **k):
        if self.name == "cgroup.events" and self.parent == group:
            calls["events"] += 1
            if calls["events"] >= 3:  # the exiting tasks are gone after two looks
                return "populated 0\nfrozen 0\n"
        return real_read(self, *a, **k)

    def rmdir(self):
        if self == group:
            calls["rmdir"] += 1
            if calls["rmdir"] < 3:
                raise OSError(errno.EBUSY, "Device or resource busy")
            for f in self.iterdir():  # a real cgroup's files go with it
                f.unlink()
        elif self == child:
            for f in self.iterdir():
                f.unlink()
        return real_rmdir(self)

    monkeypatch.setattr(Path, "read_text", read_text)
    monkeypatch.setattr(Path, "rmdir", rmdir)
    cgroup.kill(group)
    assert not group.exists() and calls["events"] >= 3 and calls["rmdir"] == 3


def test_a_cgroup_that_stays_populated_is_reported(tmp_path, monkeypatch):
    group = fake(tmp_path / "itb-t", populated=True)
    monkeypatch.setattr(cgroup, "KILL_TIMEOUT_S", 0.1)
    with pytest.raises(BackendError, match="still populated"):
        cgroup.kill(group)
    assert group.exists()
    assert cgroup.populated(group) and not cgroup.populated(tmp_path / "gone")
