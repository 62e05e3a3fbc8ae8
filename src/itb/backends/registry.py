"""The backends `--backend` names, found as studies are: every subpackage of
`itb.backends` with a `backend` module declaring `KIND` (a `Kind`) is one. A kind has a
name, a line of help, its own command-line options (`--inventory`, `--jobs`, …) and
makes, from the options given, a `Backend`: the value that travels from the command line
through sweeps and the runner to the testbed it opens.

Every command that runs anything (`itb run`, `itb bench`, `itb calibrate`, every
`itb study …`, `itb profile calibrate`) builds `--backend` and the kinds' options from
here (itb.cli.backend). Adding a backend: `itb/backends/<name>/backend.py` with its
`KIND`, and the testbed it opens (itb.backends.testbed); nothing else changes. The
directory may be on any entry of sys.path (`itb/backends/<name>/`): the package's path
is extended to them (pkgutil.extend_path), so a backend may live outside ITB's tree.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

from itb.errors import ScenarioError

if TYPE_CHECKING:
    from itb.backends.testbed import CcSupport, Hosted, Testbed
    from itb.say import Say
    from itb.scenario.scenario import Scenario
    from itb.scenario.testbed.model import Topology

DEFAULT = "local"


@dataclass(frozen=True)
class Option:
    """One of a kind's own command-line options, given to its `make` as `name`."""

    name: str  # the keyword (inventory)
    flag: str  # --inventory
    annotation: Any  # as typer reads it: Path | None, int | None, str | None
    help: str
    default: Any = None
    metavar: str | None = None
    min: int | None = None
    implies: bool = False  # given without --backend, it chooses this kind (--inventory: ssh)


@dataclass(frozen=True)
class Side:
    """Runs a backend can run side by side (a simulation uses one core and nothing of
    the machine's network): on `jobs` cores of this machine or on a Dask cluster."""

    jobs: int
    dask: str | None = None


@dataclass(frozen=True)
class Backend:
    """A chosen backend with its options. Subclasses (one per kind, frozen dataclasses:
    a value that can be sent to a worker process) say how to open its testbed."""

    name: ClassVar[str]
    adjective: ClassVar[str] = ""  # its runs in a sentence: "the simulated cells" (else name)
    # its runs hold this machine's ITB lock (a simulation uses nothing of the machine's)
    exclusive: ClassVar[bool] = True
    # its links run at any rate: a benchmark's classes are not scaled to this machine
    unbounded_rates: ClassVar[bool] = False

    def key(self) -> dict:
        """What it adds to a sweep's key: a run elsewhere is another directory."""
        return {}

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
        """Its testbed of `topology` (`hosted`: the engine's process execution, for a
        testbed of hosts; `only`: just these nodes' hosts, as a calibration's pair)."""
        raise NotImplementedError

    def unsupported(self, sc: Scenario) -> str | None:
        """Why it cannot run this scenario, said before anything is written."""
        return None

    def cc_unsupported(self, cc: str) -> str | None:
        """Why it cannot run this congestion control (canonical name), if it knows now."""
        return None

    def ready(self, ccs: Sequence[str], support: CcSupport, say: Say) -> None:
        """What it needs before anything is written (a simulator built), or refused."""

    def reserved(self, say: Say) -> AbstractContextManager[Backend]:
        """Around a run: the backend with its hosts reserved (and released after)."""
        return nullcontext(self)

    def side_by_side(self) -> Side | None:
        """How its runs go side by side (None: one at a time)."""
        return None

    def cells_at_once(self, scenarios: Sequence[str]) -> int | None:
        """How many of these scenarios' runs this machine holds at once (None: no limit
        known)."""
        return None


@dataclass(frozen=True)
class OfHosts(Backend):
    """A backend whose testbed is of hosts (itb.backends.testbed.RunsProcesses): what it
    cannot run is what such a testbed refuses, on this machine or not."""

    same_machine: ClassVar[bool]

    def unsupported(self, sc: Scenario) -> str | None:
        from itb.backends.testbed import unsupported_on_hosts

        why = unsupported_on_hosts(list(sc.experiment.events), self.same_machine)
        return None if why is None else f"cannot run on --backend {self.name}: {why}"


@dataclass(frozen=True)
class Kind:
    """A backend as `--backend` names it (see the module)."""

    name: str
    help: str  # its line in --backend's help
    options: tuple[Option, ...]
    make: Callable[..., Backend]  # (**its options given) → the backend, or ScenarioError
    from_key: Callable[[dict], Backend | None]  # the backend a sweep's key records, if its
    order: int = 100  # its place in --backend's help (local, ssh, sim first)


@cache
def kinds() -> dict[str, Kind]:
    """Every backend found, in their order; two kinds with one flag are a bug."""
    pkg = sys.modules[__package__ or "itb.backends"]  # (imported before this module)
    found: list[Kind] = []
    for mod in pkgutil.iter_modules(pkg.__path__):
        name = f"{pkg.__name__}.{mod.name}"
        if not mod.ispkg or importlib.util.find_spec(f"{name}.backend") is None:
            continue
        kind = importlib.import_module(f"{name}.backend").KIND
        found.append(kind)
    found.sort(key=lambda k: (k.order, k.name))
    flags: dict[str, str] = {}
    for k in found:
        for o in k.options:
            if o.flag in flags:
                raise RuntimeError(f"--backend {k.name} and {flags[o.flag]} both have {o.flag}")
            flags[o.flag] = k.name
    return {k.name: k for k in found}


def options() -> list[tuple[Kind, Option]]:
    return [(k, o) for k in kinds().values() for o in k.options]


def choose(name: str | None, given: dict[str, Any]) -> Backend:
    """The backend `--backend name` (None: not given) with the options given (every
    kind's, by keyword, at their defaults when not given). An option of another kind is
    refused, naming it, unless it implies its kind and no --backend was given."""
    found = kinds()
    if name is not None and name not in found:
        raise ScenarioError(None, "--backend", f"{name!r}: give one of {', '.join(found)}")
    set_ = [(k, o) for k, o in options() if given.get(o.name, o.default) != o.default]
    if name is None:
        implied = {k.name for k, o in set_ if o.implies}
        name = implied.pop() if len(implied) == 1 else DEFAULT
    for k, o in set_:
        if k.name != name:
            raise ScenarioError(None, o.flag, f"an option of --backend {k.name}, not {name}")
    kind = found[name]
    return kind.make(**{o.name: given.get(o.name, o.default) for o in kind.options})


def named(name: str = DEFAULT, **given: Any) -> Backend:
    """The backend `name` with these options (the others at their defaults)."""
    return choose(name, given)


def from_key(key: dict) -> tuple[Backend, dict]:
    """The backend a sweep's key records, and the key without it (a key that names none
    is the default's)."""
    for kind in kinds().values():
        b = kind.from_key(key)
        if b is not None:
            rest = {k: v for k, v in key.items() if k not in b.key()}
            return b, rest
    return named(DEFAULT), dict(key)


def help_text() -> str:
    return "; ".join(f"{k.name}: {k.help}" for k in kinds().values())
