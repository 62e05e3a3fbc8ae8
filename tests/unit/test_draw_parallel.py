"""A report's figures drawn side by side (itb.draw.parallel): every job's result in the
order given, drawn in forked processes on a machine of two cores or more, and a figure
that fails raises its own error in the caller."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import pytest

from itb.draw import parallel
from itb.draw.parallel import draw_all


def _draw(path: Path) -> Path:
    path.write_text(str(os.getpid()))
    return path


def _nothing() -> None:
    return None


def _fails() -> Path:
    raise ValueError("no such column: queue_bytes")


def test_results_come_in_the_jobs_order_and_from_other_processes(tmp_path, monkeypatch):
    monkeypatch.setattr(parallel, "usable_cores", lambda: 2)
    jobs = [partial(_draw, tmp_path / f"{i}.png") for i in range(5)] + [_nothing]
    got = draw_all(jobs)
    assert got == [tmp_path / f"{i}.png" for i in range(5)] + [None]
    pids = {int((tmp_path / f"{i}.png").read_text()) for i in range(5)}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2  # two workers at most


def test_one_core_or_one_figure_draws_in_this_process(tmp_path, monkeypatch):
    monkeypatch.setattr(parallel, "usable_cores", lambda: 1)
    (p,) = [x for x in draw_all([partial(_draw, tmp_path / "a.png")]) if x]
    assert int(p.read_text()) == os.getpid()
    monkeypatch.setattr(parallel, "usable_cores", lambda: 8)
    (p,) = draw_all([partial(_draw, tmp_path / "b.png")])
    assert p is not None and int(p.read_text()) == os.getpid()


def test_a_figure_that_fails_raises_its_error_in_the_caller(tmp_path, monkeypatch):
    monkeypatch.setattr(parallel, "usable_cores", lambda: 2)
    with pytest.raises(ValueError, match="queue_bytes"):
        draw_all([partial(_draw, tmp_path / "a.png"), _fails])
    assert parallel._JOBS == ()  # nothing kept for the next report


def test_the_workers_die_with_the_process_that_forked_them(tmp_path):
    # a report's drawing when its engine is SIGKILLed: no worker goes on drawing
    import signal
    import subprocess
    import sys
    import time

    script = f"""
import os, time
from functools import partial
from itb.draw import parallel

def slow(i):
    open({str(tmp_path)!r} + f"/w{{i}}", "w").write(str(os.getpid()))
    time.sleep(60)

parallel.usable_cores = lambda: 2
parallel.draw_all([partial(slow, i) for i in range(2)])
"""
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 30
        while len(list(tmp_path.glob("w*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = [int(p.read_text()) for p in tmp_path.glob("w*")]
        assert len(workers) == 2
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 2
    alive = workers
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [w for w in workers if Path(f"/proc/{w}").exists() and not _zombie(w)]
    assert alive == [], "workers outlived their parent"


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
