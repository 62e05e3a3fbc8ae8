"""What pyproject.toml declares: dependencies ITB uses (each imported by src/itb, or named
here with the reason it is not), Typer and Rich held to the versions the help is tested
with, and the licence: one, MIT, in LICENSE, pyproject.toml and every crate's Cargo.toml."""

from __future__ import annotations

import ast
import re
import tomllib
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
# declared, not imported: what uses them instead
INDIRECT = {"pyarrow": "pandas' Parquet engine (to_parquet, read_parquet)"}
# distributions whose module has another name
MODULE_OF = {"swagger-ui-bundle-v2": "swagger-ui-bundle"}  # (imported as swagger_ui_bundle)


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower()


def _imported() -> set[str]:
    """Top-level modules src/itb imports (function-level imports too)."""
    found = set()
    for path in (REPO / "src" / "itb").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
    return found


def test_every_declared_dependency_is_imported_or_said_why_not():
    declared = {MODULE_OF.get(n, n) for n in map(_name, PYPROJECT["project"]["dependencies"])}
    imported = {m.replace("_", "-").lower() for m in _imported()}
    unused = declared - imported - set(INDIRECT)
    assert not unused, f"declared but never imported: {sorted(unused)}"
    assert "statsmodels" not in declared


def test_typer_and_rich_are_held_below_their_next_major_and_the_installed_ones_fit():
    reqs = {_name(r): r for r in PYPROJECT["project"]["dependencies"]}
    # Typer 0.x: a minor release is a major one (0.26 started carrying its own Click)
    assert reqs["typer"].replace(" ", "") == "typer>=0.29,<0.30"
    assert re.fullmatch(r"0\.29\.\d+", version("typer"))
    assert reqs["rich"].replace(" ", "") == "rich>=13,<16"
    assert 13 <= int(version("rich").split(".")[0]) < 16


def test_the_licence_is_mit_everywhere_it_is_stated():
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License\n\nCopyright (c) 2026 The ITB authors\n")
    assert "Permission is hereby granted, free of charge" in text
    assert PYPROJECT["project"]["license"] == "MIT"
    crates = sorted((REPO / "native").glob("*/Cargo.toml"))
    assert len(crates) >= 5
    for crate in crates:
        assert tomllib.loads(crate.read_text())["package"]["license"] == "MIT", crate
