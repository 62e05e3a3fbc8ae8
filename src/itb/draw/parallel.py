"""A report's figures drawn side by side: each figure is independent of the others and
matplotlib holds the interpreter while it draws, so they are drawn in forked processes
(which inherit the tables already in memory: nothing is pickled but each figure's path).
The workers die with the process that forked them (PR_SET_PDEATHSIG: a killed engine
leaves none drawing) and hold none of its locks (itb.backends.owner closes its copies
in every forked child).

Drawn in this process instead: a single figure, a machine of one core, and a process that
is itself a worker of a pool (a simulated sweep's cell: its pool already has a process
per core)."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from itb.backends import owner
from itb.backends.facts import usable_cores

Job = Callable[[], Path | None]  # draws one figure; its PNG's path, None if nothing to draw

_JOBS: Sequence[Job] = ()  # what the forked workers draw, by index


def _draw(i: int) -> Path | None:
    return _JOBS[i]()


def draw_all(jobs: Sequence[Job]) -> list[Path | None]:
    """Every job's result, in order. A figure that fails raises its error here."""
    global _JOBS
    workers = min(len(jobs), usable_cores())
    if workers < 2 or multiprocessing.parent_process() is not None:
        return [job() for job in jobs]
    _JOBS = jobs  # set before the workers are forked (on the first submission)
    try:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(
            workers, mp_context=ctx, initializer=owner.die_with, initargs=(os.getpid(),)
        ) as pool:
            return list(pool.map(_draw, range(len(jobs))))
    finally:
        _JOBS = ()
