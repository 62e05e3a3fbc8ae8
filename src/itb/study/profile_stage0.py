"""`itb study profile stage0` (docs/profile.md): the preliminary experiments of INRIA
RR-6874 §3.2 and §4, which make sure the hosts are not the bottleneck.

- cpu: the CPU the sending and the receiving process use per input rate, for each
  mechanism and RTT (ITB's endpoints: flow for TCP, itb-udt for UDT; getrusage of each
  process, in % of one core over the transfer);
- files: GridFTP memory to memory (/dev/zero → /dev/null), disk to memory and disk to
  disk (a file of the study's written for it, its pages evicted from the page cache
  before each repetition, to a file), at full speed;
- streams: GridFTP memory to memory with 1, 2, 5, 10 parallel streams (`-p`) for each
  TCP congestion control (nocc paced at 90 % of C), and UDT (one stream) at 90 % of C.

GridFTP runs as the documents ran it, an anonymous server and globus-url-copy, here
pulling from the server on l1 to r1; the server's connections get the congestion
control through ITB's pacer (`cc` of its [[command]]). Its goodput is the volume over
the client's run (from its start, so with GridFTP's login and set-up).
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from itb.analysis.cells import cell_table
from itb.analysis.pursuit_studies import CpuPoint, RatePoint, Stage0Results, spread
from itb.bench.sweep import Outcome, Sweep, SweepCell, drive
from itb.engine import rundir
from itb.errors import PreflightError, ScenarioError
from itb.scenario.load import testbed_from_dict
from itb.scenario.units import format_rate
from itb.study.profile_calibration import gap_s
from itb.study.pursuit_setup import Mechanism, secs, testbed_doc

Say = Callable[[str], None]
PARTS = ("cpu", "files", "streams")
FILE_MODES = ("m2m", "d2m", "d2d")
GRIDFTP_PORT = 2811
NOCC_SHARE = 0.9  # nocc and UDT are paced at this share of C in the streams part


@dataclass(frozen=True)
class Stage0Args:
    parts: tuple[str, ...]
    mechanisms: tuple[Mechanism, ...]  # cpu part
    inputs_bps: tuple[int, ...]  # cpu part
    rtts_ms: tuple[float, ...]  # cpu part
    seconds: float  # cpu part: each transfer at its input
    volume: int  # files and streams parts
    streams: tuple[int, ...]
    stream_ccs: tuple[str, ...]
    rtt_ms: float  # files and streams parts
    repeat: int
    capacity_bps: int
    open_window: bool
    seed: int

    def key(self) -> dict:
        return {"parts": list(self.parts), "mechanisms": [m.name for m in self.mechanisms],
                "inputs_bps": list(self.inputs_bps), "rtts_ms": list(self.rtts_ms),
                "seconds": self.seconds, "volume": self.volume, "streams": list(self.streams),
                "stream_ccs": list(self.stream_ccs), "rtt_ms": self.rtt_ms, "repeat": self.repeat,
                "capacity_bps": self.capacity_bps, "open_window": self.open_window,
                "seed": self.seed}


def _experiment(name: str, a: Stage0Args, duration_s: float) -> dict:
    return {"name": name, "repetitions": a.repeat, "seed": a.seed,
            "duration": secs(math.ceil(duration_s)), "interval": "100ms"}


def cpu_cell(a: Stage0Args, mech: Mechanism, rtt_ms: float) -> SweepCell:
    transfers, at = [], 0.0
    for k, x in enumerate(a.inputs_bps):
        transfers.append({"id": f"x{k + 1}", "src": "l1", "dst": "r1", "at": secs(at),
                          "volume": f"{max(1, round(x * a.seconds / 8))}B",
                          **mech.transfer_fields(), "profile": [[0, format_rate(x)]]})
        at += gap_s(a.seconds, rtt_ms)
    name = f"stage0-cpu-{mech.name}-rtt{rtt_ms:g}"
    doc = {**testbed_doc(name, f"CPU per input rate, {mech.name}", 1, a.capacity_bps, rtt_ms,
                         a.open_window),
           "experiment": _experiment(name, a, at + a.seconds), "transfer": transfers}
    return SweepCell(name, doc, {"part": "cpu", "mechanism": mech.name, "rtt_ms": rtt_ms,
                                 "inputs": {t["id"]: x for t, x in zip(transfers, a.inputs_bps)}})


def _gridftp(a: Stage0Args, name: str, description: str, source: str, sink: str,
             streams: int, cc: str, evict: str | None, profile_bps: int | None) -> dict:
    """An anonymous GridFTP server on l1 and globus-url-copy on r1 pulling from it."""
    doc = testbed_doc(name, description, 1, a.capacity_bps, a.rtt_ms, a.open_window)
    l1 = testbed_from_dict(doc).address("l1")
    commands = []
    if evict:  # GNU dd: iflag=nocache with count=0 drops the whole file from the cache
        commands.append({"id": "evict", "host": "l1", "at": "0s",
                         "argv": ["dd", f"if={evict}", "iflag=nocache", "count=0", "status=none"]})
    server = {"id": "server", "host": "l1", "at": "0.5s", "wait": False,
              "argv": ["globus-gridftp-server", "-aa", "-anonymous-user", "nobody", "-p",
                       str(GRIDFTP_PORT), "-1", "-no-fork", "-data-interface", l1],
              "cc": cc, "control_port": GRIDFTP_PORT}
    if profile_bps:
        server["profile"] = [[0, format_rate(profile_bps)]]
    length = ["-len", str(a.volume)] if source == "/dev/zero" else []
    client = {"id": "client", "host": "r1", "at": "1.5s",
              "argv": ["globus-url-copy", "-vb", *(["-p", str(streams)] if streams > 1 else []),
                       "-tcp-bs", "16M", *length, f"ftp://{l1}:{GRIDFTP_PORT}{source}",
                       f"file://{sink}"]}
    worst = a.volume * 8 / (0.05 * a.capacity_bps)  # even at 5 % of C
    return {**doc, "experiment": _experiment(name, a, 10 + worst), "command": [*commands, server, client]}


def file_cells(a: Stage0Args, files: Path) -> list[SweepCell]:
    src, sink = files / "source.bin", files / "sink.bin"
    ends = {"m2m": ("/dev/zero", "/dev/null"), "d2m": (str(src), "/dev/null"),
            "d2d": (str(src), str(sink))}
    out = []
    for mode in FILE_MODES:
        source, dest = ends[mode]
        name = f"stage0-files-{mode}"
        doc = _gridftp(a, name, f"GridFTP {mode}", source, dest, 1, "reno",
                       None if source == "/dev/zero" else source, None)
        out.append(SweepCell(name, doc, {"part": "files", "label": mode, "mechanism": "reno",
                                         "streams": 1}))
    return out


def stream_cells(a: Stage0Args) -> list[SweepCell]:
    out = []
    for cc in a.stream_ccs:
        pace = round(NOCC_SHARE * a.capacity_bps) if cc == "nocc" else None
        for n in a.streams:
            name = f"stage0-streams-{cc}-p{n}"
            doc = _gridftp(a, name, f"GridFTP -p {n}, {cc}", "/dev/zero", "/dev/null", n, cc,
                           None, pace)
            out.append(SweepCell(name, doc, {"part": "streams", "label": f"GridFTP -p {n}",
                                             "mechanism": cc, "streams": n}))
    name = "stage0-streams-udt"
    doc = {**testbed_doc(name, "UDT at 90 % of C", 1, a.capacity_bps, a.rtt_ms, a.open_window),
           "transfer": [{"id": "u", "src": "l1", "dst": "r1", "volume": f"{a.volume}B",
                         "protocol": "udt", "rate": format_rate(round(NOCC_SHARE * a.capacity_bps))}]}
    doc["experiment"] = _experiment(name, a, 10 + a.volume * 8 / (0.5 * a.capacity_bps))
    out.append(SweepCell(name, doc, {"part": "streams", "label": "itb-udt", "mechanism": "udt",
                                     "streams": 1}))
    return out


class Stage0Sweep(Sweep):
    """Makes the disk parts' source file once the study directory is its own."""

    def __init__(self, *args, volume: int, needs_file: bool):
        super().__init__(*args)
        self.volume, self.needs_file = volume, needs_file

    def open(self) -> dict:
        if self.needs_file:  # refused before anything is written
            readable_by_others(self.out / "files" / "source.bin")
        state = super().open()
        if self.needs_file:
            source_file(self.out, self.volume)
            readable_by_others(self.out / "files" / "source.bin")
        return state


