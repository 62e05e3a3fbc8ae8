"""The service over HTTP (docs/service.md): a FastAPI application around a `Ledger`.

    POST   /v1/requests                 quote: 201 held or refused (200 when the id was seen)
    GET    /v1/requests                 every request, any state (?state=&link=&after=&limit=)
    POST   /v1/requests/{id}/commit     held → committed
    DELETE /v1/requests/{id}            held or committed → cancelled
    GET    /v1/requests/{id}            the request's state, plan and predicted completion
    GET    /v1/links/{name}/schedule    the held and committed plans on the link (bounded)
    PUT    /v1/links/{name}             a new capacity: re-plans, lists the broken promises
    GET    /                            the schedule page
    GET    /docs                        the API's documentation (Swagger UI, served locally)

An invalid request is answered 422 with the field and the reason (FastAPI's format:
`detail[k].loc` ends with the field's name; the input is not echoed past 64 characters)
and changes nothing. Host, Origin, the token and the body's size are checked before
(itb.service.guard). A store that cannot be written is 503, never 500.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable
from importlib import resources
from typing import Annotated

from fastapi import FastAPI, HTTPException, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from itb.service import schema
from itb.service.guard import Guard
from itb.service.intplan import IntRequest, ns_of, s_of
from itb.service.ledger import Conflict, Ledger, NotFound
from itb.service.schema import LinkIn, RequestIn, RequestOut, out
from itb.service.store import STATES, Record

MAX_BODY = 64 * 1024
SCHEDULE_LIMIT, SCHEDULE_MAX = 200, 5000
LIST_LIMIT, LIST_MAX = 100, 1000

# (anchored: a pattern is searched, not matched whole)
RequestId = Annotated[str, Path(max_length=128, pattern=f"^{schema.ID.pattern}$")]
LinkName = Annotated[str, Path(max_length=64, pattern=f"^{schema.LINK.pattern}$")]


class Fragments:
    """Each record's JSON as the API answers it, made once per version of the record (a
    schedule is then mostly joined, not serialised: its readers leave the CPU to the
    writers)."""

    MAX = 100_000

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.cache: dict[str, tuple[Record, str]] = {}

    def of(self, rec: Record) -> str:
        hit = self.cache.get(rec.request.id)
        if hit is not None and hit[0] is rec:
            return hit[1]
        text = json.dumps(out(rec), allow_nan=False)
        with self.lock:
            if len(self.cache) >= self.MAX:
                self.cache.clear()
            self.cache[rec.request.id] = (rec, text)
        return text


def make_app(
    ledger: Ledger,
    token: str | None = None,
    clock: Callable[[], int] = time.time_ns,
    hosts: set[bytes] | None = None,
) -> FastAPI:
    """`hosts`: the Host headers a loopback service without a token answers (None: any)."""
    app = FastAPI(title="ITB transfer service", version="2", docs_url=None, redoc_url=None)
    app.add_middleware(Guard, token=token, hosts=hosts, max_body=MAX_BODY)
    fragments = Fragments()
    # one schedule or list built at a time: readers queue among themselves, not in front
    # of the quotes and commits (each read is a share of the CPU a writer waits for)
    reading = threading.Semaphore(1)
    swagger = _swagger_dir()
    if swagger is not None:
        app.mount("/static/swagger", StaticFiles(directory=swagger), name="swagger")

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        return JSONResponse({"detail": schema.trimmed(list(exc.errors()))}, status_code=422)

    @app.exception_handler(sqlite3.OperationalError)
    async def _store(request: Request, exc: sqlite3.OperationalError):
        return JSONResponse({"detail": f"the store cannot be written: {exc}"}, status_code=503)

    _request_routes(app, ledger, clock, reading)
    _link_routes(app, ledger, clock, reading, fragments)
    _page_routes(app, swagger)
    return app


def _request_routes(app: FastAPI, ledger: Ledger, clock: Callable[[], int], reading) -> None:
    """Quote, list, commit, cancel and read requests (/v1/requests)."""

    @app.post("/v1/requests", status_code=201, response_model=RequestOut)
    def quote(body: RequestIn):
        if body.link not in ledger.rate:
            raise HTTPException(422, [{
                "loc": ["body", "link"], "type": "value_error",
                "msg": f"no link {body.link!r}; the links are {sorted(ledger.rate)}",
            }])  # fmt: skip
        req = IntRequest(
            body.id, body.link, int(body.volume), ns_of(body.release), ns_of(body.deadline),
            int(body.max_rate),
        )  # fmt: skip
        try:
            rec, new = ledger.quote(req, clock())
        except Conflict as e:
            raise HTTPException(409, str(e)) from None
        return JSONResponse(out(rec), status_code=201 if new else 200)  # 200: a retry

    @app.get("/v1/requests")
    def listing(
        state: Annotated[str | None, Query(description=f"one of {', '.join(STATES)}")] = None,
        link: Annotated[
            str | None, Query(max_length=64, pattern=f"^{schema.LINK.pattern}$")
        ] = None,
        after: Annotated[int, Query(ge=0, description="the `next` of the page before")] = 0,
        limit: Annotated[int, Query(ge=1, le=LIST_MAX)] = LIST_LIMIT,
    ):
        if state is not None and state not in STATES:
            raise HTTPException(422, [{
                "loc": ["query", "state"], "type": "value_error",
                "msg": f"one of {', '.join(STATES)}",
            }])  # fmt: skip
        ledger.tick(clock())  # (holds past their time: expired first)
        with reading:
            recs = ledger.store.page(state, link, after, limit)
        nxt = recs[-1].seq if len(recs) == limit else None
        return _json({"requests": [out(r) for r in recs], "next": nxt})

    @app.post("/v1/requests/{rid}/commit", response_model=RequestOut)
    def commit(rid: RequestId):
        return _json(out(_call(ledger.commit, rid, clock())))

    @app.delete("/v1/requests/{rid}", response_model=RequestOut)
    def cancel(rid: RequestId):
        return _json(out(_call(ledger.cancel, rid, clock())))

    @app.get("/v1/requests/{rid}", response_model=RequestOut)
    def get(rid: RequestId):
        return _json(out(_call(ledger.get, rid, clock())))


def _link_routes(
    app: FastAPI, ledger: Ledger, clock: Callable[[], int], reading, fragments: Fragments
) -> None:
    """A link's schedule, its capacity, the links (/v1/links)."""

    def link_of(name: str) -> str:
        if name not in ledger.rate:
            raise HTTPException(404, f"no link {name!r}; the links are {sorted(ledger.rate)}")
        return name

    @app.get("/v1/links/{name}/schedule")
    def schedule(
        name: LinkName,
        since: Annotated[float | None, Query(alias="from", ge=0, le=schema.DATE_MAX)] = None,
        until: Annotated[float | None, Query(alias="to", ge=0, le=schema.DATE_MAX)] = None,
        limit: Annotated[int, Query(ge=1, le=SCHEDULE_MAX)] = SCHEDULE_LIMIT,
    ):
        link_of(name)
        a = ns_of(since) if since is not None else None
        b = ns_of(until) if until is not None else None
        with reading:
            return _schedule(name, a, b, limit)

    def _schedule(name: str, a: int | None, b: int | None, limit: int) -> Response:
        chosen, total, steps, now = ledger.window(name, clock(), a, b, limit)
        head = json.dumps({
            "link": name, "rate": ledger.rate[name], "margin": ledger.margin,
            "capacity": ledger.capacity(name), "now": s_of(now),
            "from": s_of(a if a is not None else now), "to": s_of(b) if b is not None else None,
            "total": total, "truncated": total > len(chosen),
            "usage": [[s_of(t), v] for t, v in steps],
        })  # fmt: skip
        body = head[:-1] + ', "requests": [' + ",".join(map(fragments.of, chosen)) + "]}"
        return Response(body, media_type="application/json")

    @app.put("/v1/links/{name}")
    def set_link(name: LinkName, body: LinkIn):
        link_of(name)
        broken = ledger.set_capacity(name, int(body.rate), clock())
        return {"link": name, "rate": int(body.rate), "broken": broken}

    @app.get("/v1/links")
    def links():
        return {
            "links": [{"name": k, "rate": v} for k, v in ledger.rate.items()],
            "broken_at_start": ledger.broken_at_start,
        }


