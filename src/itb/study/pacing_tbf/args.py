"""The arguments of `itb study pacing-vs-tbf`: protocols, RTTs, socket buffers, patterns,
the bottleneck and the sources' limit (the paper's 700 and 490 Mbit/s by default)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from itb.errors import ScenarioError
from itb.scenario.experiment.sections import MAX_SOCKET_BUFFER, MIN_SOCKET_BUFFER
from itb.scenario.units import parse_size
from itb.study import options
from itb.study.args import Option, OutDir, Seed, StudyArgs
from itb.study.bulk import STUDY_DIR

PATTERNS = ("1flow", "2flows-1host", "2flows-2hosts")
MECHANISMS = ("tbf", "pacing")


parse_patterns = options.choices(PATTERNS, "pattern")


def parse_buffers(text: str, flag: str) -> tuple[int, ...]:
    """Socket buffer sizes, comma-separated ("16MB,25MB"), 4 KiB to 1 GiB each."""
    out = []
    for part in options.texts(text, flag):
        try:
            n = parse_size(part)
        except ValueError as e:
            raise ScenarioError(None, flag, f"{part!r}: {e}") from None
        if not MIN_SOCKET_BUFFER <= n <= MAX_SOCKET_BUFFER:
            raise ScenarioError(None, flag, f"{part!r}: give 4 KiB to 1 GiB")
        out.append(n)
    return options.once(tuple(out), flag, str)


class PacingTbfArgs(StudyArgs):
    ccs: Annotated[tuple[str, ...], Option("--cc", options.ccs)] = Field(
        "bic,reno", validate_default=True, description="Congestion controls (the paper's)."
    )
    rtts_ms: Annotated[tuple[float, ...], Option("--rtt", options.path_rtts_ms)] = Field(
        "10ms,100ms",
        validate_default=True,
        description="RTTs (the paper's 10 ms and 100 ms: the penalty grows with the BDP).",
    )
    buffers: Annotated[tuple[int, ...], Option("--socket-buffer", parse_buffers)] = Field(
        "25MB",
        validate_default=True,
        description="Fixed socket buffers (SO_SNDBUF / SO_RCVBUF, iperf's -w; the paper's "
        "16MB and 25MB).",
    )
    patterns: Annotated[tuple[str, ...], Option("--patterns", parse_patterns)] = Field(
        ",".join(PATTERNS),
        validate_default=True,
        description="1flow; 2flows-1host (two flows from one host, sharing its limit); "
        "2flows-2hosts (one from each of two hosts).",
    )
    capacity_bps: Annotated[int, Option("--capacity", options.rate)] = Field(
        "700Mbit", validate_default=True, description="The bottleneck C (the paper's 700 Mbit/s)."
    )
    limit_bps: Annotated[int, Option("--limit", options.rate)] = Field(
        "490Mbit",
        validate_default=True,
        description="Each source host's limit R, all its flows together (the paper's 490).",
    )
    transfer_time: Annotated[float, Option("--transfer-time")] = Field(
        20.0, ge=1.0, le=3600.0, description="Seconds one flow takes alone at R (sets the volume)."
    )
    repeat: Annotated[int, Option("--repeat")] = Field(
        3, ge=1, le=100, description="Repetitions per point."
    )
    out_dir: OutDir = Field(None, description=STUDY_DIR)
    seed: Seed = Field(1, description="Seed of the run order.")

    @model_validator(mode="after")
    def _checks(self) -> PacingTbfArgs:
        if self.limit_bps > self.capacity_bps:
            raise ScenarioError(None, "--limit", "a source's limit above C leaves nothing to share")
        return self

    @property
    def volume_bytes(self) -> int:
        """What each flow moves: R × transfer_time (one flow alone at its host's limit)."""
        return int(self.limit_bps / 8 * self.transfer_time)
