"""Ownership: process identity that survives PID reuse, the prefix lock, commit markers."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from itb import rundir
from itb.backends import owner
from itb.errors import OutputError, ScenarioError
from itb.scenario.scenario import load_scenario


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("ITB_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("ITB_PREFIX", "itbu")
    return tmp_path / "state" / "itbu"


def test_a_process_is_its_pid_and_start_time():
    p = subprocess.Popen(["sleep", "30"])
    try:
        ident = owner.ProcessId.of(p.pid)
        assert ident is not None and ident.alive()
        assert not owner.ProcessId(p.pid, ident.start + 1).alive()  # a reused PID
    finally:
        p.kill()
        p.wait()
    assert not ident.alive()


def test_the_lock_refuses_another_process_and_is_reentrant(state):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent("""
        import sys, time
        from itb.backends import owner
        with owner.exclusive("test"):
            print("held", flush=True)
            time.sleep(30)
    """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(owner.Busy, match=rf"in use by .*PID {holder.pid}.*nothing was changed"):
            with owner.exclusive("itb clean"):
                pass
    finally:
        holder.kill()  # SIGKILL: the kernel releases the lock
        holder.wait()
    with owner.exclusive("a"):
        with owner.exclusive("b"):  # re-entrant in one process
            assert owner.held()
        assert owner.held()
    assert not owner.held() and not (state / "owner.json").exists()


def test_a_forked_child_does_not_keep_the_lock_once_its_parent_lets_go(state):
    # a report's figures are drawn in forked processes: one still drawing when its engine
    # is killed must not keep `itb clean` out (the lock goes with its owner)
    import os
    import signal

    r, w = os.pipe()
    with owner.exclusive("itb run"):
        child = os.fork()
        if child == 0:  # the forked child (past fork's hooks): says so, waits to be killed
            os.write(w, b"x")
            signal.pause()
            os._exit(0)
        assert os.read(r, 1) == b"x" and owner.held()
    try:
        # the child is alive, the parent let go: another command takes the lock
        with owner.exclusive("itb clean"):
            assert owner.held()
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        os.close(r)
        os.close(w)


def test_a_commit_marker_lists_files_and_catches_changes(tmp_path):
    rd = tmp_path / "rep-001"
    (rd / "nodes").mkdir(parents=True)
    (rd / "nodes" / "a.csv").write_text("t,bytes\n1,2\n")
    rundir.commit(rd, {"repetition": 1, "status": "ok"})
    marker = json.loads((rd / "result.json").read_text())
    assert [f["path"] for f in marker["files"]] == ["nodes/a.csv"]
    assert rundir.verify(rd) is None
    assert rundir.repetitions_done(tmp_path, 1) == {1}
    (rd / "nodes" / "a.csv").write_text("t,bytes\n1,2\n3,")  # cut / changed afterwards
    said = []
    assert rundir.repetitions_done(tmp_path, 1, said.append) == set()
    assert "nodes/a.csv has 14 bytes, 12 when committed" in said[0]


def test_a_failed_write_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "missing" / "meta.json"
    with pytest.raises(OutputError, match="missing/meta.json: cannot write"):
        rundir.write_json(target, {"a": 1})
    assert not list(tmp_path.rglob("*.tmp"))


def test_environment_failures_are_redone_experiment_failures_are_not(tmp_path):
    for r, extra in (
        (1, {"status": "failed", "environment": True}),
        (2, {"status": "failed", "environment": False}),
        (3, {"status": "interrupted"}),
    ):
        rd = rundir.rep_dir(tmp_path, r)
        rd.mkdir()
        rundir.commit(rd, {"repetition": r, **extra})
    assert rundir.repetitions_done(tmp_path, 3) == {2}


BASE = """
[experiment]
duration = "60s"
{exp}
[[transfer]]
src = "l1"
dst = "r1"
volume = "{volume}"
"""


@pytest.mark.parametrize(
    "exp,volume,field,why",
    [
        ("seed = 100000000000000000000000", "1MB", "experiment.seed", "between 0 and"),
        ("", "1000000000000000000B", "transfer[0].volume", "cannot arrive before the end"),
    ],
)
def test_numbers_that_cannot_work_are_refused_at_load(tmp_path, exp, volume, field, why):
    path = tmp_path / "s.toml"
    path.write_text(BASE.format(exp=exp, volume=volume))
    with pytest.raises(ScenarioError, match=f"{field.replace('[', '.').replace(']', '.')}.*{why}"):
        load_scenario(path)


def test_too_many_events_are_refused_at_load(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(
        '[experiment]\nduration = "600s"\n'
        + "".join(f'[[command]]\nhost = "l1"\nargv = ["true"]\nat = "{i}ms"\n' for i in range(1001))
    )
    with pytest.raises(ScenarioError, match="1001 timeline events .* at most 1000"):
        load_scenario(path)
