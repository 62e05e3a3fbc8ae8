"""The HTTP server around the application (uvicorn, h11), bounded against clients that
hold connections (docs/service.md, "Security"):

- a request's head and body must arrive within `READ_TIMEOUT_S` (10 s) of the connection (or of
  the previous answer on a kept-alive one), or the connection is closed;
- at most `max_connections` are open: one more closes the oldest connection that has
  no request being answered (a half-open one, or one kept alive), so that connections
  left open cannot lock clients out; requests beyond `limit_concurrency` are answered 503;
- the process may open as many files as its hard limit allows (`raise_nofile`), so that
  the connections, the store and the testbed's files fit.

The socket is bound before the service says it is serving (`bind`): a port in use is
an error of the command, not of a server already announced.
"""

from __future__ import annotations

import asyncio
import errno
import resource
import socket
import time

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

READ_TIMEOUT_S = 10.0
KEEP_ALIVE_S = 5.0
MAX_CONNECTIONS = 1024
NOFILE_WANTED = 65536


class BindError(Exception):
    pass


def raise_nofile(wanted: int = NOFILE_WANTED) -> int:
    """The soft limit on open files raised towards `wanted` (up to the hard limit); the
    limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return soft


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port; BindError saying why not."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # (IPPROTO_TCP named: asyncio sets TCP_NODELAY on accepted sockets only then; without
    # it each answer waited for a delayed ACK, 40 ms)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
        sock.listen(2048)
    except OSError as e:
        sock.close()
        why = "the port is in use" if e.errno == errno.EADDRINUSE else e.strerror
        raise BindError(f"cannot listen on {host}:{port}: {why}") from None
    sock.set_inheritable(True)
    return sock


def guarded_protocol(max_connections: int, read_timeout_s: float = READ_TIMEOUT_S):
    """uvicorn's h11 protocol with a read timeout and a connection cap."""

    class Guarded(H11Protocol):
        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._since = time.monotonic()
            self._arm()
            live = [
                c for c in self.connections
                if isinstance(c, Guarded) and not c.transport.is_closing()
            ]  # fmt: skip
            if len(live) > max_connections:  # (closed ones stay in the set until lost)
                idle = [c for c in live if c is not self and c._idle()]
                victim = min(idle, key=lambda c: c._since) if idle else self
                victim.transport.close()

        def _idle(self) -> bool:
            return self.cycle is None or self.cycle.response_complete

        _read_timer: asyncio.TimerHandle | None = None

        def _arm(self) -> None:
            self._read_timer = self.loop.call_later(read_timeout_s, self._read_timeout)

        def _disarm(self) -> None:
            timer = getattr(self, "_read_timer", None)
            if timer is not None:
                timer.cancel()
                self._read_timer = None

        def _read_timeout(self) -> None:
            self._read_timer = None
            if self.conn.their_state is not h11.DONE and not self.transport.is_closing():
                self.transport.close()

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state is h11.DONE:  # the whole request is in
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._since = time.monotonic()
                self._disarm()
                self._arm()

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

    return Guarded


def serve(
    app,
    sock: socket.socket,
    max_connections: int = MAX_CONNECTIONS,
    read_timeout_s: float = READ_TIMEOUT_S,
) -> None:
    """Runs the application on the bound socket until SIGINT or SIGTERM."""
    import uvicorn

    config = uvicorn.Config(
        app,
        http=guarded_protocol(max_connections, read_timeout_s),
        log_level="warning",
        timeout_keep_alive=int(KEEP_ALIVE_S),
        limit_concurrency=2 * max_connections + 64,  # (closing ones are counted)
        h11_max_incomplete_event_size=16 * 1024,
    )
    uvicorn.Server(config).run(sockets=[sock])
