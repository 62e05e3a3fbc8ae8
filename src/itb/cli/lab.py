"""`itb lab up|down`: an SSH testbed on this machine (sshd per network namespace)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer

from itb.cli.common import ItbGroup, app, out, progress
from itb.cli.output import JSON, print_json

lab_app = typer.Typer(
    cls=ItbGroup,
    help="An SSH testbed on this one machine, to try the SSH backend: "
    "each host is a network namespace with its own OpenSSH server, the "
    "left and right hosts are joined through an emulator host (or, with "
    "--topology chain|star, several L2 segments through emulated links). See "
    "docs/ssh.md.",
    no_args_is_help=True,
)
app.add_typer(lab_app, name="lab")

DIR = typer.Option(
    Path("runs/lab"),
    "--dir",
    help="Where the lab keeps its keys, sshd configurations and inventory.",
)


@lab_app.command("up")
def up(
    hosts: int = typer.Option(
        8,
        "--hosts",
        min=2,
        help="End hosts (the first half left, the rest right); an emulator host comes on top.",
    ),
    d: Path = DIR,
    control_net: str = typer.Option(
        "198.19.1",
        "--control-net",
        help="The /24 (three "
        "octets) of the control veths between this machine "
        "and the lab's sshd servers; another lab needs "
        "another.",
    ),
    emulator: bool = typer.Option(
        True,
        "--emulator/--no-emulator",
        help="Join the two "
        "sides through an emulator host (linkem runs there "
        "during a run), or directly (a real bottleneck: the "
        "scenario's is not applied; calibration measures it).",
    ),
    topology: Literal["dumbbell", "chain", "star"] = typer.Option(
        "dumbbell",
        "--topology",
        help="dumbbell (left and right joined by one emulator host), chain (segments "
        "s0 … sN in a row, each pair joined by an emulated link) or star (leaves b1 … bN, "
        "each joined to a hub by an emulated link); a scenario's routers map onto the "
        "segments and its emulated links onto the wires (docs/ssh.md, 'Topologies').",
    ),
    links: int | None = typer.Option(
        None,
        "--links",
        help="Emulated links of a chain or star (default 3).",
        show_default=False,
    ),
    emulators: int = typer.Option(
        1, "--emulators", help="Emulator hosts sharing a chain's or star's links in turn."
    ),
    as_json: bool = JSON,
) -> None:
    """Start the lab and write its inventory (printed): pass it as --inventory to
    `itb run`, `itb bench`, `itb calibrate` and `itb clean`."""
    from itb.backends.ssh import lab

    n_links = links if links is not None else (1 if topology == "dumbbell" else 3)
    path = lab.up(hosts, d, progress, control_net, emulator, topology, n_links, emulators)
    if as_json:
        print_json(
            {
                "inventory": path,
                "hosts": hosts,
                "topology": topology,
                "emulator": emulator,
                "links": n_links,
                "emulators": emulators,
            }
        )
        return
    out.print(path.read_text(), markup=False, highlight=False)
    if topology == "dumbbell":
        shape = " + emulator host" if emulator else ", sides joined directly"
    else:
        shape = f" on a {topology} of {n_links} emulated link(s), {emulators} emulator host(s)"
    out.print(f"lab up: {hosts} end host(s){shape}; inventory: {path}")


@lab_app.command("down")
def down(
    d: Path = DIR,
    force: bool = typer.Option(
        False,
        "--force",
        help="Stop the commands that use the "
        "lab first (SIGTERM: a run restores its hosts and keeps "
        "the repetitions it finished), then take it down.",
    ),
    as_json: bool = JSON,
) -> None:
    """Stop the lab's sshd servers and remove its namespaces, veths, keys and inventory
    (only what `itb lab up` recorded in <dir>/lab.json). Refused (exit 3, nothing
    removed) while a command (`itb run`, `bench`, `calibrate`, `clean` with the lab's
    inventory) uses the lab, unless --force."""
    from itb.backends.ssh import lab

    removed = lab.down(d, progress, force=force)
    if as_json:
        print_json({"removed_namespaces": removed})
        return
    out.print(
        f"lab down: removed {len(removed)} namespace(s)" if removed else "lab down: no lab up"
    )
