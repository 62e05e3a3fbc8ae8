"""A sweep's simulated cells run in parallel (docs/simulation.md): a simulation uses one
core and nothing of the machine's network, so its cells run side by side, each cell's
repetitions in order in one worker (they share the cell's run directory): on this
machine's cores (`concurrent.futures`, one process per job), or on a Dask cluster
(`dask.distributed`, `--dask ADDRESS`; its workers see the same files). Emulated cells
never run beside them: the sweep runs those first, one at a time (itb.sweep.sweep).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

from itb import rundir
from itb.backends import owner
from itb.backends.facts import usable_cores
from itb.backends.registry import Backend, named
from itb.errors import BackendError, PreflightError
from itb.say import Say

# set in a worker of this machine's pool once a repetition anywhere was interrupted (a
# Ctrl-C reaches every worker, but not the cells a worker starts after it)
_STOP: Any = None


def _worker(stop: Any, parent: int) -> None:
    global _STOP
    _STOP = stop
    owner.die_with(parent)  # a killed sweep leaves no worker (its simulator dies with it)


def run_cell(
    scenario: str, run_dir: str, reps: Sequence[int], analyse, backend: Backend | None = None
) -> list[tuple]:
    """In a worker: the cell's repetitions in order, each a (resumed) run on `backend`
    (None: simulated);
    [(repetition, status, reason)]. Stops at the first interrupted one, or before any
    once the sweep was stopped."""
    from itb.engine import runner
    from itb.scenario.scenario import load_scenario

    out: list[tuple] = []
    for r in reps:
        if _STOP is not None and _STOP.is_set():
            break
        d = Path(run_dir)
        opts = runner.RunOptions(
            out=d,
            repetitions=r,
            resume=(d / "meta.json").exists(),
            analyse=analyse,
            backend=backend or named("sim"),
        )
        res = runner.run(load_scenario(scenario), opts)
        rep = res.repetitions[r - 1] if len(res.repetitions) >= r else {}
        out.append((r, rep.get("status", "not run"), rep.get("reason")))
        if out[-1][1] in ("interrupted", "not run"):  # stopped: the rest of the cell too,
            if _STOP is not None:  # and every cell after it
                _STOP.set()
            break
    return out


def workers(jobs: int, cells: int, cores: int, fit: int | None = None) -> tuple[int, list[str]]:
    """How many cells run side by side on this machine: `jobs`, but never more than its
    cores (a simulation keeps one busy), the cells, or the simulations its memory holds
    at once (`fit`, from their estimates); and a note for each cap that applied."""
    n, notes = max(1, jobs), []
    if n > cores:
        n = cores
        notes.append(f"--jobs {jobs}: capped at this machine's {cores} core(s)")
    if fit is not None and n > max(1, fit):
        n = max(1, fit)
        notes.append(
            f"{n} simulation(s) at a time: what this machine's memory holds of the largest cell"
        )
    return min(n, max(1, cells)), notes


DASK_TIMEOUT_S = 5  # connecting to a Dask scheduler: an answer takes milliseconds


def check_dask(address: str) -> None:
    """A Dask scheduler answers at `address` (within DASK_TIMEOUT_S), or `BackendError`
    (exit 3) saying so; dask.distributed missing is a `PreflightError` (exit 4)."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise PreflightError("--dask needs dask.distributed: pip install -e '.[sim]'") from None
    try:
        with Client(address, timeout=f"{DASK_TIMEOUT_S}s"):
            pass
    except Exception as e:  # (refused, timed out, or something else answers: its bytes
        # read as a Dask frame's length made distributed ask numpy for 3 EiB)
        raise BackendError(
            f"--dask: no Dask scheduler answers at {address} within {DASK_TIMEOUT_S} s "
            f"({type(e).__name__}: {str(e)[:200]})"
        ) from None


def run_cells(
    cells: dict[str, list[int]],
    scenario: Callable[[str], Path],
    run_dir: Callable[[str], Path],
    analyse,
    say: Say,
    jobs: int,
    dask: str | None = None,
    backend: Backend | None = None,
) -> bool:
    """Runs each cell's repetitions (name → repetitions) in parallel on `backend` (None:
    simulated), on `jobs` cores or the Dask cluster at `dask`; whether every repetition
    ended (a failed one ended; an interrupted one did not)."""
    backend = backend or named("sim")
    args = [
        (name, (str(scenario(name)), str(run_dir(name)), reps, analyse, backend))
        for name, reps in cells.items()
    ]
    if not dask:
        fit = backend.cells_at_once([a[0] for _n, a in args])
        jobs, notes = workers(jobs, len(args), usable_cores(), fit)
        for note in notes:
            say(note)
    say(
        f"simulating {len(args)} cell(s) in parallel on "
        + (f"the Dask cluster at {dask}" if dask else f"{jobs} core(s)")
    )
    if dask:
        results = _on_dask(dask, args)
    else:
        results = _on_cores(jobs, args, say)
    for name, got in results.items():
        for r, status, reason in got:
            say(f"      {name} repetition {r}: {status}" + (f": {reason}" if reason else ""))
    # (a cell stopped or never started has repetitions not done)
    return all(
        r in rundir.repetitions_done(run_dir(name), r) for name, reps in cells.items() for r in reps
    )


def _on_cores(jobs: int, args: list, say: Say) -> dict[str, list]:
    """The cells on this machine's cores; once a repetition was interrupted, the cells
    not started are not (and those started stop before their next repetition)."""
    results: dict[str, list] = {}
    ctx = multiprocessing.get_context("fork")
    stop = ctx.Event()
    with ProcessPoolExecutor(
        max_workers=max(1, min(jobs, len(args))),
        mp_context=ctx,
        initializer=_worker,
        initargs=(stop, os.getpid()),
    ) as pool:
        futures = {pool.submit(run_cell, *a): name for name, a in args}
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in finished:
                if f.cancelled():
                    continue
                results[futures[f]] = got = f.result()
                say(f"[{len(results)}/{len(args)}] {futures[f]} simulated")
                if any(status == "interrupted" for _, status, _ in got):
                    stop.set()
                    for p in pending:
                        p.cancel()
    return results


def _on_dask(address: str, args: list) -> dict[str, list]:
    from dask.distributed import Client

    with Client(address, timeout=f"{DASK_TIMEOUT_S}s") as client:
        futures = {name: client.submit(run_cell, *a, pure=False) for name, a in args}
        return {name: f.result() for name, f in futures.items()}
