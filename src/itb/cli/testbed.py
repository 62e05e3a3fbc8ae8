"""`itb testbed up|status|plan|down`, `itb clean` and `itb calibrate`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from itb.cli.backend import BACKEND, takes_backend
from itb.cli.common import (
    ACCESS,
    BUFFER,
    FILE_ARG,
    LOSS,
    MTU,
    PAIRS,
    RATE,
    RTT,
    app,
    err,
    load_testbed_file,
    num,
    out,
    overrides,
    progress,
    testbed_app,
)
from itb.cli.output import JSON, print_json

if TYPE_CHECKING:
    from itb.backends.registry import Backend


@testbed_app.command("up")
def testbed_up(
    file: Path | None = FILE_ARG,
    pairs: int | None = PAIRS,
    rate: str | None = RATE,
    access_rate: str | None = ACCESS,
    rtt: str | None = RTT,
    loss: str | None = LOSS,
    buffer: str | None = BUFFER,
    mtu: int | None = MTU,
    as_json: bool = JSON,
) -> None:
    """Build the testbed: namespaces, veth links, addresses, routes, shaping, emulators."""
    from itb.backends import local

    topo = load_testbed_file(file, overrides(pairs, rate, access_rate, rtt, loss, buffer, mtu))
    state = local.up(topo, progress, bound=False)  # stays up after this command
    st = local.status(state)
    if as_json:  # what `itb testbed status --json` gives
        print_json(st)
        return
    out.print(
        f"testbed [bold]{topo.name}[/bold] up: {len(st['hosts'])} hosts, "
        f"{len(st['links'])} links, hash {topo.content_hash()[:12]}"
    )
    _print_status(st)


@testbed_app.command("status")
def testbed_status(
    as_json: bool = JSON,
) -> None:
    """Show the hosts (namespace, addresses, role, side) and links of the running testbed
    (--json: the format in docs/testbed.md)."""
    from itb.backends import local

    st = local.status(local.require_state())
    if as_json:
        print_json(st)
    else:
        _print_status(st)


@testbed_app.command("down")
def testbed_down(as_json: bool = JSON) -> None:
    """Stop the emulators and remove every namespace of the testbed."""
    from itb.backends import local

    stats = local.down(progress)
    if as_json:  # per emulated link, its emulator's last statistics
        print_json({"emulators": stats})
        return
    for link, s in stats.items():
        late = sum(s.get(d, {}).get("late_packets", 0) for d in ("ab", "ba"))
        out.print(
            f"emulator {link}: peak RSS {s.get('peak_rss_bytes', 0) / 2**20:.1f} MiB, "
            f"late packets {late}"
        )
    out.print("testbed down")


@testbed_app.command("plan")
def testbed_plan(
    file: Path | None = FILE_ARG,
    pairs: int | None = PAIRS,
    rate: str | None = RATE,
    access_rate: str | None = ACCESS,
    rtt: str | None = RTT,
    loss: str | None = LOSS,
    buffer: str | None = BUFFER,
    mtu: int | None = MTU,
    as_json: bool = JSON,
) -> None:
    """Print, per node, every command `up` would run (nothing is executed)."""
    from itb.emulation.actions import StartEmulator
    from itb.emulation.plan import build_plan

    topo = load_testbed_file(file, overrides(pairs, rate, access_rate, rtt, loss, buffer, mtu))
    plan = build_plan(topo)
    if as_json:
        print_json(plan_document(topo, plan))
        return
    print(f"# testbed {topo.name} ({topo.kind}), hash {topo.content_hash()}")
    for node, steps in plan.by_node().items():
        print(f"\n## node {node} (netns {steps[0].ns})")
        for step in steps:
            print(" ".join(_quote(a) for a in step.argv()))
            if isinstance(step, StartEmulator):
                print(f"# {step.config_path}:")
                for line in json.dumps(step.config, indent=1).splitlines():
                    print(f"#   {line}")


def plan_document(topo, plan) -> dict:
    """`itb testbed plan --json`: per node, its namespace and every step's argv (an
    emulator's with the path and content of its configuration)."""
    from itb.emulation.actions import StartEmulator

    nodes = []
    for node, steps in plan.by_node().items():
        shown = []
        for step in steps:
            one: dict = {"argv": step.argv()}
            if isinstance(step, StartEmulator):
                one |= {"config_path": step.config_path, "config": step.config}
            shown.append(one)
        nodes.append({"node": node, "netns": steps[0].ns, "steps": shown})
    return {"testbed": topo.name, "kind": topo.kind, "hash": topo.content_hash(), "nodes": nodes}


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


