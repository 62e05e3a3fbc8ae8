"""The arguments of `itb study profile stage0`: which parts, the CPU part's mechanisms,
inputs and RTTs, the files and streams parts' volume, streams, congestion controls and RTT."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from itb.errors import ScenarioError
from itb.scenario.experiment.algorithms import KNOWN_CCS
from itb.scenario.options import csv_option
from itb.study import options, pursuit
from itb.study.args import Option, OutDir, Seed
from itb.study.pursuit import STUDY_DIR, AtCapacity, Capacity, Named, OpenWindow

PARTS = ("cpu", "files", "streams")


def gridftp_streams(text: str, flag: str) -> tuple[int, ...]:
    """GridFTP's -p values: 1 to 64, none twice."""
    try:
        ns = options.once(tuple(int(x) for x in csv_option(text, flag)), flag, str)
    except ValueError as e:
        raise ScenarioError(None, flag, f"{text!r}: {e}") from None
    if any(not 1 <= n <= 64 for n in ns):
        raise ScenarioError(None, flag, "GridFTP's -p: 1 to 64 streams")
    return ns


def tcp_ccs(text: str, flag: str) -> tuple[str, ...]:
    """TCP congestion controls (UDT has its own row)."""
    ccs = options.once(tuple(csv_option(text, flag)), flag, str)
    bad = [c for c in ccs if c not in KNOWN_CCS]
    if bad:
        raise ScenarioError(
            None,
            flag,
            f"{bad[0]!r}: give TCP congestion controls "
            f"({', '.join(KNOWN_CCS)}); UDT has its own row",
        )
    return ccs


class Stage0Args(AtCapacity):
    parts: Annotated[tuple[str, ...], Option("--parts", options.texts)] = Field(
        "cpu,files,streams", validate_default=True, description="Which: cpu, files, streams."
    )
    mechanisms: Annotated[tuple[Named, ...], Option("--mechanisms", pursuit.mechanisms)] = Field(
        "nocc-pacing,udt",
        validate_default=True,
        description="cpu: the mechanisms, comma-separated.",
    )
    inputs_bps: Annotated[tuple[int, ...], Option("--inputs", options.distinct_rates)] = Field(
        "100Mbit,300Mbit,500Mbit,700Mbit,900Mbit",
        validate_default=True,
        description="cpu: the input rates.",
    )
    rtts_ms: Annotated[tuple[float, ...], Option("--rtt", options.distinct_ms)] = Field(
        "0ms,100ms", validate_default=True, description="cpu: the RTTs."
    )
    seconds: Annotated[float, Option("--seconds")] = Field(
        5.0, ge=1.0, le=600.0, description="cpu: each transfer's length at its input."
    )
    volume: Annotated[int, Option("--volume", options.volume)] = Field(
        "1GB", validate_default=True, description="files and streams: bytes per transfer."
    )
    streams: Annotated[tuple[int, ...], Option("--streams", gridftp_streams)] = Field(
        "1,2,5,10", validate_default=True, description="streams: GridFTP's -p values."
    )
    stream_ccs: Annotated[tuple[str, ...], Option("--stream-cc", tcp_ccs)] = Field(
        "reno,nocc",
        validate_default=True,
        description="streams: the congestion controls (nocc is paced at 90 % of C).",
    )
    rtt_ms: Annotated[float, Option("--files-rtt", options.one_ms)] = Field(
        "20ms", validate_default=True, description="files and streams: the RTT."
    )
    repeat: Annotated[int, Option("--repeat")] = Field(
        3, ge=1, le=100, description="Repetitions per cell."
    )
    capacity: Capacity = None
    open_window: OpenWindow = True
    out_dir: OutDir = Field(None, description=STUDY_DIR)
    seed: Seed = Field(1, description="Seed of the run order.")

    @model_validator(mode="after")
    def _inputs_within_c(self) -> Stage0Args:
        options.within(self.inputs_bps, self.capacity_bps, "--inputs")
        return self
