"""`--json`, alike on every command that prints a result (docs/cli.md): the result as one
JSON document on stdout and nothing else there; progress, warnings and errors stay on
stderr and the exit code is the one the command gives without it. Results are the typed
models the files of a run or a sweep hold (metrics.json, table.json, results.json), in
the same form; a number that is not one (NaN, ±inf) is null, so that any JSON reader
takes the document."""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer
from pydantic import BaseModel

JSON = typer.Option(
    False,
    "--json",
    help="Print the result as one JSON document on stdout, nothing else there (progress, "
    "warnings and errors stay on stderr; the exit code is the same). See docs/cli.md.",
)


def jsonable(x: Any) -> Any:
    """`x` as JSON's types: a model as its file holds it (by alias), a dataclass by its
    fields, a path as text, NaN and ±inf as None."""
    if isinstance(x, BaseModel):
        return jsonable(x.model_dump(mode="json", by_alias=True))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: jsonable(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, Mapping):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple | set | frozenset):
        return [jsonable(v) for v in x]
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if x is None or isinstance(x, str | int | bool):
        return x
    if isinstance(x, Path):
        return str(x)
    return str(x)


def print_json(doc: Any) -> None:
    """The result document on stdout (strict JSON: allow_nan is off after `jsonable`)."""
    sys.stdout.write(json.dumps(jsonable(doc), indent=2, allow_nan=False) + "\n")
    sys.stdout.flush()


def legacy_args(args: list[str]) -> tuple[list[str], str | None]:
    """The command line with the forms ITB no longer spells that way rewritten, and a note
    saying so: `itb calibrate --json FILE.json` (the calibration written to a file, the
    form before `--json` meant stdout on every command) is `--json-file FILE.json`. A
    `.json` after `--json` cannot be calibrate's testbed, a TOML file."""
    command = next((i for i, a in enumerate(args) if not a.startswith("-")), None)
    if command is None or args[command] != "calibrate":
        return args, None
    out, note = list(args), None
    for i in range(command + 1, len(out)):
        a = out[i]
        if a.startswith("--json="):
            out[i] = "--json-file=" + a.removeprefix("--json=")
        elif a == "--json" and i + 1 < len(out) and out[i + 1].endswith(".json"):
            out[i] = "--json-file"
        else:
            continue
        note = (
            "itb calibrate --json FILE is read as --json-file FILE (--json alone prints "
            "the calibration on stdout)"
        )
    return out, note
