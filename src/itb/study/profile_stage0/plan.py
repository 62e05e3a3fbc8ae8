"""The plan of `itb study profile stage0`: the CPU cells (per mechanism and RTT, one
transfer per input rate), the GridFTP cells of the files part (memory or disk at either
end) and of the streams part (1 to N parallel streams per congestion control, and UDT),
and the disk parts' source file, made once the study's directory is its own."""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path

import numpy as np

from itb.errors import PreflightError, ScenarioError
from itb.scenario.testbed.load import testbed_from_dict
from itb.scenario.units import format_rate
from itb.study.profile_stage0.args import PARTS, Stage0Args
from itb.study.profile_stage0.cells import CpuCell, RateCell, Stage0Cell
from itb.study.pursuit import Mechanism, gap_s, secs, testbed_doc
from itb.sweep.index import SweepIndex
from itb.sweep.sweep import Sweep, SweepCell

FILE_MODES = ("m2m", "d2m", "d2d")
GRIDFTP_PORT = 2811
NOCC_SHARE = 0.9  # nocc and UDT are paced at this share of C in the streams part


def _experiment(name: str, a: Stage0Args, duration_s: float) -> dict:
    return {
        "name": name,
        "repetitions": a.repeat,
        "seed": a.seed,
        "duration": secs(math.ceil(duration_s)),
        "interval": "100ms",
    }


def cpu_cell(a: Stage0Args, mech: Mechanism, rtt_ms: float) -> SweepCell[Stage0Cell]:
    transfers, at = [], 0.0
    for k, x in enumerate(a.inputs_bps):
        transfers.append(
            {
                "id": f"x{k + 1}",
                "src": "l1",
                "dst": "r1",
                "at": secs(at),
                "volume": f"{max(1, round(x * a.seconds / 8))}B",
                **mech.transfer_fields(),
                "profile": [[0, format_rate(x)]],
            }
        )
        at += gap_s(a.seconds, rtt_ms)
    name = f"stage0-cpu-{mech.name}-rtt{rtt_ms:g}"
    doc = {
        **testbed_doc(
            name, f"CPU per input rate, {mech.name}", 1, a.capacity_bps, rtt_ms, a.open_window
        ),
        "experiment": _experiment(name, a, at + a.seconds),
        "transfer": transfers,
    }
    return SweepCell(
        CpuCell(
            name=name,
            part="cpu",
            mechanism=mech.name,
            rtt_ms=rtt_ms,
            inputs={t["id"]: x for t, x in zip(transfers, a.inputs_bps)},
        ),
        doc,
    )


def _gridftp(
    a: Stage0Args,
    name: str,
    description: str,
    source: str,
    sink: str,
    streams: int,
    cc: str,
    evict: str | None,
    profile_bps: int | None,
) -> dict:
    """An anonymous GridFTP server on l1 and globus-url-copy on r1 pulling from it."""
    doc = testbed_doc(name, description, 1, a.capacity_bps, a.rtt_ms, a.open_window)
    l1 = testbed_from_dict(doc).address("l1")
    commands = []
    if evict:  # GNU dd: iflag=nocache with count=0 drops the whole file from the cache
        commands.append(
            {
                "id": "evict",
                "host": "l1",
                "at": "0s",
                "argv": ["dd", f"if={evict}", "iflag=nocache", "count=0", "status=none"],
            }
        )
    server = {
        "id": "server",
        "host": "l1",
        "at": "0.5s",
        "wait": False,
        "argv": [
            "globus-gridftp-server",
            "-aa",
            "-anonymous-user",
            "nobody",
            "-p",
            str(GRIDFTP_PORT),
            "-1",
            "-no-fork",
            "-data-interface",
            l1,
        ],
        "cc": cc,
        "control_port": GRIDFTP_PORT,
    }
    if profile_bps:
        server["profile"] = [[0, format_rate(profile_bps)]]
    length = ["-len", str(a.volume)] if source == "/dev/zero" else []
    client = {
        "id": "client",
        "host": "r1",
        "at": "1.5s",
        "argv": [
            "globus-url-copy",
            "-vb",
            *(["-p", str(streams)] if streams > 1 else []),
            "-tcp-bs",
            "16M",
            *length,
            f"ftp://{l1}:{GRIDFTP_PORT}{source}",
            f"file://{sink}",
        ],
    }
    worst = a.volume * 8 / (0.05 * a.capacity_bps)  # even at 5 % of C
    return {
        **doc,
        "experiment": _experiment(name, a, 10 + worst),
        "command": [*commands, server, client],
    }