def sweep_of(a: Stage0Args, out: Path) -> Sweep:
    bad = [p for p in a.parts if p not in PARTS]
    if bad or not a.parts:
        raise ScenarioError(None, "--parts", f"give some of {', '.join(PARTS)}")
    cells = []
    if "cpu" in a.parts:
        cells += [cpu_cell(a, m, rtt) for m in a.mechanisms for rtt in a.rtts_ms]
    if "files" in a.parts:
        cells += file_cells(a, (out / "files").resolve())
    if "streams" in a.parts:
        cells += stream_cells(a)
    return Stage0Sweep(out, "profile-stage0", a.key(), cells, a.repeat, a.seed,
                       volume=a.volume, needs_file="files" in a.parts)


def source_file(out: Path, size: int) -> None:
    """The disk parts' source: `size` bytes that nothing can compress, made once, readable
    by the anonymous server (it reads it as nobody)."""
    files = out / "files"
    files.mkdir(parents=True, exist_ok=True)
    path = files / "source.bin"
    if path.exists() and path.stat().st_size == size:
        return
    rng = np.random.default_rng(20090310)
    tmp = path.with_suffix(".part")
    with open(tmp, "wb") as f:
        left = size
        while left:
            n = min(left, 16 << 20)
            f.write(rng.integers(0, 256, n, dtype=np.uint8).tobytes())
            left -= n
        f.flush()
        os.fsync(f.fileno())
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def readable_by_others(path: Path) -> None:
    """The anonymous GridFTP server reads the disk parts' source as 'nobody': the file
    must be readable by others and every directory above it searchable, or it refuses
    each transfer ("500 End."). What does not exist yet is not checked."""
    path = path.resolve()
    if path.exists() and not path.stat().st_mode & stat.S_IROTH:
        raise PreflightError(f"{path} is not readable by others: the anonymous GridFTP "
                             "server reads it as 'nobody'")
    for d in path.parents:  # the directories there are (the study makes the rest 0755)
        if d.exists() and not d.stat().st_mode & stat.S_IXOTH:
            raise PreflightError(f"{d} is not searchable by others (chmod o+x), and the "
                                 f"anonymous GridFTP server reads {path} as 'nobody': choose "
                                 "another --out, or leave out the files part (--parts)")


