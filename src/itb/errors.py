"""Typed errors of the library. Only the CLI turns them into messages and exit codes.

Every exit code of `itb` is one of `EXIT_CODES` (docs/exit-codes.md shows the same
table; tests/unit/test_exit_codes.py checks that the two, every error class and every
explicit exit of the CLI agree).
"""

from __future__ import annotations

OK = 0
FAILED = 1  # the experiment or a check failed
BAD_INPUT = 2
ENVIRONMENT = 3  # also: in use by another command
MISSING = 4
NOT_RUNNING = 5
INTERNAL = 70  # sysexits' EX_SOFTWARE
SIGNAL_BASE = 128

EXIT_CODES: dict[int, str] = {
    OK: "success: every repetition ok, the command did what it says",
    FAILED: "the experiment failed: a repetition failed, runs of a sweep did not end, a "
    "calibration check is off, `itb inventory check` found problems, a differential "
    "test differs",
    BAD_INPUT: "bad input: a scenario, testbed, inventory, profile, model, run directory "
    "or argument that is invalid as written, or that do not fit together (the "
    "message names the file, the field and why); ITB_PREFIX not a plain name",
    ENVIRONMENT: "environment or in use: the testbed or a command on a host failed, another "
    "command holds the prefix or the lab, a directory ITB did not create is "
    "where its own would go, the output directory cannot be written",
    MISSING: "a prerequisite is missing: root, a program, a kernel feature, a congestion "
    "control, a key file, a lab that is not up",
    NOT_RUNNING: "no testbed is up where one is needed",
    INTERNAL: "internal error: a bug of ITB (the traceback is written to a file that the "
    "message names)",
}


class ItbError(Exception):
    """Base of every error the library raises on purpose."""

    exit_code = FAILED


class ScenarioError(ItbError):
    """A scenario or testbed description is invalid: names the file, the field and why."""

    exit_code = BAD_INPUT

    def __init__(self, file: str | None, field: str, reason: str):
        self.file = file or "<command line>"
        self.field = field
        self.reason = reason
        super().__init__(f"{self.file}: {field}: {reason}")


class BackendError(ItbError):
    """A command on a host failed or the testbed could not be built."""

    exit_code = ENVIRONMENT


class CommandFailed(BackendError):
    def __init__(self, node: str, argv: list[str], returncode: int, stderr: str):
        self.node, self.argv, self.returncode, self.stderr = node, argv, returncode, stderr
        super().__init__(f"on {node}: {' '.join(argv)} exited {returncode}: {stderr.strip()[:500]}")


class PreflightError(ItbError):
    """Something the work needs is missing (binary, privilege, kernel feature)."""

    exit_code = MISSING


class NotRunning(ItbError):
    """No testbed is up where one is needed."""

    exit_code = NOT_RUNNING


class OutputError(ItbError):
    """The run directory cannot be written (disk full, read-only, missing): the run
    stopped cleanly; what was not whole is not marked done."""

    exit_code = ENVIRONMENT

    def __init__(self, path, reason: str):
        self.path, self.reason = str(path), reason
        super().__init__(f"{self.path}: {reason}")


def os_reason(e: OSError) -> str:
    """One line for an OSError, without the path (the caller names it)."""
    import errno

    name = errno.errorcode.get(e.errno or 0, "")
    return f"{e.strerror or e}" + (f" ({name})" if name else "")