@app.command("clean")
def clean(
    force: bool = typer.Option(
        False,
        "--force",
        help="Remove the testbed even while "
        "the command that owns it (a run) is alive: that run "
        "then fails.",
    ),
    inventory: Path | None = typer.Option(
        None,
        "--inventory",
        help="Clean the SSH hosts of this inventory instead: on "
        "each, kill what ITB started (PID and start time), restore the sysctls it "
        "changed, remove its qdiscs and directory. Exit 3 naming any host that does "
        "not answer.",
    ),
    as_json: bool = JSON,
) -> None:
    """Remove what ITB recorded as created under this ITB_PREFIX: the testbed's
    namespaces, its emulators (checked by PID and start time), their logs and the state
    files; and ITB's eBPF congestion controls that no live run (of any prefix) uses.
    Nothing else is touched: a namespace that merely looks like ITB's, a process whose
    PID was reused, other files in the state directory. Refused while a live command
    owns the prefix, unless --force. Safe to run any time, also after a crash."""
    from itb.backends import local

    if inventory is not None:
        from itb.backends.ssh.cleanup import clean, restored
        from itb.cli.common import load_inventory

        done = clean(load_inventory(inventory), force=force, say=progress)
        n = sum(restored(d) for d in done)
        if as_json:  # per host, what was restored and what was left
            print_json({"restored": n, "hosts": done})
            return
        out.print(
            f"clean: restored {n} host(s)"
            if n
            else "clean: nothing of ITB on the inventory's hosts"
        )
        for d in done:
            if d.get("left"):
                out.print(f"clean: {d['left']}", highlight=False)
        return

    from itb import cc

    removed = local.clean(progress, force=force)
    cleaned = cc.clean(progress=progress)
    foreign = sorted(set(local.owned_namespaces()) - set(removed))
    if as_json:
        print_json(
            {
                "removed_namespaces": removed,
                "unregistered": cleaned.unregistered,
                "kept": cleaned.kept,  # congestion control → why it was left
                "foreign_namespaces": foreign,  # look like ITB's, not in its state
            }
        )
        return
    parts = ([f"removed {len(removed)} namespace(s)"] if removed else []) + (
        [f"unregistered {', '.join(cleaned.unregistered)}"] if cleaned.unregistered else []
    )
    out.print(f"clean: {'; '.join(parts)}" if parts else "clean: nothing to remove")
    for name, why in cleaned.kept.items():
        out.print(f"clean: left {name}: {why}")
    if foreign:
        out.print(
            f"clean: left namespace(s) {', '.join(foreign)}: not created by ITB (not in its state)"
        )


