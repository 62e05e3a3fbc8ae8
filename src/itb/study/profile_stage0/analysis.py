"""The analysis of `itb study profile stage0`: the endpoints' CPU per input rate, and the
goodput of each way of transferring (GridFTP's client run, or UDT's transfers)."""

from __future__ import annotations

import math
from pathlib import Path

from itb import rundir
from itb.analysis.cells import cell_table
from itb.analysis.pursuit import spread
from itb.study.profile_stage0.args import Stage0Args
from itb.study.profile_stage0.cells import Stage0Cell
from itb.study.profile_stage0.results import CpuPoint, RatePoint, Stage0Results
from itb.sweep.sweep import Sweep


def _command_seconds(run: Path, r: int) -> float | None:
    rep = rundir.rep_result(run, r) or {}
    if rep.get("status") != "ok":
        return None
    p = rep.get("procs", {}).get("client.command", {})
    if "dispatched_ns" not in p or "exited_ns" not in p or p.get("rc") != 0:
        return None
    return (p["exited_ns"] - p["dispatched_ns"]) / 1e9


def analyse(sweep: Sweep[Stage0Cell], a: Stage0Args) -> Stage0Results:
    cpu: list[CpuPoint] = []
    files: list[RatePoint] = []
    streams: list[RatePoint] = []
    for cell in sweep.index.cells:
        run = sweep.out / cell.run
        if cell.part == "cpu":
            tr = cell_table(sweep.out, cell, "transfers")
            for tid, x in cell.inputs.items():
                rows = list(tr[tr["transfer"] == tid].itertuples()) if tr is not None else []
                done = [r for r in rows if r.ok]

                def pct(col: str, done=done) -> list[float]:
                    return [
                        100 * getattr(r, col) / r.completion_s
                        for r in done
                        if math.isfinite(getattr(r, col, math.nan))
                    ]

                cpu.append(
                    CpuPoint(
                        mechanism=cell.mechanism,
                        rtt_ms=cell.rtt_ms,
                        input_bps=x,
                        send_cpu_pct=spread(pct("send_cpu_s")),
                        recv_cpu_pct=spread(pct("recv_cpu_s")),
                        goodput_bps=spread(
                            [r.bytes * 8 / r.completion_s for r in done],
                            failed=len(rows) - len(done),
                        ),
                    )
                )
            continue
        if cell.label == "itb-udt":
            tr = cell_table(sweep.out, cell, "transfers")
            rows = list(tr.itertuples()) if tr is not None else []
            good = [r.bytes * 8 / r.completion_s for r in rows if r.ok]
            g = spread(good, failed=len(rows) - len(good))
        else:
            times = [
                _command_seconds(run, r)
                for r in range(1, a.repeat + 1)
                if rundir.rep_dir(run, r).exists()
            ]
            g = spread([a.volume * 8 / t for t in times if t], failed=sum(t is None for t in times))
        point = RatePoint(
            part=cell.part,
            label=cell.label,
            mechanism=cell.mechanism,
            streams=cell.streams,
            goodput_bps=g,
        )
        (files if cell.part == "files" else streams).append(point)
    res = Stage0Results(
        capacity_bps=a.capacity_bps, volume=a.volume, cpu=cpu, files=files, streams=streams
    )
    res.save(sweep.out / "results.json")
    return res
