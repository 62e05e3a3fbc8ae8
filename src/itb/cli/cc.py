"""`itb cc list|load|unload|verify`."""

from __future__ import annotations

from dataclasses import asdict

import typer
from rich.table import Table

from itb.cli.common import cc_app, err, out, progress
from itb.cli.output import JSON, print_json


@cc_app.command("list")
def cc_list(
    as_json: bool = JSON,
) -> None:
    """Every congestion control ITB knows: the name the kernel knows it by, where it comes
    from (built-in, module, ours = ITB's eBPF) and whether a socket can select it now
    (--json: a list of {name, kernel_name, source, usable, note})."""
    from itb import cc

    rows = cc.status()
    if as_json:
        print_json([r.to_json() for r in rows])
        return
    t = Table(title="congestion controls")
    for col in ("name", "kernel name", "source", "usable now", "note"):
        t.add_column(col)
    for r in rows:
        t.add_row(r.name, r.kernel_name or "", r.source or "", "yes" if r.usable else "no", r.note)
    out.print(t)


@cc_app.command("load")
def cc_load(
    names: list[str] = typer.Argument(..., help="Canonical names, e.g. bic htcp."),
    ours: bool = typer.Option(
        False,
        "--ours",
        help="Register ITB's eBPF implementation even where the kernel has its own.",
    ),
    as_json: bool = JSON,
) -> None:
    """Make congestion controls selectable now: the kernel's (modprobe) when it has one,
    else ITB's eBPF implementation, registered as itb_NAME. Stays until `itb cc unload`
    or `itb clean`."""
    from itb import cc

    done = cc.ensure(names, prefer="ours" if ours else "kernel", progress=progress)
    if as_json:  # a list of {name, kernel_name, source, loaded_now}
        print_json([r.to_json() for r in done])
        return
    for r in done:
        state = "loaded" if r.loaded_now else "already there"
        out.print(f"{r.name}: {r.kernel_name} ({r.source}, {state})")


@cc_app.command("unload")
def cc_unload(
    names: list[str] | None = typer.Argument(
        None, help="Canonical names; none: every one of ITB's."
    ),
    as_json: bool = JSON,
) -> None:
    """Unregister ITB's eBPF congestion controls (the kernel's own are left alone). One
    that a live run (any prefix) uses is left registered, and said so."""
    from itb import cc

    if names:
        gone, kept = cc.unload(names), {}
    else:
        cleaned = cc.clean(progress=progress)
        gone, kept = cleaned.unregistered, cleaned.kept
    if as_json:
        print_json({"unregistered": gone, "kept": kept})  # kept: name → why it was left
        return
    out.print(f"unregistered {', '.join(gone)}" if gone else "nothing of ITB's was unregistered")
    for name, why in kept.items():
        out.print(f"left {name}: {why}")


ADAPTER_SCRIPT = "loss-1e-3-20ms"  # growth, recoveries: every hook the adapter translates


@cc_app.command("verify")
def cc_verify(
    names: list[str] | None = typer.Argument(
        None,
        help="Among bic highspeed htcp scalable vegas (and cubic: the simulator's adapter "
        "only); none: all.",
    ),
    hz: list[int] = typer.Option(
        [250],
        "--hz",
        help="Kernel tick rates to test (100, 250 or 1000; BIC and H-TCP depend on it).",
    ),
    scripts: list[str] | None = typer.Option(
        None, "--script", help="Only these scripts (default: all)."
    ),
    as_json: bool = JSON,
) -> None:
    """Check that ITB's eBPF congestion controls behave exactly as Linux's own
    `net/ipv4/tcp_NAME.c`: both run through scripted events (growth, losses, timeouts,
    undo, pacing, idle restart) in lockstep; the first event after which cwnd or ssthresh
    differ is named. Then the simulator's adapter (docs/simulation.md): Linux's algorithm
    through itb-sim's translation to ns-3's state and back, against the same algorithm
    called directly, on one script each (or --script's). Needs gcc and Debian's
    linux-source package (the oracle; `make setup` installs it). Exit 1 if any script
    differs. See docs/cc.md."""
    from itb.cc import difftest, oracle
    from itb.errors import ScenarioError

    for name in names or ():
        if name not in difftest.ALGORITHMS and name not in difftest.ADAPTED:
            raise ScenarioError(
                None,
                "NAME",
                f"{name!r} has no eBPF implementation nor adapter to verify; "
                f"one of {', '.join(dict.fromkeys([*difftest.ALGORITHMS, *difftest.ADAPTED]))}",
            )
    for h in hz:
        if h not in difftest.SUPPORTED_HZ:
            raise ScenarioError(
                None,
                "--hz",
                f"{h}: the test's jiffies conversions cover HZ "
                f"{', '.join(map(str, difftest.SUPPORTED_HZ))}",
            )
    the_oracle = oracle.prepare()
    if not as_json:
        out.print(f"oracle: Linux {the_oracle.version} ({the_oracle.tarball})")
    failed = 0
    results: list[dict] = []  # --json: every script's outcome

    def shown(r, adapter: bool) -> None:
        nonlocal failed
        failed += not r.ok
        results.append({**asdict(r), "adapter": adapter, "summary": r.summary})
        if not as_json:
            out.print(
                ("[green]same[/green] " if r.ok else "[red]DIFFERS[/red] ")
                + ("(the simulator's adapter) " if adapter else "")
                + r.summary,
                highlight=False,
            )

    for name in [n for n in difftest.ALGORITHMS if not names or n in names]:
        for h in hz:
            progress(f"building and running {name} at HZ {h}")
            for r in difftest.run(difftest.build(name, h, the_oracle), scripts):
                shown(r, adapter=False)
    # the simulator's adapter (docs/simulation.md): Linux's own algorithm through itb-sim's
    # translation, against the same algorithm called directly, on one script each (or
    # --script's)
    for name in [n for n in difftest.ADAPTED if not names or n in names]:
        progress(f"building and running {name} through the simulator's adapter")
        binary = difftest.build(name, hz[0], the_oracle, adapter=True)
        for r in difftest.run(binary, scripts or [ADAPTER_SCRIPT]):
            shown(r, adapter=True)
    if as_json:
        oracle_doc = {"version": the_oracle.version, "tarball": the_oracle.tarball}
        print_json({"oracle": oracle_doc, "scripts": results, "differ": failed})
    if failed:
        err.print(f"{failed} script(s) differ from Linux")
        raise typer.Exit(1)
