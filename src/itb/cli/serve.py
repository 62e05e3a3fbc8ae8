"""`itb serve`: the scheduled transfer service (docs/service.md)."""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import os
import signal
import time
from pathlib import Path

import typer

from itb.cli.common import INVENTORY, app, load_inventory, load_testbed_file, out, progress
from itb.errors import OutputError, ScenarioError

TOKEN_ENV = "ITB_SERVICE_TOKEN"


def _link(spec: str):
    from itb.scenario.units import UnitError, parse_rate
    from itb.service.ledger import LinkSpec

    name, sep, rate = spec.partition("=")
    if not sep or not name.strip():
        raise ScenarioError(None, "--link", f"{spec!r}: expected NAME=RATE, e.g. access=1Gbit")
    try:
        bps = parse_rate(rate, lo=1_000_000, hi=10**12)
    except UnitError as e:
        raise ScenarioError(None, "--link", f"{spec!r}: {e}") from None
    if bps is None:
        raise ScenarioError(None, "--link", f"{spec!r}: a link's capacity must be finite")
    return LinkSpec(name.strip(), float(bps))


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@app.command("serve")
def serve(
    db: Path = typer.Option(
        ..., "--db", help="The SQLite store of requests and plans (created if missing; WAL)."
    ),
    link: list[str] = typer.Option(
        ...,
        "--link",
        help="A link the service plans on, NAME=RATE (its capacity B_in, e.g. access=1Gbit); repeat for more.",
    ),
    margin: float = typer.Option(
        0.025,
        "--margin",
        min=0.0,
        max=0.9,
        help="m: plans use at most B_in · (1 − m), the room left for what the transport does not keep exactly.",
    ),
    hold: float = typer.Option(
        300.0,
        "--hold",
        min=1.0,
        help="Seconds a quote holds its capacity before it expires without a commit.",
    ),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Address to listen on. Anything but loopback needs a token."
    ),
    port: int = typer.Option(8470, "--port", min=1, max=65535),
    token: str | None = typer.Option(
        None,
        "--token",
        envvar=TOKEN_ENV,
        help=f"Required as `Authorization: Bearer TOKEN` on /v1 (also from ${TOKEN_ENV}); the page takes it as #token=TOKEN.",
    ),
    execute: str | None = typer.Option(
        None,
        "--execute",
        metavar="TESTBED",
        help="Run the committed plans on this testbed as their dates come: a testbed file "
        "(scenarios/examples/service-wan.toml: 1 Gbit/s, 100 ms) or `default` (the default "
        "dumbbell). Built when the service starts, torn down when it stops; each request's "
        "outcome (done with its last byte's date, failed, missed) is in its `run`.",
    ),
    runs: Path | None = typer.Option(
        None, "--runs", help="With --execute: where the transfers' records go (default FILE.runs/)."
    ),
    inventory: Path | None = INVENTORY,
) -> None:
    """Serve transfer requests over HTTP: each (volume, release, deadline, max-rate) is
    quoted a plan (a start, a rate profile, a finish) when it fits what the link's held and
    committed plans leave, held until committed or expired; the store survives restarts,
    and a restart with another capacity re-plans and names the promises it breaks. API and
    page: docs/service.md."""
    import uvicorn

    from itb.service.api import make_app
    from itb.service.ledger import Ledger
    from itb.service.store import Store, StoreError

    links = [_link(s) for s in link]
    if len({x.name for x in links}) != len(links):
        raise ScenarioError(None, "--link", "a link is named twice")
    if not _loopback(host) and not token:
        raise ScenarioError(
            None, "--host", f"{host} is not loopback: give --token (or ${TOKEN_ENV})"
        )
    if not db.parent.is_dir():
        raise ScenarioError(str(db), "--db", f"the directory {db.parent} does not exist")
    lock = open(f"{db}.lock", "a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise OutputError(db, f"served by another `itb serve` (it holds {db}.lock)") from None
    try:
        store = Store(db)
    except StoreError as e:
        raise ScenarioError(str(db), "--db", str(e)) from None
    plan_for = _testbed(execute, links) if execute else None
    now = time.time()
    interrupted = store.interrupt_runs(now)
    if interrupted:
        out.print(f"interrupted when the service stopped: {', '.join(interrupted)}")
    ledger = Ledger(store, links, margin, hold, now, **(plan_for[2] if plan_for else {}))
    for name, broken in ledger.broken_at_start.items():
        out.print(
            f"link {name}: the new capacity broke {len(broken)} promise(s): {', '.join(broken) or '-'}"
        )
    # uvicorn stops on SIGINT/SIGTERM, then raises the signal again with the handlers it
    # found: these make it an exception, so the testbed is torn down on the way out
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _stop)
    with contextlib.suppress(KeyboardInterrupt), contextlib.ExitStack() as stack:
        if plan_for is not None:
            topo, by_link, _ = plan_for
            _execute(stack, ledger, topo, by_link, runs or Path(f"{db}.runs"), inventory)
        out.print(
            f"serving {', '.join(f'{x.name}={x.rate_bps:.0f} bit/s' for x in links)} on http://{host}:{port}/ (store {db}, pid {os.getpid()})"
        )
        uvicorn.run(make_app(ledger, token), host=host, port=port, log_level="warning")


_MAIN_PID = os.getpid()


def _stop(signum, frame):
    if os.getpid() != _MAIN_PID:
        # a forked child of this process (pyroute2 forks to create a namespace) inherits
        # the handler: raising there would unwind a copy of this process's stack through
        # its clean-ups (the testbed build's removes what it created); it just ends
        os._exit(128 + signum)
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _testbed(execute: str, links):
    """The testbed, each link's host pairs, and the ledger's timing on it."""
    from itb.service import execute as ex

    topo = load_testbed_file(None if execute == "default" else Path(execute), {})
    by_link = ex.routes(topo, [x.name for x in links])
    rtt_s = ex.check_capacity(topo, by_link, {x.name: x.rate_bps for x in links})
    launch = ex.LAUNCH_AHEAD_S + rtt_s + ex.TICK_S
    timing = {"lead_s": launch + 2.0, "guard_s": ex.GUARD_RTTS * rtt_s, "launch_s": launch}
    return topo, by_link, timing


def _execute(stack, ledger, topo, by_link, run_dir: Path, inventory: Path | None) -> None:
    """The session built (the testbed up) and the executor started, both stopped by
    `stack` (the testbed torn down)."""
    from itb import cc
    from itb.backends import open_testbed
    from itb.engine.session import Session
    from itb.service import execute as ex

    inv = load_inventory(inventory)
    if inv is not None and inv.provider is not None:
        raise ScenarioError(
            str(inventory),
            "provider",
            "the service runs on hosts already there: an inventory that reserves them "
            "(EnOSlib) is for `itb run` and `itb bench`",
        )
    tb = open_testbed(topo, cc.support(), inventory=inv, say=progress)
    holder: list = []
    session = Session(
        ex.template(topo, by_link), tb, run_dir, lambda r: holder[0].done(r), progress
    )
    out.print(f"building the testbed {topo.name} for the committed plans (records in {run_dir})")
    session.open()
    stack.callback(session.close)
    executor = ex.Executor(ledger, session, by_link, out.print)
    holder.append(executor)
    executor.start()
    stack.callback(executor.close)
