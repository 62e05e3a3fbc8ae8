"""What the service checks of every HTTP request before its application sees it (an ASGI
middleware, docs/service.md "Security"), in this order:

1. **Host and Origin**, on a loopback service without a token: `Host` must name the
   loopback address it listens on (`127.0.0.1`, `localhost` or `[::1]`, with its port),
   so that a page of another site cannot reach it under a name of its own (DNS
   rebinding); an `Origin` (or `Sec-Fetch-Site: cross-site`) from anywhere but the
   service's own pages is refused, so that another site's form or `text/plain` POST
   cannot act for the user (CSRF). 403, with the reason.
2. **The token**, when the service has one, on every `/v1` call: `Authorization: Bearer
   TOKEN`, compared as bytes in constant time (any header bytes, ASCII or not); 401
   otherwise — before a byte of the body is read.
3. **The body's size**: at most `max_body` bytes (a `Content-Length` above it is refused
   at once; a chunked body as soon as it passes it): 413. The body is read here, whole,
   and handed on.
"""

from __future__ import annotations

import hmac
import json

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def loopback_hosts(port: int) -> set[bytes]:
    """The Host headers a loopback service answers: its names with its port (and without
    it on port 80, as browsers send it)."""
    out = {f"{h}:{port}".encode() for h in LOOPBACK_NAMES}
    if port == 80:
        out |= {h.encode() for h in LOOPBACK_NAMES}
    return out


class Guard:
    def __init__(
        self,
        app,
        token: str | None,
        hosts: set[bytes] | None,
        max_body: int,
    ) -> None:
        """`hosts`: the Host headers allowed (None: any; a service with a token)."""
        self.app = app
        self.expected = b"Bearer " + token.encode() if token is not None else None
        self.hosts = hosts
        self.origins = {b"http://" + h for h in hosts} if hosts is not None else None
        self.max_body = max_body

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: dict[bytes, bytes] = {}
        for k, v in scope["headers"]:
            headers.setdefault(k, v)
        why = self._refusal(scope, headers)
        if why is not None:
            await _answer(send, *why)
            return
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            await _answer(send, 413, f"a body of at most {self.max_body} bytes")
            return
        body, more = bytearray(), True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_body:
                await _answer(send, 413, f"a body of at most {self.max_body} bytes")
                return
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _refusal(self, scope, headers: dict[bytes, bytes]) -> tuple[int, str] | None:
        if self.hosts is not None:
            if headers.get(b"host") not in self.hosts:
                return 403, "the Host header must name this loopback service"
            origin = headers.get(b"origin")
            if origin is not None and origin not in self.origins:  # type: ignore[operator]
                return 403, "a request from another site's page is refused"
            if headers.get(b"sec-fetch-site") == b"cross-site":
                return 403, "a request from another site's page is refused"
        if self.expected is not None and scope["path"].startswith("/v1"):
            given = headers.get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                return 401, "a token is required: Authorization: Bearer TOKEN"
        return None


async def _answer(send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    extra = [(b"www-authenticate", b"Bearer")] if status == 401 else []
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
                *extra,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
