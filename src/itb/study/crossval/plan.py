"""The plan of `itb study crossval`: per congestion control the same scenarios twice, on
the testbed and in ns-3, with the same seeded start jitter (docs/simulation.md):

- steady: one long flow, its goodput measured over [T, 2T] (T = --seconds);
- single: one transfer of C · T of payload (its completion time);
- multi-<C_g>: --sources transfers at once, each source at C_a = C_g · C / sources, each
  of C_a · T (T_mean, CoV, Jain's index).

ns-3's own models (--models) run the same scenarios in simulation only. With --grid, the
cells are instead the grid's points (itb.study.crossval.grid), each its own path.

The queue is one BDP; the goodput and tcp_info series are sampled every 10 ms (the first
loss's window and time)."""

from __future__ import annotations

import math
from pathlib import Path

from itb.backends.registry import named
from itb.scenario.units import format_rate
from itb.study.crossval.args import CrossvalArgs
from itb.study.crossval.cells import CrossvalCell
from itb.study.crossval.grid import GRIDS, Point
from itb.study.pursuit import secs, testbed_doc
from itb.sweep.index import SweepIndex
from itb.sweep.sweep import Sweep, SweepCell

BACKENDS = ("emulated", "simulated")
INTERVAL = "10ms"


def scenarios(a: CrossvalArgs) -> list[tuple[str, int, int | None, int, tuple | None]]:
    """(name, sources, C_a, volume per transfer, steady window)."""
    c, t = a.capacity_bps, a.seconds
    out: list[tuple[str, int, int | None, int, tuple | None]] = [
        ("steady", 1, None, int(c * 3 * t / 8), (t, 2 * t)),
        ("single", 1, None, int(c * t / 8), None),
    ]
    for g in a.loads:
        ca = int(g * c / a.sources)
        out.append((f"multi-{g:g}", a.sources, ca, int(ca * t / 8), None))
    return out


def cell_doc(a: CrossvalArgs, name: str, cc: str, n: int, ca: int | None, vol: int) -> dict:
    # its transfers' expected time: at C alone, or n sharing C (each at most C_a)
    rate = a.capacity_bps if ca is None else min(ca, a.capacity_bps / n)
    doc = testbed_doc(
        f"crossval-{name}",
        f"{n} {cc} transfer(s) of {vol} bytes, C {a.capacity_bps / 1e6:g} Mbit/s, "
        f"RTT {a.rtt_ms:g} ms, one-BDP queue",
        n,
        a.capacity_bps,
        a.rtt_ms,
        False,
    )
    if ca is not None:
        doc["dumbbell"]["access_rate"] = format_rate(ca)
    longest = 2 * vol * 8 / rate
    doc["experiment"] = {
        "name": f"crossval-{name}",
        "duration": secs(math.ceil(longest + 30)),
        "interval": INTERVAL,
        "repetitions": a.repeat,
        "seed": a.seed,
        "start_jitter": secs(a.jitter_ms / 1000),
    }
    doc["transfer"] = [
        {"id": f"f{k + 1}", "src": f"l{k + 1}", "dst": f"r{k + 1}", "at": "0s",
         "volume": f"{vol}B", "cc": cc}
        for k in range(n)
    ]  # fmt: skip
    return doc


def point_doc(a: CrossvalArgs, p: Point, name: str, cc: str) -> dict:
    """A --grid cell's scenario: its path, queue, flows, their starts, caps and access."""
    vol = p.volume(a.seconds)
    doc = testbed_doc(
        f"crossval-{name}", f"{p.name}: {p.what}; {cc}", p.sources, p.capacity_bps, p.rtt_ms,
        False, f"{p.buffer_bdp:g}bdp",
    )  # fmt: skip
    if p.access_bps:
        doc["dumbbell"]["access_rate"] = format_rate(p.access_bps)
    # the last start plus twice its time at its share: long enough for any cell here
    longest = (p.sources - 1) * p.spacing_s + 2 * vol * 8 / p.share_bps()
    doc["experiment"] = {
        "name": f"crossval-{name}",
        "duration": secs(math.ceil(2 * longest + 30)),
        "interval": INTERVAL,
        "repetitions": a.repeat,
        "seed": a.seed,
        "start_jitter": secs(a.jitter_ms / 1000),
    }
    doc["transfer"] = [
        {"id": f"f{k + 1}", "src": f"l{k + 1}", "dst": f"r{k + 1}",
         "at": secs(k * p.spacing_s), "volume": f"{vol}B", "cc": cc,
         **({"rate": format_rate(p.cap_bps)} if p.cap_bps else {})}
        for k in range(p.sources)
    ]  # fmt: skip
    return doc


def grid_cells(a: CrossvalArgs, runs: list[tuple[str, str]]) -> list[SweepCell]:
    """The cells of --grid: each point with each congestion control on each side."""
    cells = []
    for p in GRIDS[a.grid or ""]:
        for cc, backend in runs:
            name = f"{p.name}-{cc.replace(':', '-')}-{backend[:3]}"
            cell = CrossvalCell(
                name=name, scenario=p.name, cc=cc, backend=backend,
                capacity_bps=p.capacity_bps, sources=p.sources, access_bps=p.access_bps,
                volume_bytes=p.volume(a.seconds), rtt_ms=p.rtt_ms, buffer_bdp=p.buffer_bdp,
                cap_bps=p.cap_bps, spacing_s=p.spacing_s,
            )  # fmt: skip
            cells.append(SweepCell(cell, point_doc(a, p, name, cc)))
    return cells


def sweep_of(a: CrossvalArgs, out: Path) -> Sweep[CrossvalCell]:
    cells = []
    runs = [(cc, backend) for cc in a.ccs for backend in BACKENDS]
    runs += [(model, "simulated") for model in a.models]  # ns-3's own, in simulation only
    for scen, n, ca, vol, window in [] if a.grid else scenarios(a):
        for cc, backend in runs:
            name = f"{scen}-{cc.replace(':', '-')}-{backend[:3]}"
            cell = CrossvalCell(
                name=name, scenario=scen, cc=cc, backend=backend,
                capacity_bps=a.capacity_bps, sources=n, access_bps=ca, volume_bytes=vol,
                window_s=window,
            )  # fmt: skip
            cells.append(SweepCell(cell, cell_doc(a, name, cc, n, ca, vol)))
    if a.grid:
        cells = grid_cells(a, runs)
    sweep = Sweep(out, "crossval", SweepIndex[CrossvalCell], a.key(), cells, a.repeat, a.seed)
    # the simulated cells side by side (on every core), after the emulated ones
    sim = named("sim")
    sweep.cell_backends = {c.info.name: sim for c in cells if c.info.backend == "simulated"}
    return sweep
