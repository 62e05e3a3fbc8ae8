"""Results written to JSON with a format version that is checked when they are read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ValidationError

from itb.engine.rundir import write_json
from itb.errors import ItbError


class OtherFormat(ItbError):
    """A result file written by another version of ITB (or before formats were recorded)."""


class VersionedResults(BaseModel):
    """A typed result file: `FORMAT` is the version this ITB writes and reads; `WHAT`
    and DESCRIPTION name the file's content in errors; `rebuild_hint` says how to make it
    again."""

    FORMAT: ClassVar[int] = 1
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
        """The results in `path`: ItbError naming the file when it cannot be read or does
        not hold them, OtherFormat when another version of ITB wrote it."""
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            raise ItbError(f"{path}: cannot read the {cls.WHAT}: {e}") from e
        got = doc.get("format_version") if isinstance(doc, dict) else None
        if got != cls.FORMAT:
            raise OtherFormat(f"{path}: {cls.WHAT} format {got!r}, this ITB reads "
                              f"{cls.FORMAT}; {cls.rebuild_hint(path)}")
        try:
            return cls.model_validate(doc)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(x) for x in first["loc"])
            raise ItbError(f"{path}: not {cls.DESCRIPTION} ({e.error_count()} error(s); "
                           f"{where}: {first['msg']})") from e
