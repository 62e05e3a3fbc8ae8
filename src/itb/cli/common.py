"""Shared by the `itb` commands: the Typer apps, the consoles, option definitions (the
parsers of comma lists, capacities and congestion-control names: `itb.scenario.options`)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import typer
import typer.core
from rich.console import Console
from rich.markup import escape

# A help text is Markdown (rich_markup_mode): `code` is shown as code, and a `<` would open
# inline HTML, which the renderer drops ("runs/bench-<hash>" shown as "runs/bench-"): every
# `<` written in a help is escaped before the help is shown (ItbGroup).
_HTML_OPEN = re.compile(r"(?<!\\)<")


def _placeholders(cmd: Any, ctx: Any) -> None:
    """What a command's help shows for its parameters (Typer 0.29 shows a type for every
    option: `<bool>` after a flag, `<str>` after a text option): a flag shows nothing, a
    text option the name of what it takes (--access-rate ACCESS_RATE; a choice is typed
    as a Literal and shows its choices, <local|ssh|sim>), an argument its name in capitals,
    and a `<placeholder>` in a help text stays as written. Idempotent."""
    if cmd.help:
        cmd.help = _HTML_OPEN.sub(r"\\<", cmd.help)
    for p in cmd.get_params(ctx):  # with the --help option Click adds
        if getattr(p, "help", None):
            p.help = _HTML_OPEN.sub(r"\\<", p.help)
        if p.metavar is not None:
            continue
        if p.param_type_name == "argument":
            p.metavar = p.name.upper()
        elif p.is_flag:
            p.metavar = ""
        elif p.display_type_rich(ctx) in ("<str>", "<list[str]>"):
            p.metavar = max(p.opts, key=len).lstrip("-").replace("-", "_").upper()


class ItbGroup(typer.core.TyperGroup):
    """Every group of `itb` (typer.Typer(cls=ItbGroup)): a command it hands out, to run it
    or to show its help, and the group itself when its help is shown, first get their
    placeholders (_placeholders). Only the commands on the path given are touched: the
    start-up of a command does not pay for the whole tree."""

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None:
            _placeholders(cmd, ctx)
        return cmd

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _placeholders(self, ctx)
        super().format_help(ctx, formatter)


app = typer.Typer(
    help="ITB: benchmark transport protocols by how long transfers take, how predictable "
    "that time is and how fairly a path is shared, on emulated long-distance networks.",
    cls=ItbGroup,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)
testbed_app = typer.Typer(
    cls=ItbGroup,
    help="Build, inspect and remove the local emulated WAN (eWAN): hosts are network "
    "namespaces, the bottleneck runs through ITB's user-space link emulator.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)


def version_text() -> str:
    """`itb 0.1.0`, and the commit of the source tree ITB runs from when it is a git
    checkout (`-dirty`: with changes not committed)."""
    import subprocess
    from importlib.metadata import version

    from itb import native

    text = f"itb {version('itb')}"
    if not (native.REPO / ".git").exists():  # an installed package: no tree of its own
        return text
    try:
        git = subprocess.run(
            ["git", "-C", str(native.REPO), "describe", "--always", "--dirty", "--abbrev=12"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return text
    commit = git.stdout.strip()
    return f"{text} (git {commit})" if git.returncode == 0 and commit else text


def _version(given: bool) -> None:
    if given:
        out.print(version_text(), highlight=False, markup=False)
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False,
        "--version",
        is_eager=True,
        callback=_version,
        help="Print ITB's version (and the git commit of its source tree) and exit.",
    ),
    quiet: bool = typer.Option(
        False,
        "--quiet",
        "-q",
        help="No progress on stderr (stage lines, the status line, a sweep's messages): "
        "warnings, errors and the results only. Given before the command: itb -q run ….",
    ),
) -> None:
    Verbosity.quiet = quiet


app.add_typer(testbed_app, name="testbed")
study_app = typer.Typer(
    cls=ItbGroup,
    help="Studies: sweeps with their own analysis and report.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)
app.add_typer(study_app, name="study")
cc_app = typer.Typer(
    cls=ItbGroup,
    help="Congestion controls by canonical name (reno, cubic, bbr, bic, highspeed, htcp, "
    "scalable, vegas, nocc): the kernel's when it has them, else ITB's eBPF ones. "
    "Runs load what they need themselves; see docs/cc.md.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)
app.add_typer(cc_app, name="cc")
profile_app = typer.Typer(
    cls=ItbGroup,
    help="Profile pursuit: transfers that follow a rate profile (steps of rate over time). "
    "Calibrate a mechanism's input → goodput/throughput model, then predict the input "
    "profile and the completion time of a volume; see docs/profile.md.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)
app.add_typer(profile_app, name="profile")

# Wide when not a terminal (logs, CI): tables stay readable instead of wrapping at 80.
out = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, width=None if sys.stderr.isatty() else 160)

FILE_ARG = typer.Argument(
    None,
    help="Testbed/scenario TOML file (default: the built-in dumbbell). See docs/scenario.md.",
    show_default=False,
)
PAIRS = typer.Option(None, "--pairs", help="Dumbbell: number of host pairs.")
RATE = typer.Option(None, "--rate", help="Bottleneck capacity C, e.g. 1Gbit, 100Mbit, unlimited.")
ACCESS = typer.Option(None, "--access-rate", help="Access-link capacity C_a of each host.")
RTT = typer.Option(None, "--rtt", help="Base RTT across the bottleneck, e.g. 20ms.")
LOSS = typer.Option(None, "--loss", help="Random loss on the bottleneck, e.g. 1%.")
BUFFER = typer.Option(None, "--buffer", help="Bottleneck queue: 1bdp, 100pkt, 2MB.")
MTU = typer.Option(None, "--mtu", help="MTU of every link: 1500 or 9000.")


def overrides(pairs, rate, access_rate, rtt, loss, buffer, mtu) -> dict:
    given = {
        "pairs": pairs,
        "rate": rate,
        "access_rate": access_rate,
        "rtt": rtt,
        "loss": loss,
        "buffer": buffer,
        "mtu": mtu,
    }
    return {k: v for k, v in given.items() if v is not None}


def load_testbed_file(file: Path | None, overrides: dict):
    from itb.scenario import load_testbed

    return load_testbed(file, overrides)


class Verbosity:
    """`itb --quiet`: no progress (stage lines, the status line, a sweep's messages);
    warnings, errors and the results are printed all the same."""

    quiet = False


def progress(msg: str) -> None:
    if not Verbosity.quiet:
        err.print(f"[dim]· {escape(msg)}[/dim]")


def say(msg: str) -> None:
    """A message of a run's or a sweep's progress, as written (stderr; none with --quiet)."""
    if not Verbosity.quiet:
        err.print(msg, highlight=False, markup=False)


def ticker():
    """One status line that rewrites itself on a terminal; every 10th line in a log."""
    count = {"n": 0}

    def tick(line: str) -> None:
        if Verbosity.quiet:
            return
        if err.is_terminal:
            err.file.write("\r\033[K" + line[: err.width - 1])
            err.file.flush()
        elif line:
            count["n"] += 1
            if count["n"] % 10 == 1:
                err.print(f"[dim]· {line}[/dim]", highlight=False)

    return tick


def num(x) -> str:
    return "" if x is None else f"{x:.4g}"


INVENTORY = typer.Option(
    None,
    "--inventory",
    help="Run on the SSH testbed this inventory "
    "describes (hosts, keys, roles; docs/ssh.md) instead of the local "
    "one. `itb lab up` writes one for this machine: "
    "runs/lab/inventory.toml.",
)


def load_inventory(path):
    """The inventory at `path` (None: the local backend). The hosts of a lab are held
    for the whole command (a benchmark's runs and what comes between them): `itb lab
    down` refuses meanwhile."""
    if path is None:
        return None
    from itb.backends.ssh.backend import load

    return load(path)
