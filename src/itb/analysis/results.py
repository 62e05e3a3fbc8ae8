"""Results written to JSON with a format version that is checked when they are read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ValidationError

from itb import files
from itb.errors import ItbError, ScenarioError
from itb.rundir.layout import write_json


class DamagedResults(ItbError):
    """A result file (or one given as such, e.g. `--model`) that does not hold them: bad
    input, as a bad scenario is."""

    exit_code = 2


class OtherFormat(DamagedResults):
    """A result file written by another version of ITB (or before formats were recorded)."""


class VersionedResults(BaseModel):
    """A typed result file: `FORMAT` is the version this ITB writes and reads; `WHAT`
    and DESCRIPTION name the file's content in errors; `rebuild_hint` says how to make it
    again."""

    FORMAT: ClassVar[int] = 1
    KIND: ClassVar[str] = "results"  # its size limit (itb.files.LIMITS)
    WHAT: ClassVar[str] = "results"
    DESCRIPTION: ClassVar[str] = "these results"  # "… is not <DESCRIPTION>"
    format_version: int = 0

    def model_post_init(self, _context) -> None:
        if not self.format_version:
            self.format_version = self.FORMAT

    @classmethod
    def rebuild_hint(cls, path: Path) -> str:
        return "run the command again to rebuild them"

    def save(self, path: Path) -> None:
        write_json(path, self.model_dump(mode="json", by_alias=True))

    @classmethod
    def load(cls, path: Path):
        """The results in `path`: DamagedResults (exit 2) naming the file when it cannot be
        read (not a regular file, larger than its kind's limit) or does not hold them,
        OtherFormat when another version of ITB wrote it."""
        try:
            doc = json.loads(files.read_text(path, cls.KIND))
        except ScenarioError as e:
            raise DamagedResults(f"{path}: cannot read the {cls.WHAT}: {e.reason}") from None
        except ValueError as e:
            raise DamagedResults(
                f"{path}: cannot read the {cls.WHAT}: not valid JSON ({e})"
            ) from None
        got = doc.get("format_version") if isinstance(doc, dict) else None
        if got != cls.FORMAT:
            raise OtherFormat(
                f"{path}: {cls.WHAT} format {got!r}, this ITB reads "
                f"{cls.FORMAT}; {cls.rebuild_hint(path)}"
            )
        try:
            return cls.model_validate(doc)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(x) for x in first["loc"])
            raise DamagedResults(
                f"{path}: not {cls.DESCRIPTION} ({e.error_count()} error(s); "
                f"{where}: {first['msg']})"
            ) from None
