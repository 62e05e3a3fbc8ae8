"""A study's arguments: one pydantic model that checks itself, derives the key that names
its directory, and says how each field is given on the command line (`itb.cli.studies`
builds the command's options from it).

- A field is an option when its annotation carries an `Option`: the flag, and for a value
  given as text ("cubic,reno", "20ms", "0:10:0.5") the parser of that text. The option's
  help is the field's description, its default the field's default, its bounds the
  field's `ge` / `le`. A parsed field's default is the text the user would type, parsed
  as a given one is: `Field("20ms", validate_default=True)` (the field is typed as the
  parsed value; `validate_default` says the default is validation's input, not a value).
- The key is the model's JSON form: every field but those marked `exclude=True` (how an
  option was given: --out, a --capacity the calibration fills in), with the computed
  fields (what is derived from them); a field marked `KEY_IF_SET` only when it is set.
  The same key, the same directory (`runs/<kind>-HASH`): a command given again resumes.
- A parser raises `ScenarioError` naming the option (exit 2); so do the models' checks
  across fields. Computed fields are computed once, when the model is made, so that
  whatever they check (a model file, the calibration) is refused before anything runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    InstanceOf,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo

from itb.backends import registry
from itb.backends.registry import Backend


@dataclass(frozen=True)
class Option:
    """How a field is given on the command line."""

    flag: str  # "--cc"; a boolean's "--open-window/--no-open-window"
    parse: Callable[[str, str], Any] | None = None  # (text, flag) → the field's value
    metavar: str | None = None  # what the help shows it takes ("DURATION"; None: typer's)

    @property
    def name(self) -> str:
        """The flag errors name: "--open-window" of "--open-window/--no-open-window"."""
        return self.flag.split("/")[0]


class KeyIfSet:
    """A field's marker (in its annotation): in the key only when not None."""


KEY_IF_SET = KeyIfSet()


def option_of(field: FieldInfo) -> Option | None:
    return next((m for m in field.metadata if isinstance(m, Option)), None)


# Options every study takes alike (their help differs: each study's field gives its own)
OutDir = Annotated[Path | None, Option("--out"), Field(exclude=True)]
Seed = Annotated[int, Option("--seed"), Field(ge=0)]


class StudyArgs(BaseModel):
    """The base of every study's arguments (see the module's docstring)."""

    # defer_build: the schema is made when a study's arguments are first validated, not
    # when `itb` builds its commands from every study's fields
    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        validate_default=True,
        arbitrary_types_allowed=True,
        defer_build=True,
    )

    # where its runs run (--backend and its options, which the CLI builds from the backends'
    # registry): not in the key, which the CLI extends with the backend's own
    backend: InstanceOf[Backend] = Field(default_factory=registry.named, exclude=True)

    @field_validator("*", mode="before")
    @classmethod
    def _from_text(cls, value: Any, info: ValidationInfo) -> Any:
        """A text given to an option with a parser becomes the field's value; values of
        the field's own type (a test's, a caller's) are taken as they are."""
        opt = option_of(cls.model_fields[str(info.field_name)])
        if opt is not None and opt.parse is not None and isinstance(value, str):
            return opt.parse(value, opt.name)
        return value

    @model_validator(mode="after")
    def _derive(self) -> StudyArgs:
        for name in type(self).model_computed_fields:  # their checks, now
            getattr(self, name)
        return self

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Any:
        """Another model with these fields and `update`, checked again (its derived
        values made again: pydantic's copy would keep the cached ones)."""
        fields = {n: getattr(self, n) for n in type(self).model_fields}
        return type(self)(**(fields | dict(update or {})))

    def key(self) -> dict:
        """What identifies the study's directory (module docstring)."""
        unset = {
            n
            for n, f in type(self).model_fields.items()
            if any(isinstance(m, KeyIfSet) for m in f.metadata) and getattr(self, n) is None
        }
        return self.model_dump(mode="json", exclude=unset)

    def protocols(self) -> tuple[str, ...]:
        """The congestion controls (or protocols) its cells run, when the study names them
        all: the backend checks it has them before anything is written (none: each cell's
        are checked when the sweep opens)."""
        return ()

    def warnings(self) -> list[str]:
        """Lines said before the study starts (e.g. a model calibrated otherwise)."""
        return []

    @property
    def out(self) -> Path | None:
        """The directory given with --out (an `OutDir` field; None: runs/<kind>-HASH)."""
        for name, field in type(self).model_fields.items():
            opt = option_of(field)
            if opt is not None and opt.flag == "--out":
                return getattr(self, name)
        return None
