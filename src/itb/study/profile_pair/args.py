"""The arguments of `itb study profile pair`: the pairs of mechanisms and their models,
the margins (one cell each), the RTT and how long each transfer is predicted to take."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Annotated

from pydantic import Field, computed_field

from itb.errors import ScenarioError
from itb.scenario.options import csv_option
from itb.study import options, pursuit
from itb.study.args import Option, OutDir, Seed
from itb.study.pursuit import STUDY_DIR, AtCapacity, Buffer, Capacity, Mechanism, Named, OpenWindow


def pairs(text: str, flag: str) -> tuple[tuple[Mechanism, Mechanism], ...]:
    """ "A+B,…": the mechanisms of flows A and B of each pair."""
    combos = []
    for item in csv_option(text, flag):
        if item.count("+") != 1:
            raise ScenarioError(None, flag, f"{item!r}: give two mechanisms, A+B")
        a, b = item.split("+")
        combos.append((pursuit.parse_mechanism(a, flag), pursuit.parse_mechanism(b, flag)))
    return tuple(combos)


class PairArgs(AtCapacity):
    combos: Annotated[tuple[tuple[Named, Named], ...], Option("--pairs", pairs)] = Field(
        "nocc-pacing+nocc-pacing,udt+udt,nocc-pacing+udt",
        validate_default=True,
        description="Mechanisms of flows A and B, A+B, comma-separated.",
    )
    margins: Annotated[tuple[float, ...], Option("--margins", options.margins)] = Field(
        "1,2.5,5,7.5,10,15,20,25",
        validate_default=True,
        description="Margins m in % of C: a comma list or FROM:TO:STEP.",
    )
    rtt_ms: Annotated[float, Option("--rtt", options.one_ms)] = Field(
        "12ms", validate_default=True, description="RTT of both paths (the document's 12 ms)."
    )
    seconds: Annotated[float, Option("--seconds")] = Field(
        60.0,
        ge=3.0,
        le=3600.0,
        description="Each transfer's predicted time; a step is a third of it.",
    )
    repeat: Annotated[int, Option("--repeat")] = Field(
        5, ge=1, le=100, description="Repetitions per point."
    )
    capacity: Capacity = None
    models_dir: Annotated[Path | None, Option("--models"), Field(exclude=True)] = Field(
        None, description="Directory of the models (profile-model-MECHANISM.json). [default: runs]"
    )
    buffer: Buffer = None  # the bottleneck's queue; None: one BDP
    open_window: OpenWindow = True
    out_dir: OutDir = Field(None, description=STUDY_DIR)
    seed: Seed = Field(1, description="Seed of the run order.")

    @cached_property
    def mechanisms(self) -> dict[str, Mechanism]:
        """Every mechanism of the pairs, by name."""
        return {m.name: m for combo in self.combos for m in combo}

    @cached_property
    def model_paths(self) -> dict[str, Path]:
        """Each mechanism's model file (in --models, else where `itb profile calibrate`
        keeps it)."""
        return {
            n: pursuit.model_file(
                m, self.models_dir / m.model_path().name if self.models_dir else None
            )
            for n, m in self.mechanisms.items()
        }

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def models(self) -> dict[str, str]:
        """The model files' identities: a new calibration is a new study."""
        return {n: pursuit.file_digest(p) for n, p in sorted(self.model_paths.items())}

    def warnings(self) -> list[str]:
        return [
            w
            for n, p in self.model_paths.items()
            if (w := pursuit.window_warning(self.mechanisms[n], p, self.open_window))
        ]