def file_cells(a: Stage0Args, files: Path) -> list[SweepCell[Stage0Cell]]:
    src, sink = files / "source.bin", files / "sink.bin"
    ends = {
        "m2m": ("/dev/zero", "/dev/null"),
        "d2m": (str(src), "/dev/null"),
        "d2d": (str(src), str(sink)),
    }
    out: list[SweepCell[Stage0Cell]] = []
    for mode in FILE_MODES:
        source, dest = ends[mode]
        name = f"stage0-files-{mode}"
        doc = _gridftp(
            a,
            name,
            f"GridFTP {mode}",
            source,
            dest,
            1,
            "reno",
            None if source == "/dev/zero" else source,
            None,
        )
        out.append(
            SweepCell(
                RateCell(name=name, part="files", label=mode, mechanism="reno", streams=1), doc
            )
        )
    return out


def stream_cells(a: Stage0Args) -> list[SweepCell[Stage0Cell]]:
    out: list[SweepCell[Stage0Cell]] = []
    for cc in a.stream_ccs:
        pace = round(NOCC_SHARE * a.capacity_bps) if cc == "nocc" else None
        for n in a.streams:
            name = f"stage0-streams-{cc}-p{n}"
            doc = _gridftp(
                a, name, f"GridFTP -p {n}, {cc}", "/dev/zero", "/dev/null", n, cc, None, pace
            )
            out.append(
                SweepCell(
                    RateCell(
                        name=name, part="streams", label=f"GridFTP -p {n}", mechanism=cc, streams=n
                    ),
                    doc,
                )
            )
    name = "stage0-streams-udt"
    doc = {
        **testbed_doc(name, "UDT at 90 % of C", 1, a.capacity_bps, a.rtt_ms, a.open_window),
        "transfer": [
            {
                "id": "u",
                "src": "l1",
                "dst": "r1",
                "volume": f"{a.volume}B",
                "protocol": "udt",
                "rate": format_rate(round(NOCC_SHARE * a.capacity_bps)),
            }
        ],
    }
    doc["experiment"] = _experiment(name, a, 10 + a.volume * 8 / (0.5 * a.capacity_bps))
    out.append(
        SweepCell(
            RateCell(name=name, part="streams", label="itb-udt", mechanism="udt", streams=1), doc
        )
    )
    return out


class Stage0Sweep(Sweep[Stage0Cell]):
    """Makes the disk parts' source file once the study directory is its own."""

    def __init__(
        self,
        out: Path,
        key: dict,
        cells: list[SweepCell[Stage0Cell]],
        repeat: int,
        seed: int,
        *,
        volume: int,
        needs_file: bool,
    ):
        super().__init__(out, "profile-stage0", SweepIndex[Stage0Cell], key, cells, repeat, seed)
        self.volume, self.needs_file = volume, needs_file

    def open(self) -> SweepIndex[Stage0Cell]:
        if self.needs_file:  # refused before anything is written
            readable_by_others(self.out / "files" / "source.bin")
        index = super().open()
        if self.needs_file:
            source_file(self.out, self.volume)
            readable_by_others(self.out / "files" / "source.bin")
        return index


def sweep_of(a: Stage0Args, out: Path) -> Sweep[Stage0Cell]:
    bad = [p for p in a.parts if p not in PARTS]
    if bad or not a.parts:
        raise ScenarioError(None, "--parts", f"give some of {', '.join(PARTS)}")
    cells: list[SweepCell[Stage0Cell]] = []
    if "cpu" in a.parts:
        cells += [cpu_cell(a, m, rtt) for m in a.mechanisms for rtt in a.rtts_ms]
    if "files" in a.parts:
        cells += file_cells(a, (out / "files").resolve())
    if "streams" in a.parts:
        cells += stream_cells(a)
    return Stage0Sweep(
        out, a.key(), cells, a.repeat, a.seed, volume=a.volume, needs_file="files" in a.parts
    )


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
        raise PreflightError(
            f"{path} is not readable by others: the anonymous GridFTP server reads it as 'nobody'"
        )
    for d in path.parents:  # the directories there are (the study makes the rest 0755)
        if d.exists() and not d.stat().st_mode & stat.S_IXOTH:
            raise PreflightError(
                f"{d} is not searchable by others (chmod o+x), and the "
                f"anonymous GridFTP server reads {path} as 'nobody': choose "
                "another --out, or leave out the files part (--parts)"
            )
