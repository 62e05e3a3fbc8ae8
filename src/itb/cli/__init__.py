"""The `itb` command: the only place that prints for people and chooses exit codes.

Each command lives in the module of its group; importing them registers them on `app`."""

from __future__ import annotations

import sys

from itb.cli import bench, cc, run, study, testbed
from itb.cli.common import app, err
from itb.errors import ItbError

COMMANDS = (bench, cc, run, study, testbed)  # imported for their registrations on `app`


def main() -> None:
    try:
        app()
    except ItbError as e:
        err.print(f"[red]error:[/red] {e}", highlight=False, soft_wrap=True)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