def _page_routes(app: FastAPI, swagger) -> None:
    """The page and the API's documentation (Swagger UI when installed)."""

    @app.get("/", response_class=HTMLResponse)
    def page():
        return resources.files("itb.service").joinpath("page.html").read_text()

    @app.get("/docs", include_in_schema=False)
    def docs():
        if swagger is None:
            return HTMLResponse(_PLAIN_DOCS)
        return get_swagger_ui_html(
            openapi_url="/openapi.json", title="ITB transfer service — API",
            swagger_js_url="/static/swagger/swagger-ui-bundle.js",
            swagger_css_url="/static/swagger/swagger-ui.css",
            swagger_favicon_url="/static/swagger/favicon-32x32.png",
            swagger_ui_parameters={"validatorUrl": None},
        )  # fmt: skip


_PLAIN_DOCS = """<!doctype html><meta charset="utf-8"><title>ITB transfer service — API</title>
<p>The API is described by <a href="/openapi.json">/openapi.json</a> (Swagger UI is not
installed: pip install swagger-ui-bundle).</p>"""


def _swagger_dir() -> str | None:
    """Swagger UI's files from the swagger-ui-bundle package (no CDN), if installed."""
    try:
        from swagger_ui_bundle import swagger_ui_path
    except ImportError:
        return None
    return str(swagger_ui_path)


def _json(content) -> Response:
    return Response(json.dumps(content, allow_nan=False), media_type="application/json")


def _call(fn, rid: str, now: int) -> Record:
    try:
        return fn(rid, now)
    except NotFound:
        raise HTTPException(404, f"no request {rid!r}") from None
    except Conflict as e:
        raise HTTPException(409, str(e)) from None
