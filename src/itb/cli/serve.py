"""`itb serve`: the scheduled transfer service (docs/service.md)."""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import math
import os
import signal
import time
from pathlib import Path

import typer

from itb.cli.common import INVENTORY, app, load_inventory, load_testbed_file, out, progress
from itb.errors import SIGNAL_BASE, OutputError, ScenarioError, os_reason

TOKEN_ENV = "ITB_SERVICE_TOKEN"
HOLD_MAX_S = 7 * 86400.0


def _link(spec: str):
    from itb.scenario.units import UnitError, parse_rate
    from itb.service.ledger import LinkSpec
    from itb.service.schema import link_name

    name, sep, rate = spec.partition("=")
    if not sep or not name.strip():
        raise ScenarioError(None, "--link", f"{spec!r}: expected NAME=RATE, e.g. access=1Gbit")
    try:
        link_name(name.strip())
    except ValueError as e:
        raise ScenarioError(None, "--link", f"{spec!r}: {e}") from None
    try:
        bps = parse_rate(rate, lo=1_000_000, hi=10**12)
    except UnitError as e:
        raise ScenarioError(None, "--link", f"{spec!r}: {e}") from None
    if bps is None:
        raise ScenarioError(None, "--link", f"{spec!r}: a link's capacity must be finite")
    return LinkSpec(name.strip(), int(bps))


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
        help=f"Seconds a quote holds its capacity before it expires without a commit (1 to {HOLD_MAX_S:.0f}).",
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
    max_connections: int = typer.Option(
        1024,
        "--max-connections",
        min=16,
        max=60000,
        help="Connections open at once; one more closes the oldest that has no request being answered.",
    ),
    read_timeout: float = typer.Option(
        10.0,
        "--read-timeout",
        min=0.1,
        max=600.0,
        help="Seconds a client has to send a request's head and body once connected (or answered).",
    ),
) -> None:
    """Serve transfer requests over HTTP: each (volume, release, deadline, max-rate) is
    quoted a plan (a start, a rate profile, a finish) when it fits what the link's held and
    committed plans leave, held until committed or expired; the store survives restarts,
    and a restart with another capacity re-plans and names the promises it breaks. API and
    page: docs/service.md."""
    from itb.service import serving
    from itb.service.api import make_app
    from itb.service.guard import loopback_hosts
    from itb.service.ledger import Ledger

    links = _checked(link, hold, margin, host, token)
    plan_for = _testbed(execute, links) if execute else None
    serving.raise_nofile()
    try:
        sock = serving.bind(host, port)
    except serving.BindError as e:
        raise OutputError(f"{host}:{port}", str(e)) from None
    try:
        store, lock_fd = _open_store(db)
    except BaseException:
        sock.close()
        raise
    now = time.time_ns()
    interrupted = store.interrupt_runs(now / 1e9)
    if interrupted:
        out.print(f"interrupted when the service stopped: {', '.join(interrupted)}")
    ledger = Ledger(store, links, margin, hold, now, **(plan_for[2] if plan_for else {}))
    for name, broken in ledger.broken_at_start.items():
        out.print(
            f"link {name}: the new capacity broke {len(broken)} promise(s): {', '.join(broken) or '-'}"
        )
    # uvicorn stops on SIGINT/SIGTERM, then raises the signal again with the handlers it
    # found: these make it an exception, so the testbed is torn down on the way out, and
    # the command exits 128 + the signal (docs/exit-codes.md)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, _stop)
    hosts = None if token else loopback_hosts(port)
    try:
        with contextlib.suppress(KeyboardInterrupt), contextlib.ExitStack() as stack:
            stack.callback(store.close)
            if plan_for is not None:
                topo, by_link, _ = plan_for
                _execute(stack, ledger, topo, by_link, runs or Path(f"{db}.runs"), inventory)
            out.print(
                f"serving {', '.join(f'{x.name}={x.rate_bps} bit/s' for x in links)} on http://{host}:{port}/ (store {db}, pid {os.getpid()})"
            )
            serving.serve(make_app(ledger, token, hosts=hosts), sock, max_connections, read_timeout)
    finally:
        sock.close()
        os.close(lock_fd)
    if _STOPPED:
        raise typer.Exit(SIGNAL_BASE + _STOPPED[-1])


def _checked(link: list[str], hold: float, margin: float, host: str, token: str | None) -> list:
    """The links, once every option is one the service can keep (before anything opens)."""
    links = [_link(s) for s in link]
    if len({x.name for x in links}) != len(links):
        raise ScenarioError(None, "--link", "a link is named twice")
    if not (math.isfinite(hold) and 1.0 <= hold <= HOLD_MAX_S):
        raise ScenarioError(None, "--hold", f"{hold}: seconds from 1 to {HOLD_MAX_S:.0f}")
    if not math.isfinite(margin):
        raise ScenarioError(None, "--margin", f"{margin}: a share from 0 to 0.9")
    if not _loopback(host) and not token:
        raise ScenarioError(
            None, "--host", f"{host} is not loopback: give --token (or ${TOKEN_ENV})"
        )
    return links


def _open_store(db: Path):
    """The store, and the descriptor holding the lock on its file: one server per store
    whatever path names it (a symbolic or hard link locks the same file). A file that is
    not a store, or cannot be written, is refused and left as it was."""
    from itb.service.store import Store, StoreError, StoreUnwritable

    if not db.parent.is_dir():
        raise ScenarioError(str(db), "--db", f"the directory {db.parent} does not exist")
    if db.is_dir():
        raise ScenarioError(str(db), "--db", f"{db} is a directory, not a store")
    existed = db.exists()
    try:
        fd = os.open(db, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as e:
        raise OutputError(db, f"the store cannot be opened for writing: {os_reason(e)}") from None
    try:  # (before reading it: a server's WAL under another name is not seen from here)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise OutputError(db, "served by another `itb serve` (it holds the store's lock)") from None
    try:
        return Store(db, checkpoints=True), fd
    except (StoreError, StoreUnwritable) as e:
        if not existed:
            for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
                p.unlink(missing_ok=True)
        os.close(fd)
        if isinstance(e, StoreError):
            raise ScenarioError(str(db), "--db", str(e)) from None
        raise OutputError(db, str(e)) from None


_MAIN_PID = os.getpid()
_STOPPED: list[int] = []  # the signals that stopped the service


def _stop(signum, frame):
    if os.getpid() != _MAIN_PID:
        # a forked child of this process (pyroute2 forks to create a namespace) inherits
        # the handler: raising there would unwind a copy of this process's stack through
        # its clean-ups (the testbed build's removes what it created); it just ends
        os._exit(128 + signum)
    _STOPPED.append(signum)
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
    from itb.backends.testbed import Hosts
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
    assert isinstance(tb, Hosts)  # (local or SSH: a testbed of hosts)
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
