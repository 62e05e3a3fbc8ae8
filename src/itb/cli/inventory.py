"""`itb inventory trust|check`: an SSH testbed's hosts, before a run uses them."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from itb.cli.common import ItbGroup, app, err, load_inventory, out, progress
from itb.cli.output import JSON, print_json

inventory_app = typer.Typer(
    cls=ItbGroup,
    help="The hosts of an SSH testbed's inventory (docs/ssh.md): "
    "accept their host keys, check that ITB can use them.",
    no_args_is_help=True,
)
app.add_typer(inventory_app, name="inventory")

FILE = typer.Argument(
    ..., help="The inventory (TOML; `itb lab up` writes runs/lab/inventory.toml)."
)


@inventory_app.command("trust")
def trust(
    file: Path = FILE,
    yes: bool = typer.Option(
        False,
        "--yes",
        help="Accept every key not yet known without asking (only on a network you control).",
    ),
) -> None:
    """Show the host key each host presents and, once you accept it, add it to the
    inventory's known_hosts. ITB never adds a key on its own: a host whose key is not
    there is refused. A key that differs from the one already recorded is never
    replaced here (edit known_hosts yourself if the host was reinstalled)."""
    from itb.backends.ssh import hostkeys

    inv = load_inventory(file)
    known = hostkeys.KnownHosts(inv)
    for h in inv.host:
        key = hostkeys.fetch_host_key(inv, h)
        fp = key.get_fingerprint("sha256")
        status = known.status(h, key)
        if status == "known":
            out.print(f"{h.name} ({h.address}:{h.port}): {fp} already known")
            continue
        if status == "changed":
            err.print(
                f"[red]{h.name} ({h.address}:{h.port}) presents {fp}, not the key "
                f"recorded in {known.path}: left as it is (a changed host key may be an "
                "attack)[/red]"
            )
            raise typer.Exit(3)
        if not yes and not typer.confirm(
            f"{h.name} ({h.address}:{h.port}) presents {key.get_algorithm()} {fp}. Trust it?"
        ):
            out.print(f"{h.name}: not trusted")
            continue
        known.add(h, key)
        out.print(f"{h.name}: {fp} added")
    out.print(f"known_hosts {known.path}: {known.save()} key(s) added")


@inventory_app.command("check")
def check(file: Path = FILE, as_json: bool = JSON) -> None:
    """Log in to every host (host key, user, key, sudo) and check there what the
    inventory claims: the tools ITB needs, each data-plane interface and address, a
    remote_dir owned by the SSH user (or absent: ITB creates it), no directory of
    someone else's where ITB's would go, one machine per entry. Shows each host's CPU,
    kernel, NIC and congestion controls. Changes nothing. Exit 1 listing every problem
    found (a host that does not answer is one)."""
    from itb.backends.facts import host_facts
    from itb.backends.ssh import hosts as ssh_hosts
    from itb.backends.ssh import verify
    from itb.errors import ItbError

    inv = load_inventory(file)
    progress(f"connecting to {len(inv.host)} host(s)")

    def one(h):  # every host, also when another does not answer
        try:
            return ssh_hosts.connect(inv, [h.name]), None
        except ItbError as e:
            return {}, str(e)

    remotes, found = {}, []
    for got, problem in ssh_hosts.parallel(one, list(inv.host)):
        remotes.update(got)
        found += [problem] if problem else []
    table = Table(title=f"hosts of {file}")
    columns = ("host", "role", "user", "kernel", "cpu", "nic", "congestion controls")
    for col in columns:
        table.add_column(col)
    hosts: list[dict] = []  # --json: the table's rows
    try:
        found += [p.message for p in verify.same_machine(remotes)]
        for name, r in sorted(remotes.items()):
            h = inv.get(name)
            progress(f"checking {name}")
            problems = verify.host_problems(r, h)
            found += [p.message for p in problems]
            if any(p.tools for p in problems):
                continue  # without its tools, the facts cannot be read
            iface = h.iface
            f = host_facts(r, iface)
            nic = f.get("nic", {})
            row = (
                name,
                h.role,
                r.conn.user + (" (sudo)" if r.sudo else ""),
                f["cpu"]["kernel"] or "?",
                f"{f['cpu']['cores']} × {f['cpu']['model']}",
                f"{iface} {nic.get('driver', '?')} mtu {nic.get('mtu')}",
                " ".join(f["congestion_controls"]),
            )
            table.add_row(*row)
            hosts.append(dict(zip(columns, row)))
    finally:
        for r in remotes.values():
            r.conn.close()
    if as_json:  # problems as the lines printed on stderr without --json
        print_json({"inventory": file, "hosts": hosts, "problems": found})
    else:
        out.print(table)
    if found:
        for msg in found:
            err.print(f"[red]problem:[/red] {msg}", highlight=False, soft_wrap=True)
        err.print(f"{file}: {len(found)} problem(s)")
        raise typer.Exit(1)
    if not as_json:
        out.print(f"{file}: {len(inv.host)} host(s) as the inventory says")
