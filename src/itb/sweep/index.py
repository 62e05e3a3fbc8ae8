"""A sweep's index, `<kind>.json`, as typed models, and its reader.

    {"format": 1, "kind": "profile-margin", "digest": "3f2a9c0b1d",
     "args": {...the arguments' key...}, "created": "2026-11-27T10:00:00+0100",
     "cells": [{"name": "rtt20ms-m5", "rtt_ms": 20.0, "margin": 0.05, ...,
                "scenario": "scenarios/rtt20ms-m5.toml", "run": "cells/rtt20ms-m5"}, ...],
     "order": [["rtt20ms-m5", 1], ...], "status": "running"}

`args` is the arguments' key, whose hash is the digest: written for the record, and named
when a directory of other arguments is refused. A cell is flat: its name, its labels, its
scenario file and its run directory (both relative to the sweep's directory, derived from
its name). The labels are its study's: each study subclasses `IndexCell` with them, typed,
the nested ones as small models (the benchmark's in `itb.suite.realisation`, a study's in
its subpackage), and the sweep is `Sweep[ThatCell]`, its index `SweepIndex[ThatCell]`.

The index is written with exactly the keys it holds: an optional label the plan did not
give is not written (it reads back as its default), and an index read back (to resume it)
is written back with the keys it was read with.

`read_index` reads it through the run directory's one reader (`itb.rundir.records`):
anything but an index of this format whose cells are the sweep's is a `RunDirError`
(exit 2) naming the file and the first field that is wrong, e.g.
`runs/profile-margin-3f2a9c0b1d/profile-margin.json: field cells[2].rtt_ms: missing`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, Final, Generic, Literal, Self, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from itb import rundir
from itb.errors import ScenarioError
from itb.rundir.records import Record, load_json, model_of

FORMAT: Final = 1  # the layout of the index this ITB writes and reads
PATHS = ("scenario", "run")


class IndexCell(BaseModel):
    """One cell of a sweep's index: its name and where its scenario and its run are. A
    study's cell subclasses it with its labels; a key the model does not have is refused."""

    model_config = ConfigDict(extra="forbid")
    name: str
    scenario: str = Field(default_factory=lambda cell: f"scenarios/{cell['name']}.toml")
    run: str = Field(default_factory=lambda cell: f"cells/{cell['name']}")

    @model_validator(mode="after")
    def _paths_written(self) -> Self:
        # derived from the name or read, the paths are always written: whoever reads the
        # directory (or `itb run`s a cell alone) follows them
        self.__pydantic_fields_set__.update(PATHS)
        return self

    @model_serializer(mode="wrap")
    def _flat(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The name, the labels, then the paths: as ITB has always written a cell."""
        data = handler(self)
        paths = {k: data.pop(k) for k in PATHS if k in data}
        return data | paths


C = TypeVar("C", bound=IndexCell)
Status = Literal["running", "complete", "incomplete"]


class IndexHead(Record):
    """What identifies a sweep's index, read before its cells: a directory of other
    arguments is refused as such, whatever cells it holds."""

    WHAT: ClassVar[str] = "a sweep's index (<kind>.json)"
    VERSION_FIELD: ClassVar[str | None] = "format"
    VERSION: ClassVar[int] = FORMAT
    format: Literal[1]
    kind: str
    digest: str  # of the arguments' key
    args: dict[str, Any]  # the arguments' key, for the record


class SweepIndex(IndexHead, Generic[C]):
    """`<kind>.json`: the sweep's arguments, every cell, the run order and the status."""

    model_config = ConfigDict(extra="forbid")
    created: str
    cells: list[C]
    order: list[tuple[str, int]]  # (cell, repetition), in the order they run
    status: Status
    # what stopped a sequential sweep's repetitions before every comparison was decided
    # ("budget"; written only then)
    stopped_by: str | None = None

    def write(self, path: Path) -> None:
        """Atomically (`rundir.write_json`), with the keys it holds (module docstring)."""
        rundir.write_json(path, self.model_dump(mode="json", exclude_unset=True))


def read_index(path: Path, model: type[SweepIndex[C]], digest: str | None = None) -> SweepIndex[C]:
    """The index in `path` as `model` (`SweepIndex[TheCell]`): `RunDirError` naming the
    file and the field when it is not one; when `digest` is given, `ScenarioError` if the
    index is of other arguments (checked first: their cells may be others)."""
    data = load_json(path)
    head = model_of(path, data, IndexHead)
    if digest is not None and head.digest != digest:
        raise ScenarioError(
            str(path),
            "(arguments)",
            f"{path.parent} holds a {head.kind} run with other arguments "
            f"({json.dumps(head.args)}); choose another --out",
        )
    return model_of(path, data, model)
