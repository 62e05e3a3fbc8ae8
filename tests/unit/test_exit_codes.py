"""One table of exit codes: itb.errors.EXIT_CODES, the same as docs/exit-codes.md, and
every typed error and every explicit exit of the CLI takes its code from it."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path

import itb
from itb import errors

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "exit-codes.md"


def _doc_table() -> dict[str, str]:
    rows = {}
    for line in DOC.read_text().splitlines():
        m = re.fullmatch(r"\| (\d+|128 \+ N) \| (.+) \|", line)
        if m:
            rows[m.group(1)] = m.group(2)
    return rows


def _error_classes() -> set[type]:
    for mod in pkgutil.walk_packages(itb.__path__, "itb."):
        if not mod.name.endswith(("__main__", "enos_helper")):
            importlib.import_module(mod.name)
    found, todo = set(), [errors.ItbError]
    while todo:
        cls = todo.pop()
        found.add(cls)
        todo += cls.__subclasses__()
    return found


def test_the_docs_page_is_the_table_of_the_code():
    doc = _doc_table()
    assert {k: v for k, v in doc.items() if k != "128 + N"} == {
        str(code): text for code, text in errors.EXIT_CODES.items()
    }
    assert "128 + N" in doc and errors.SIGNAL_BASE == 128


def test_the_codes_are_the_documented_numbers():
    assert (
        errors.OK,
        errors.FAILED,
        errors.BAD_INPUT,
        errors.ENVIRONMENT,
        errors.MISSING,
        errors.NOT_RUNNING,
        errors.INTERNAL,
    ) == (0, 1, 2, 3, 4, 5, 70)


def test_every_typed_error_exits_with_a_code_of_the_table():
    classes = _error_classes()
    assert len(classes) > 10  # the walk found the package's errors, not just the base
    off = {c.__qualname__: c.exit_code for c in classes if c.exit_code not in errors.EXIT_CODES}
    assert off == {}


def test_bad_input_errors_are_2_and_environment_errors_are_3():
    from itb.analysis.results import DamagedResults, OtherFormat
    from itb.backends.owner import Busy

    assert errors.ScenarioError("f", "x", "y").exit_code == 2
    assert DamagedResults.exit_code == OtherFormat.exit_code == 2
    assert Busy.exit_code == errors.BackendError.exit_code == errors.OutputError.exit_code == 3
    assert errors.PreflightError.exit_code == 4


def test_every_literal_exit_of_the_cli_is_in_the_table():
    literal = []
    for path in sorted((REPO / "src" / "itb" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", None) in ("Exit", "exit")
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                literal.append((path.name, node.args[0].value))
    assert literal  # the scan sees the CLI's exits
    assert [(f, c) for f, c in literal if c not in errors.EXIT_CODES] == []
