"""The arguments of `itb study crossval`: the protocols, the path (C, RTT; the queue one
BDP), the repetitions and their start jitter, the transfers' length."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated

from pydantic import Field, computed_field, model_validator

from itb.errors import ScenarioError
from itb.study import options
from itb.study.args import KEY_IF_SET, Option, OutDir, Seed
from itb.study.bulk import STUDY_DIR, Capacity, Rtt
from itb.study.pursuit import AtCapacity

GRIDS = ("none", "space", "tiny")


def _grid(text: str, flag: str) -> str | None:
    if text not in GRIDS:
        raise ScenarioError(None, flag, f"unknown grid {text!r}; give {', '.join(GRIDS)}")
    return None if text == "none" else text


class CrossvalArgs(AtCapacity):
    ccs: Annotated[tuple[str, ...], Option("--cc", options.ccs)] = Field(
        "reno,cubic", validate_default=True, description="Congestion controls compared."
    )
    models: Annotated[tuple[str, ...], Option("--models", options.texts)] = Field(
        "auto",
        validate_default=True,
        description="ns-3's own models simulated beside, each held to the same bounds against "
        "the emulated Linux algorithm it models (auto: those of --cc, e.g. ns3:TcpCubic for "
        "cubic; none: no model).",
    )
    rtt_ms: Rtt = Field("20ms", validate_default=True)
    capacity: Capacity = None
    seconds: Annotated[float, Option("--seconds")] = Field(
        5.0,
        ge=0.5,
        le=600.0,
        description="One transfer's time at its fair share (sets the volumes); the steady "
        "flow is measured over as long, after as long again.",
    )
    sources: Annotated[int, Option("--sources")] = Field(
        4, ge=2, le=64, description="Sources of the multi-flow cells (C_g = sources · C_a / C)."
    )
    loads: Annotated[tuple[float, ...], Option("--cg", options.loads)] = Field(
        "0.8,2", validate_default=True, description="C_g of the multi-flow cells (0.8–2)."
    )
    jitter_ms: Annotated[float, Option("--jitter")] = Field(
        20.0,
        ge=0.0,
        le=10_000.0,
        description="Each repetition starts every transfer up to this many ms later (seeded): "
        "a simulation's repetitions differ by it, the testbed's by it and its own noise.",
    )
    repeat: Annotated[int, Option("--repeat")] = Field(
        10, ge=2, le=100, description="Repetitions per cell, emulated and simulated alike."
    )
    grid: Annotated[str | None, Option("--grid", _grid), KEY_IF_SET] = Field(
        None,
        description="none (the default): the cells above at --capacity and --rtt; space: instead, cells "
        "spread over the space the studies use (queues 0.1–2 BDP, RTT 10–200 ms, 1–12 flows "
        "together or staggered, paced by access links or rate caps; docs/simulation.md); "
        "tiny: two small cells of that code path (tests).",
    )
    out_dir: OutDir = Field(None, description=STUDY_DIR)
    seed: Seed = Field(1, description="Seed of the run order and of the start jitter.")

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def capacity_bps(self) -> int:
        """C of the cells at --capacity (0 with a --grid: its cells have their own)."""
        return 0 if self.grid else options.capacity_bps(self.capacity)

    @model_validator(mode="after")
    def _models(self) -> CrossvalArgs:
        from itb.backends.registry import named

        sim = named("sim")
        for cc in self.ccs:  # each is compared with its Linux code in ns-3: it must be there
            why = sim.cc_unsupported(cc)
            if why:
                raise ScenarioError(None, "--cc", why)
        if self.models == ("none",):
            object.__setattr__(self, "models", ())
        elif self.models == ("auto",):
            first = {cc: m for m, cc in reversed(MODEL_OF.items())}  # each algorithm's first
            chosen = tuple(first[cc] for cc in self.ccs if cc in first)
            object.__setattr__(self, "models", chosen)
        for m in self.models:
            if m not in MODEL_OF:
                raise ScenarioError(
                    None, "--models", f"unknown ns-3 model {m!r}; give {', '.join(MODEL_OF)}"
                )
            if MODEL_OF[m] not in self.ccs:
                raise ScenarioError(
                    None, "--models", f"{m} models {MODEL_OF[m]}, which --cc does not include"
                )
        return self


# ns-3's models (ns-3.44) → the Linux algorithm each is compared with; the first for an
# algorithm is the one --models auto picks
MODEL_OF = {
    "ns3:TcpLinuxReno": "reno",
    "ns3:TcpNewReno": "reno",
    "ns3:TcpCubic": "cubic",
    "ns3:TcpBic": "bic",
    "ns3:TcpHighSpeed": "highspeed",
    "ns3:TcpHtcp": "htcp",
    "ns3:TcpScalable": "scalable",
    "ns3:TcpVegas": "vegas",
}
