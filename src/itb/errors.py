"""Typed errors of the library. Only the CLI turns them into messages and exit codes."""

from __future__ import annotations


class ItbError(Exception):
    """Base of every error the library raises on purpose."""

    exit_code = 1


class ScenarioError(ItbError):
    """A scenario or testbed description is invalid: names the file, the field and why."""

    exit_code = 2

    def __init__(self, file: str | None, field: str, reason: str):
        self.file = file or "<command line>"
        self.field = field
        self.reason = reason
        super().__init__(f"{self.file}: {field}: {reason}")


class BackendError(ItbError):
    """A command on a host failed or the testbed could not be built."""

    exit_code = 3


class CommandFailed(BackendError):
    def __init__(self, node: str, argv: list[str], returncode: int, stderr: str):
        self.node, self.argv, self.returncode, self.stderr = node, argv, returncode, stderr
        super().__init__(
            f"on {node}: {' '.join(argv)} exited {returncode}: {stderr.strip()[:500]}"
        )


class PreflightError(ItbError):
    """Something the work needs is missing (binary, privilege, kernel feature)."""

    exit_code = 4


class NotRunning(ItbError):
    """No testbed is up where one is needed."""

    exit_code = 5


class OutputError(ItbError):
    """The run directory cannot be written (disk full, read-only, missing): the run
    stopped cleanly; what was not whole is not marked done."""

    exit_code = 3

    def __init__(self, path, reason: str):
        self.path, self.reason = str(path), reason
        super().__init__(f"{self.path}: {reason}")


def os_reason(e: OSError) -> str:
    """One line for an OSError, without the path (the caller names it)."""
    import errno

    name = errno.errorcode.get(e.errno or 0, "")
    return f"{e.strerror or e}" + (f" ({name})" if name else "")