@app.command("calibrate")
@takes_backend
def calibrate(
    file: Path | None = FILE_ARG,
    json_file: Path | None = typer.Option(
        None,
        "--json-file",
        help="Also write the full calibration (checks, inventory) to this file, as JSON "
        "(--json FILE.json, the form before --json meant stdout, is still read so).",
    ),
    as_json: bool = JSON,
    tcp_seconds: float = typer.Option(10.0, help="Duration of the bulk TCP test."),
    udp_seconds: float = typer.Option(
        5.0,
        help="Duration of each UDP rate test "
        "(the GSO source, and MTU-size datagrams "
        "without GSO as UDT sends them).",
    ),
    loss_packets: int = typer.Option(
        1_000_000, help="Datagrams in the loss test (when loss is configured)."
    ),
    cc: str = typer.Option(
        "cubic",
        help="Congestion control of the bulk TCP "
        "flow (Linux's default is the reference; BBR's "
        "PROBE_RTT dips are not the emulator's).",
    ),
    pairs: int | None = PAIRS,
    rate: str | None = RATE,
    access_rate: str | None = ACCESS,
    rtt: str | None = RTT,
    loss: str | None = LOSS,
    buffer: str | None = BUFFER,
    mtu: int | None = MTU,
    backend: Backend = BACKEND,
) -> None:
    """Build the testbed, measure it against its configuration, tear it down.

    Idle RTT and RTT under load, bottleneck rate with one TCP flow and with UDP at
    1.2 × the rate, loss, host inventory, and whether the emulator kept up. Exits 1 when a
    check is off. With --inventory (--backend ssh): the same checks between the SSH
    hosts of the default pair, through the emulator host (the MTU-size UDP test runs
    locally only; docs/ssh.md). A simulator has nothing to calibrate (--backend sim is
    refused).
    """
    from itb.calibration.run import Options
    from itb.calibration.run import calibrate as run_calibration

    topo = load_testbed_file(file, overrides(pairs, rate, access_rate, rtt, loss, buffer, mtu))
    cal = run_calibration(
        topo,
        Options(tcp_seconds, udp_seconds, loss_packets=loss_packets, cc=cc),
        progress,
        backend=backend,
    )
    if as_json:
        print_json(cal.to_json())
    else:
        _print_calibration(cal)
    if json_file:
        json_file.parent.mkdir(parents=True, exist_ok=True)
        json_file.write_text(json.dumps(cal.to_json(), indent=1))
        (err if as_json else out).print(f"calibration written to {json_file}")
    if not cal.ok:
        raise typer.Exit(1)


def _print_status(st: dict) -> None:
    t = Table(title=f"hosts of {st['name']}")
    for col in ("name", "netns", "role", "side", "ipv4", "ipv6"):
        t.add_column(col)
    for h in st["hosts"] + st["routers"]:
        t.add_row(*(str(h[c] or "") for c in ("name", "netns", "role", "side", "ipv4", "ipv6")))
    out.print(t)
    lt = Table(title="links")
    for col in ("name", "kind", "a → b", "rate →", "delay →", "rate ←", "delay ←", "emulator"):
        lt.add_column(col)
    from itb.scenario.units import format_rate

    for lk in st["links"]:
        f, r = lk["forward"], lk["reverse"]
        em = lk.get("emulator")
        lt.add_row(
            lk["name"],
            lk["kind"],
            f"{lk['a']['node']} → {lk['b']['node']}",
            format_rate(f["rate_bps"]),
            f"{f['delay_us'] / 1000:g} ms",
            format_rate(r["rate_bps"]),
            f"{r['delay_us'] / 1000:g} ms",
            "" if not lk["emulated"] else ("running" if em and em["alive"] else "NOT RUNNING"),
        )
    out.print(lt)


def _print_calibration(cal) -> None:
    p = cal.path
    out.print(
        f"calibration of [bold]{cal.testbed['name']}[/bold] "
        f"({p['src']} → {p['dst']}, RTT {p['rtt_ms']:g} ms)"
    )
    t = Table()
    for col in ("quantity", "configured", "measured", "unit", "verdict", "detail"):
        t.add_column(col)
    for c in cal.checks:
        style = {"ok": "green", "info": "dim"}.get(c.verdict, "red")
        t.add_row(
            c.quantity,
            num(c.configured),
            num(c.measured),
            c.unit,
            f"[{style}]{c.verdict}[/{style}]",
            c.detail,
        )
    out.print(t)
    inv = cal.inventory
    if inv:
        cpu = inv["cpu"]
        out.print(
            f"host: {cpu['model']}, {cpu['cores']} cores, kernel {cpu['kernel']}; "
            f"MTU {inv.get('mtu')}; offloads {inv.get('offloads')}"
        )
    if "cpu_pct_during_tcp" in cal.emulator:
        out.print(
            f"emulator CPU during the TCP test: {cal.emulator['cpu_pct_during_tcp']:.0f} % "
            "of one core"
        )
    for w in cal.warnings:
        out.print(f"[yellow]warning:[/yellow] {w}")
    out.print("[green]all checks ok[/green]" if cal.ok else "[red]some checks are off[/red]")
