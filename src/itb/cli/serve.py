"""`itb serve`: the scheduled transfer service (docs/service.md)."""

from __future__ import annotations

import fcntl
import ipaddress
import os
import time
from pathlib import Path

import typer

from itb.cli.common import app, out
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
    ledger = Ledger(store, links, margin, hold, time.time())
    for name, broken in ledger.broken_at_start.items():
        out.print(
            f"link {name}: the new capacity broke {len(broken)} promise(s): {', '.join(broken) or '-'}"
        )
    out.print(
        f"serving {', '.join(f'{x.name}={x.rate_bps:.0f} bit/s' for x in links)} on http://{host}:{port}/ (store {db}, pid {os.getpid()})"
    )
    uvicorn.run(make_app(ledger, token), host=host, port=port, log_level="warning")
