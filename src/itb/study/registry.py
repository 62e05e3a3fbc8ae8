"""The studies' registry: what a study is (`Study`, a typed protocol), and where the
studies are (every subpackage of `itb.study` whose `__init__` defines `STUDY`).

A study is one subpackage: its arguments (a `StudyArgs` model), the plan of its cells,
its analysis into typed results, what its command prints at the end, and its report
(`report.py`, a function of the typed results, with its template `report.html.j2` next
to it). The report is not the registry's: the CLI looks it up by the study's package
(`<package>.report.build`), so that nothing below the CLI imports a report. Adding a
study is adding a subpackage: the command, its options and its run come from here.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, Field

from itb.say import Say
from itb.study.args import StudyArgs

if TYPE_CHECKING:  # the sweep (numpy, the engine) is imported when a study runs, not to list them
    from itb.sweep.index import IndexCell, SweepIndex
    from itb.sweep.sweep import Outcome, Sweep

A = TypeVar("A", bound=StudyArgs)
R = TypeVar("R", bound=BaseModel)
C = TypeVar("C", bound="IndexCell")


class Table(BaseModel):
    """A table the command prints (the CLI draws it)."""

    title: str
    columns: list[str]
    rows: list[list[str]] = []
    right: list[str] = Field([], exclude=True)  # the columns aligned right (numbers)


class Line(BaseModel):
    """A line the command prints: on stdout, or on stderr (`err`)."""

    text: str
    err: bool = False


Shown = Table | Line


def num(x) -> str:
    """A table's number: 4 significant digits; "" for nothing."""
    return "" if x is None else f"{x:.4g}"


def fixed(x, digits: int) -> str:
    """A table's number with `digits` decimals; "–" for nothing."""
    return "–" if x is None else f"{x:.{digits}f}"


@runtime_checkable
class Study(Protocol[A, R, C]):
    """One study, as `itb` runs it: `itb <name…> [options]` plans the sweep's cells
    from the arguments, runs them (resuming the directory made with the same key),
    analyses them into typed results, has them reported and shows `conclude`'s tables.
    Its cells, as its sweep's index keeps them, are `C` (an `IndexCell` with its labels)."""

    @property
    def name(self) -> tuple[str, ...]:
        """The command's path from `itb`: ("study", "profile", "margin")."""
        ...

    @property
    def kind(self) -> str:
        """The sweep's kind: its index <kind>.json, its directory runs/<kind>-HASH."""
        ...

    @property
    def help(self) -> str:
        """The command's help; its first line is its summary in its group's list."""
        ...

    @property
    def rank(self) -> int:
        """Where the command is listed in its group (lower first)."""
        ...

    @property
    def group_help(self) -> str | None:
        """The help of the group the command sits in, when the studies make that group."""
        ...

    @property
    def Args(self) -> type[A]:  # noqa: N802 (a class)
        """The study's arguments: a `StudyArgs` model."""
        ...

    def plan(self, args: A, out: Path, say: Say) -> Sweep[C]:
        """The sweep of cells, each a scenario checked before anything is written."""
        ...

    def analyse(self, sweep: Sweep[C], args: A) -> R:
        """Typed results from the cells' runs (also of a partial sweep), written to the
        study's directory (results.json, tables)."""
        ...

    def conclude(self, outcome: Outcome[R], args: A) -> list[Shown]:
        """What the command prints once the study is analysed and reported (and what it
        keeps, e.g. a calibrated model where `itb profile predict` finds it)."""
        ...


@runtime_checkable
class OwnOutput(Protocol):
    """A study that says itself where its files are (in `conclude`'s lines), makes its
    own `--json` document, and fails (exit 1) when one of its runs did: the benchmark,
    whose table and document were `itb bench`'s before it was a study."""

    def document(self, outcome: Outcome[Any], args: Any, shown: list[Shown]) -> dict:
        """The `--json` document (instead of the study's results and paths)."""
        ...

    def failed(self, outcome: Outcome[Any]) -> bool:
        """Whether a run failed: the command then exits 1 (the runs that ended kept)."""
        ...


class Report(Protocol):
    """`<study package>.report.build`: the report of the typed results (with the sweep's
    index: its arguments, status, cells), a self-contained HTML file in <out>/report/
    (its template: the package's report.html.j2)."""

    def __call__(self, out: Path, index: SweepIndex[Any], args: Any, results: Any) -> Path: ...


@dataclass(frozen=True)
class Registered:
    package: str  # "itb.study.profile_margin"
    study: Study


class RegistryError(Exception):
    """Two studies with one command, or a STUDY that is not a Study: a bug of ITB."""


def studies(package: str = "itb.study") -> list[Registered]:
    """Every study of `package`'s subpackages, by command path, then rank."""
    found: dict[tuple[str, ...], Registered] = {}
    for info in pkgutil.iter_modules(importlib.import_module(package).__path__, f"{package}."):
        if not info.ispkg:
            continue
        study = getattr(importlib.import_module(info.name), "STUDY", None)
        if study is None:
            continue
        if not isinstance(study, Study):
            raise RegistryError(f"{info.name}.STUDY does not implement itb.study.registry.Study")
        if study.name in found:
            raise RegistryError(
                f"{info.name} and {found[study.name].package} are both `itb {' '.join(study.name)}`"
            )
        found[study.name] = Registered(info.name, study)
    return sorted(found.values(), key=lambda r: (r.study.name[:-1], r.study.rank))
