"""The `itb` command: the only place that prints for people and chooses exit codes.

Each command lives in the module of its group; importing them registers them on `app`."""

from __future__ import annotations

import os
import sys
import tempfile
import traceback

from itb.cli import cc, inventory, lab, profile, run, serve, studies, testbed
from itb.cli.common import app, err
from itb.cli.output import legacy_args
from itb.emulation import naming
from itb.errors import INTERNAL, SIGNAL_BASE, ItbError

COMMANDS = (
    cc,
    inventory,
    lab,
    profile,
    run,
    serve,
    studies,
    testbed,
)  # imported for their registrations on `app`
INTERNAL_ERROR = INTERNAL  # sysexits' EX_SOFTWARE: a bug of ITB, not of the input or machine


def main() -> None:
    """Exit codes (itb.errors.EXIT_CODES, docs/exit-codes.md): 0 success, 1 the
    experiment failed (a repetition or a check), 2 bad input, 3 environment or in use
    (testbed, commands, busy prefix or lab, output directory), 4 missing prerequisite,
    5 no testbed up, 70 internal error, 128 + N stopped by signal N (130 Ctrl-C, 143
    SIGTERM)."""
    sys.argv[1:], note = legacy_args(sys.argv[1:])
    if note:
        err.print(f"[dim]note: {note}[/dim]", highlight=False)
    try:
        if not {"--help", "-h", "--version"} & set(sys.argv[1:]) and len(sys.argv) > 1:
            naming.prefix()  # a bad ITB_PREFIX is refused before anything is touched
        app()
    except ItbError as e:
        err.print(f"[red]error:[/red] {e}", highlight=False, soft_wrap=True)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(SIGNAL_BASE + 2)  # SIGINT
    except Exception as e:  # a bug: one line here, the traceback in a file
        fd, path = tempfile.mkstemp(prefix="itb-crash-", suffix=".txt")
        with os.fdopen(fd, "w") as f:
            traceback.print_exc(file=f)
        err.print(
            f"[red]internal error:[/red] {type(e).__name__}: {e} (traceback in {path}; "
            "please report it)",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(INTERNAL_ERROR)