def _command_seconds(run: Path, r: int) -> float | None:
    rep = rundir.rep_result(run, r) or {}
    if rep.get("status") != "ok":
        return None
    p = rep.get("procs", {}).get("client.command", {})
    if "dispatched_ns" not in p or "exited_ns" not in p or p.get("rc") != 0:
        return None
    return (p["exited_ns"] - p["dispatched_ns"]) / 1e9


def analyse(sweep: Sweep) -> Stage0Results:
    a = sweep.state["args"]
    cpu, files, streams = [], [], []
    for cell in sweep.state["cells"]:
        run = sweep.out / cell["run"]
        if cell["part"] == "cpu":
            tr = cell_table(sweep.out, cell, "transfers")
            for tid, x in cell["inputs"].items():
                rows = tr[tr["transfer"] == tid] if tr is not None else []
                done = [r for r in (rows.itertuples() if len(rows) else []) if r.ok]
                def pct(col: str, done=done) -> list[float]:
                    return [100 * getattr(r, col) / r.completion_s for r in done
                            if math.isfinite(getattr(r, col, math.nan))]
                cpu.append(CpuPoint(mechanism=cell["mechanism"], rtt_ms=cell["rtt_ms"], input_bps=x,
                                    send_cpu_pct=spread(pct("send_cpu_s")),
                                    recv_cpu_pct=spread(pct("recv_cpu_s")),
                                    goodput_bps=spread([r.bytes * 8 / r.completion_s for r in done],
                                                       failed=len(rows) - len(done))))
            continue
        if cell["label"] == "itb-udt":
            tr = cell_table(sweep.out, cell, "transfers")
            rows = list(tr.itertuples()) if tr is not None else []
            good = [r.bytes * 8 / r.completion_s for r in rows if r.ok]
            g = spread(good, failed=len(rows) - len(good))
        else:
            times = [_command_seconds(run, r) for r in range(1, a["repeat"] + 1)
                     if rundir.rep_dir(run, r).exists()]
            g = spread([a["volume"] * 8 / t for t in times if t], failed=sum(t is None for t in times))
        point = RatePoint(part=cell["part"], label=cell["label"], mechanism=cell["mechanism"],
                          streams=cell["streams"], goodput_bps=g)
        (files if cell["part"] == "files" else streams).append(point)
    res = Stage0Results(capacity_bps=a["capacity_bps"], volume=a["volume"], cpu=cpu, files=files,
                        streams=streams)
    res.save(sweep.out / "results.json")
    return res


def run_stage0(a: Stage0Args, out: Path, say: Say = print,
               tick: Say = lambda s: None) -> Outcome[Stage0Results]:
    from itb.report.build import analyse_run
    from itb.report.profile_studies import build_stage0_report

    return drive(sweep_of(a, out), analyse,
                 lambda sw, res: build_stage0_report(out, sw.state, res), say, tick,
                 analyse_run)
