"""Results written to JSON with a format version that is checked when they are read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel

from itb.engine.rundir import write_json
from itb.errors import ItbError


class VersionedResults(BaseModel):
    """A typed result file: `FORMAT` is the version this ITB writes and reads."""

    FORMAT: ClassVar[int] = 1
    format_version: int = 0

    def model_post_init(self, _context) -> None:
        if not self.format_version:
            self.format_version = self.FORMAT

    def save(self, path: Path) -> None:
        write_json(path, self.model_dump(mode="json", by_alias=True))

    @classmethod
    def load(cls, path: Path):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            raise ItbError(f"{path}: cannot read the results: {e}") from e
        if not isinstance(doc, dict) or doc.get("format_version") != cls.FORMAT:
            got = doc.get("format_version") if isinstance(doc, dict) else None
            raise ItbError(f"{path}: results format {got!r}, this ITB reads {cls.FORMAT}; "
                           "run the command again to rebuild them")
        return cls.model_validate(doc)
