"""Fault injection: a second command, SIGKILL and SIGTERM of the engine, a full disk,
foreign things next to ITB's, a killed emulator. Each fault is real (signals, a small
tmpfs, another process); every test cleans up, pass or fail.

The repetitions are short (1 MB transfers 100 ms apart): a fault needs a run that goes
through its stages, not a long one."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from itb.backends import procs

from .conftest import FLOW, engine_scenario, itb
from .test_engine import no_namespaces_left

# test_engine's scenario, with its two transfers 100 ms apart (there: 500 ms)

BIC = """
[[transfer]]
id = "bic"
src = ["l1"]
dst = ["r1"]
at = "0s"
volume = "{volume}"
cc = "bic"
"""


def scenario(tmp: Path, reps=2, volume="1MB", extra="", name="scenario.toml") -> Path:
    return engine_scenario(tmp / name, reps, volume, "100ms", extra=extra)


class Engine:
    """`itb run` in the background; its stderr lines are collected as they come."""

    def __init__(self, args: list[str], env: dict):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "itb.cli", *args],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.lines.append(line)

    def wait_for(self, test, timeout=120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if test():
                return
            if self.proc.poll() is not None:
                raise AssertionError("the run ended first:\n" + "".join(self.lines[-20:]))
            time.sleep(0.02)
        raise AssertionError("timed out waiting:\n" + "".join(self.lines[-20:]))

    def said(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def finish(self, timeout=300) -> int:
        try:
            self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(timeout=5)
        return self.proc.returncode


def _net_ns(pid: str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return None


def itb_processes(state_dir: Path) -> list[str]:
    """Processes a run of this test started: its emulators (their config is under the
    test's state dir), node workers and flow endpoints, and anything in its namespaces."""
    found = []
    root_net = os.readlink("/proc/self/ns/net")
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{entry.name}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if (
            (str(state_dir) in cmd and "linkem" in cmd)
            or "itb.backends.hostside.worker" in cmd
            # a flow ITB started runs in a host's namespace (even one already deleted);
            # flow's own tests, in `make test`'s other lane, run on this machine's loopback
            or (str(FLOW) in cmd and _net_ns(entry.name) not in (root_net, None))
        ):
            found.append(f"{entry.name}: {cmd[:120]}")
    for line in subprocess.run(
        ["ip", "netns", "list"], capture_output=True, text=True
    ).stdout.splitlines():
        ns = line.split()[0] if line.strip() else ""
        if ns.startswith("itbt-"):
            for p in procs.pids_in(ns):
                try:
                    cmd = Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ")
                except OSError:
                    continue
                found.append(f"{p} in {ns}: {cmd.decode(errors='replace')[:120]}")
    return found


def committed_digests(run: Path) -> dict[str, str]:
    """SHA-256 of every file of the repetitions that have a commit marker."""
    out = {}
    for rd in sorted(run.glob("rep-*")):
        if (rd / "result.json").exists():
            for p in sorted(rd.rglob("*")):
                if p.is_file():
                    out[str(p.relative_to(run))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def statuses(run: Path) -> list[str]:
    return json.loads((run / "meta.json").read_text())["repetition_status"]


def itb_at_once(
    *commands: tuple[list[str], dict], timeout=120
) -> list[subprocess.CompletedProcess]:
    """`itb` commands (arguments, environment) started together, their results in order:
    each spends 1.5-2.5 s starting Python; one after the other, they would need a run
    twice as long to be sure to happen during it."""
    started = [
        subprocess.Popen(
            [sys.executable, "-m", "itb.cli", *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args, env in commands
    ]
    try:
        results = []
        for p in started:
            out, err = p.communicate(timeout=timeout)
            results.append(subprocess.CompletedProcess(p.args, p.returncode, out, err))
        return results
    finally:
        for p in started:
            if p.poll() is None:
                p.kill()
                p.wait()


def test_a_second_command_during_a_run_changes_nothing(engine_env, isolated):
    # ~4 s per repetition (the 12 MB BIC transfer): ~12 s from the first one's start
    # until the run lets go of itb_bic, the commands (started together) take 2-5 s
    sc = scenario(isolated, reps=3, extra=BIC.format(volume="12MB"))
    run = isolated / "run"
    first = Engine(["run", str(sc), "--out", str(run)], engine_env)
    try:
        first.wait_for(lambda: (run / "rep-001" / "events.json").exists())
        other = scenario(isolated, reps=1, name="other.toml")
        refused = (
            ["run", str(other), "--out", str(isolated / "run2")],
            ["testbed", "up", "--pairs", "1"],
            ["clean"],
        )
        *results, res = itb_at_once(
            *((args, engine_env) for args in refused),
            (["clean"], {**engine_env, "ITB_PREFIX": "itbtother"}),
        )
        for args, r in zip(refused, results):
            assert r.returncode == 3, (args, r.stderr)
            assert "in use by" in r.stderr and "nothing was changed" in r.stderr, r.stderr
        assert not (isolated / "run2").exists()
        assert res.returncode == 0, res.stderr
        assert "left itb_bic: in use by PID" in res.stdout, res.stdout
        assert first.proc.poll() is None, "the run ended before the commands were tried"
    finally:
        rc = first.finish()
    assert rc == 0, "".join(first.lines[-30:])
    assert statuses(run) == ["ok", "ok", "ok"]
    assert no_namespaces_left() and itb_processes(isolated / "state") == []


KILL_POINTS = {
    "configuration": lambda e, run: e.said("stage: configuration"),
    "mid-repetition": lambda e, run: (run / "rep-002" / "events.json").exists(),
    "gathering": lambda e, run: e.said("stage: gathering 1/2"),
    "analysis": lambda e, run: e.said("stage: analysis"),
    "report": lambda e, run: (run / "report").exists(),
}


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_sigkill_of_the_engine_leaves_nothing_and_resume_completes(engine_env, isolated, point):
    sc = scenario(isolated, reps=2)
    run = isolated / "run"
    e = Engine(["run", str(sc), "--out", str(run)], engine_env)
    try:
        e.wait_for(lambda: KILL_POINTS[point](e, run), timeout=180)
        e.proc.kill()
        killed = time.monotonic()
        e.proc.wait()
        left = itb_processes(isolated / "state")
        while left and time.monotonic() - killed < 1.0:
            time.sleep(0.05)
            left = itb_processes(isolated / "state")
        assert left == [], f"alive 1 s after SIGKILL at {point}: {left}"
    finally:
        e.finish()
    before = committed_digests(run)
    res = itb("clean", env=engine_env)
    assert res.returncode == 0, res.stderr
    assert no_namespaces_left() and itb_processes(isolated / "state") == []
    res = itb("run", str(sc), "--out", str(run), "--resume", env=engine_env, timeout=300)
    assert res.returncode == 0, res.stderr + res.stdout
    assert statuses(run) == ["ok", "ok"]
    after = committed_digests(run)
    assert {k: after.get(k) for k in before} == before  # committed data untouched
    assert no_namespaces_left()


def test_sigterm_stops_cleanly_and_the_run_resumes(engine_env, isolated):
    sc = scenario(isolated, reps=2)
    run = isolated / "run"
    e = Engine(["run", str(sc), "--out", str(run)], engine_env)
    try:
        e.wait_for(lambda: (run / "rep-001" / "events.json").exists())
        time.sleep(0.5)
        e.proc.send_signal(signal.SIGTERM)
    finally:
        rc = e.finish()
    assert rc == 143, "".join(e.lines[-20:])
    meta = json.loads((run / "meta.json").read_text())
    assert meta["status"] == "incomplete"
    assert no_namespaces_left() and itb_processes(isolated / "state") == []
    res = itb("run", str(sc), "--out", str(run), "--resume", env=engine_env, timeout=300)
    assert res.returncode == 0, res.stderr
    assert statuses(run) == ["ok", "ok"]


# A repetition of `scenario` leaves ~160 kB in its directory (mostly the emulator's
# 1 ms rows), the run ~35 kB before it. The run stops after a repetition that leaves
# less than rundir.MIN_FREE_BYTES (1 MiB) free: on this tmpfs, the second (~350 kB
# used: ~930 kB free; the first left ~1090 kB).
SMALL_DISK = "1280k"


def test_a_full_disk_stops_the_run_and_resume_redoes_what_was_cut(engine_env, isolated):
    reps = 2
    sc = scenario(isolated, reps=reps)
    small = isolated / "small"
    small.mkdir()
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SMALL_DISK}", "tmpfs", str(small)], check=True
    )
    try:
        run = small / "run"
        res = itb("run", str(sc), "--out", str(run), "--seed", "7", env=engine_env, timeout=300)
        assert res.returncode == 3, res.stderr + res.stdout
        errors = [ln for ln in res.stderr.splitlines() if "error:" in ln]
        assert len(errors) == 1 and ("full" in errors[0] or "No space" in errors[0]), res.stderr
        assert "Traceback" not in res.stderr
        assert no_namespaces_left() and itb_processes(isolated / "state") == []
        for rd in run.glob("rep-*"):  # whatever is marked done is whole
            if (rd / "result.json").exists():
                from itb import rundir

                assert rundir.verify(rd) is None, rd
        assert not list(run.rglob("*.tmp"))
        subprocess.run(["mount", "-o", "remount,size=64m", str(small)], check=True)
        res = itb(
            "run",
            str(sc),
            "--out",
            str(run),
            "--seed",
            "7",
            "--resume",
            env=engine_env,
            timeout=400,
        )
        assert res.returncode == 0, res.stderr
        assert statuses(run) == ["ok"] * reps
        ref = isolated / "ref"
        res = itb("run", str(sc), "--out", str(ref), "--seed", "7", env=engine_env, timeout=400)
        assert res.returncode == 0, res.stderr
        # The resumed run's tables are whole, as an uninterrupted run's are. Row counts
        # differ between two runs (each repetition lasts as long as its transfers), so
        # what is compared is what cannot vary: transfers and their volumes, and a
        # bottleneck series without gaps or stray rows that carried every byte.
        for d in (ref, run):
            transfers = pd.read_parquet(d / "transfers.parquet")
            assert transfers["ok"].all() and len(transfers) == 2 * reps, d
            assert_bottleneck_whole(pd.read_parquet(d / "bottleneck.parquet"), transfers)
        got, want = (
            pd.read_parquet(d / "transfers.parquet").sort_values(["repetition", "transfer"])
            for d in (run, ref)
        )
        assert got["transfer"].tolist() == want["transfer"].tolist()
        assert got["bytes"].tolist() == want["bytes"].tolist()
    finally:
        subprocess.run(["umount", "-l", str(small)], check=False)


def assert_bottleneck_whole(bottleneck: pd.DataFrame, transfers: pd.DataFrame) -> None:
    """Per repetition, the forward bottleneck series is one row per sampling interval
    (none missing, none stray), covers every transfer and forwarded every payload byte;
    so its row count is that repetition's length in intervals."""
    fwd = bottleneck[(bottleneck["link"] == "rl-rr") & (bottleneck["direction"] == "forward")]
    assert sorted(fwd["repetition"].unique()) == sorted(transfers["repetition"].unique())
    for rep, rows in fwd.groupby("repetition"):
        t = rows["t_ns"].to_numpy()
        interval_ns = round(rows["interval_s"].median() * 1e9)
        steps = set((t[1:] - t[:-1]).tolist())
        assert steps == {interval_ns}, f"repetition {rep}: steps {sorted(steps)[:5]} ns"
        mine = transfers[transfers["repetition"] == rep]
        assert t[0] <= mine["start_ns"].min() and t[-1] >= mine["end_ns"].max(), rep
        assert rows["bytes"].sum() >= mine["bytes"].sum(), f"repetition {rep}: bytes missing"


def test_report_names_a_damaged_file_and_resume_redoes_its_repetition(engine_env, isolated):
    sc = scenario(isolated, reps=2)
    run = isolated / "run"
    res = itb("run", str(sc), "--out", str(run), "--seed", "3", env=engine_env, timeout=300)
    assert res.returncode == 0, res.stderr
    recv = sorted((run / "rep-002" / "nodes").rglob("*.recv.csv"))[0]
    with open(recv, "a") as f:
        f.write("not,a,row\n")
    res = itb("report", str(run), env=engine_env)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    rel = recv.relative_to(run / "rep-002")
    assert f"rep-002: {rel} has" in res.stderr and "--resume" in res.stderr, res.stderr
    before = committed_digests(run)
    res = itb(
        "run", str(sc), "--out", str(run), "--seed", "3", "--resume", env=engine_env, timeout=300
    )
    assert res.returncode == 0, res.stderr
    assert "repetition 2:" in res.stderr and "it is redone" in res.stderr, res.stderr
    after = committed_digests(run)
    assert {k: v for k, v in after.items() if k.startswith("rep-001")} == {
        k: v for k, v in before.items() if k.startswith("rep-001")
    }  # the whole one kept
    assert itb("report", str(run), env=engine_env).returncode == 0
    (run / "transfers.parquet").write_bytes(b"PAR1 cut short")
    from itb import rundir

    with pytest.raises(rundir.RunDirError, match="transfers.parquet: not a readable Parquet"):
        rundir.read_table(run / "transfers.parquet")


ESCAPEE = """
[[command]]
id = "escapee"
host = "l1"
at = "0s"
argv = ["nsenter", "--net=/proc/{pid}/ns/net", "setsid", "-f", "sleep", "{secs}"]
"""


def sleepers(secs: int) -> list[int]:
    """PIDs of `sleep SECS`: a process that left its namespace and its parent."""
    want = f"sleep\0{secs}\0".encode()
    out = []
    for entry in os.scandir("/proc"):
        try:
            if entry.name.isdigit() and Path(entry.path, "cmdline").read_bytes() == want:
                out.append(int(entry.name))
        except OSError:
            continue
    return out


def test_a_daemonised_command_dies_with_the_testbed_cgroup(engine_env, isolated):
    """A command that forks into this test's namespace and a new session escapes both
    PR_SET_PDEATHSIG and the namespaces' process lists; the testbed's cgroup catches it,
    at the end of a run and at `itb clean` after the engine was SIGKILLed."""
    from itb.backends import cgroup

    group = cgroup.for_testbed()
    if group is None:
        pytest.skip("no cgroup v2 hierarchy")
    sc = scenario(isolated, reps=1, extra=ESCAPEE.format(secs=3171, pid=os.getpid()))
    try:
        res = itb("run", str(sc), "--out", str(isolated / "run"), env=engine_env, timeout=300)
        assert res.returncode == 0, res.stderr
        assert sleepers(3171) == [] and not group.exists()

        sc = scenario(
            isolated, reps=2, extra=ESCAPEE.format(secs=3172, pid=os.getpid()), name="again.toml"
        )
        e = Engine(["run", str(sc), "--out", str(isolated / "again")], engine_env)
        try:
            e.wait_for(lambda: sleepers(3172) != [])
            assert set(sleepers(3172)) <= set(cgroup.members(group))
            e.proc.kill()
        finally:
            e.finish()
        assert sleepers(3172), "nothing escaped: the test shows nothing"
        res = itb("clean", env=engine_env)
        assert res.returncode == 0, res.stderr
        assert sleepers(3172) == [] and not group.exists()
    finally:
        for pid in sleepers(3171) + sleepers(3172):
            os.kill(pid, signal.SIGKILL)


def test_clean_leaves_what_is_not_itbs(engine_env, isolated):
    state = isolated / "state" / "itbt"
    state.mkdir(parents=True)
    foreign_file = state / "notes.txt"
    foreign_file.write_text("mine")
    sleeper = subprocess.Popen(["sleep", "60"])
    subprocess.run(["ip", "netns", "add", "itbt-userns"], check=True)
    try:
        # A stale state: the emulator's PID is now the foreign `sleep` (another start time).
        (state / "state.json").write_text(
            json.dumps(
                {
                    "phase": "up",
                    "namespaces": [],
                    "emulators": [
                        {
                            "link": "rl-rr",
                            "ns": "itbt-em-rl-rr",
                            "pid": sleeper.pid,
                            "start": 1,
                            "log_dir": str(state / "emulators" / "rl-rr"),
                            "control": "x",
                        }
                    ],
                }
            )
        )
        res = itb("clean", env=engine_env)
        assert res.returncode == 0, res.stderr
        assert "itbt-userns" in res.stdout and "not created by ITB" in res.stdout
        assert sleeper.poll() is None, "a foreign process was killed"
        assert procs.ns_inode("itbt-userns") is not None, "a foreign namespace was removed"
        assert foreign_file.read_text() == "mine"
        assert not (state / "state.json").exists()
    finally:
        sleeper.kill()
        sleeper.wait()
        subprocess.run(["ip", "netns", "del", "itbt-userns"], check=False)


def test_a_killed_emulator_fails_the_repetition_within_a_second(engine_env, isolated):
    sc = scenario(isolated, reps=1, volume="20MB")
    run = isolated / "run"
    e = Engine(["run", str(sc), "--out", str(run)], engine_env)
    try:
        e.wait_for(lambda: (run / "rep-001" / "events.json").exists())
        time.sleep(1.5)
        state = json.loads((isolated / "state" / "itbt" / "state.json").read_text())
        pid = state["emulators"][0]["pid"]
        killed_ns = time.monotonic_ns()
        os.kill(pid, signal.SIGKILL)
    finally:
        rc = e.finish()
    assert rc == 1, "".join(e.lines[-20:])
    res = json.loads((run / "rep-001" / "result.json").read_text())
    assert res["status"] == "failed" and res["environment"] is True
    assert "link emulator" in res["reason"] and "SIGKILL" in res["reason"], res["reason"]
    assert (res["failed_ns"] - killed_ns) / 1e9 < 1.0
    assert no_namespaces_left()
