"""`--backend sim`: every run simulated in ns-3 with Linux's own congestion control
(docs/simulation.md); nothing of the machine's network is used, so its runs take no lock
and go side by side on the machine's cores (`--jobs`) or on a Dask cluster (`--dask`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from itb.backends.registry import Backend, Kind, Option, Side

if TYPE_CHECKING:
    from itb.backends.testbed import CcSupport, Hosted, Say, Testbed
    from itb.scenario.scenario import Scenario
    from itb.scenario.testbed.model import Topology


@dataclass(frozen=True)
class Sim(Backend):
    jobs: int | None = None  # runs side by side on this many cores (None: every core)
    dask: str | None = None  # or on the Dask cluster at this address

    name: ClassVar[str] = "sim"
    adjective: ClassVar[str] = "simulated"
    exclusive: ClassVar[bool] = False
    unbounded_rates: ClassVar[bool] = True

    def key(self) -> dict:
        return {"backend": self.name}  # (not where it runs: the same results)

    def open(
        self,
        topology: Topology,
        ccs: CcSupport,
        *,
        hosted: Hosted | None = None,
        seed: int = 1,
        say: Say | None = None,
        only: set[str] | None = None,
    ) -> Testbed:
        from itb.backends.sim.testbed import SimTestbed
        from itb.backends.testbed import quiet

        return SimTestbed(topology, ccs, seed=seed, say=say or quiet)

    def unsupported(self, sc: Scenario) -> str | None:
        from itb.backends.sim.config import unsupported

        why = unsupported(sc.topology, list(sc.experiment.events))
        return None if why is None else f"cannot be simulated: {why}"

    def cc_unsupported(self, cc: str) -> str | None:
        from itb.backends.sim.config import cc_unsupported

        return cc_unsupported(cc)

    def ready(self, ccs: Sequence[str], support: CcSupport, say: Say) -> None:
        """The simulator and these congestion controls (built now if missing), or
        refused (PreflightError, exit 4)."""
        from itb.backends.sim import testbed

        testbed.ready(ccs, support, say)

    def side_by_side(self) -> Side:
        from itb.backends.facts import usable_cores

        return Side(self.jobs or usable_cores(), self.dask)

    def cells_at_once(self, scenarios: Sequence[str]) -> int | None:
        """How many of these simulations this machine's memory holds at once, by the
        largest's estimate (itb.backends.sim.memory); None when it cannot say."""
        from itb.backends.sim import memory
        from itb.scenario.scenario import load_scenario

        try:
            largest = max(
                memory.estimate(sc.topology, list(sc.experiment.events)).total_bytes
                for sc in map(load_scenario, scenarios)
            )
        except Exception:  # (the runs themselves report what is wrong with a scenario)
            return None
        return memory.available_bytes() // max(1, largest)


KIND = Kind(
    name="sim",
    help="every run simulated in ns-3 (Linux's own congestion control; what a simulator "
    "has not, e.g. commands or UDT, is refused before anything runs; docs/simulation.md)",
    options=(
        Option(
            "jobs",
            "--jobs",
            int | None,
            "With --backend sim: runs simulated side by side on this many cores "
            "[default: every core].",
            min=1,
        ),
        Option(
            "dask",
            "--dask",
            str | None,
            "With --backend sim: simulate on this Dask cluster (tcp://host:8786; its "
            "workers must see this directory).",
            metavar="ADDRESS",
        ),
    ),
    make=Sim,
    from_key=lambda key: Sim() if key.get("backend") == "sim" else None,
    order=2,
)
