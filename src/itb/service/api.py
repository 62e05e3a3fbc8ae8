"""The service over HTTP (docs/service.md): a FastAPI application around a `Ledger`.

    POST   /v1/requests                 quote: 201 held or refused (200 when the id was seen)
    POST   /v1/requests/{id}/commit     held → committed
    DELETE /v1/requests/{id}            held or committed → cancelled
    GET    /v1/requests/{id}            the request's state, plan and predicted completion
    GET    /v1/links/{name}/schedule    every held and committed plan on the link
    PUT    /v1/links/{name}             a new capacity: re-plans, lists the broken promises
    GET    /                            the schedule page

An invalid request is answered 422 with the field and the reason (FastAPI's format:
`detail[k].loc` ends with the field's name) and changes nothing. A token, when the
service has one, is required as `Authorization: Bearer TOKEN` on every /v1 call.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable
from importlib import resources
from typing import Annotated

from fastapi import Depends, FastAPI, Header, HTTPException
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, Field, field_validator, model_validator

from itb.scenario.units import UnitError, parse_rate, parse_size
from itb.service.ledger import Conflict, Ledger, NotFound
from itb.service.model import Request
from itb.service.store import Record

RATE_HI = 10**12
ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
DATE_MAX = 4102444800.0  # 2100-01-01: a date beyond is a unit mistake (ms, µs)


class RequestIn(BaseModel):
    model_config = {"extra": "forbid"}

    id: str = Field(
        description="the client's id: a retry with the same id and body is answered the same"
    )
    link: str
    volume: int | str = Field(description='bytes, or with a unit: "3.5GB"')
    release: float = Field(ge=0, le=DATE_MAX, description="seconds since the Unix epoch")
    deadline: float = Field(ge=0, le=DATE_MAX, description="seconds since the Unix epoch")
    max_rate: float | str = Field(description='bit/s, or with a unit: "1Gbit"')

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not ID.fullmatch(v):
            raise ValueError("1 to 128 letters, digits or . _ : -, starting with a letter or digit")
        return v

    @field_validator("volume")
    @classmethod
    def _volume(cls, v: int | str) -> int:
        n = v if isinstance(v, int) else _unit(parse_size, v)
        if not 0 < n <= 10**15:
            raise ValueError("a volume of 1 byte to 1 PB")
        return n

    @field_validator("max_rate")
    @classmethod
    def _rate(cls, v: float | str) -> float:
        r = (
            float(v)
            if not isinstance(v, str)
            else float(_unit(lambda s: parse_rate(s, lo=1, hi=RATE_HI), v))
        )
        if not 0 < r <= RATE_HI:
            raise ValueError("a rate of more than 0 and at most 1 Tbit/s")
        return r

    @model_validator(mode="after")
    def _window(self) -> RequestIn:
        if self.deadline <= self.release:
            raise ValueError("deadline: must be after the release")
        return self


def _unit(parse: Callable, v: str) -> int:
    try:
        out = parse(v)
    except UnitError as e:
        raise ValueError(str(e)) from None
    if out is None:
        raise ValueError("must be finite")
    return out


class LinkIn(BaseModel):
    model_config = {"extra": "forbid"}
    rate: float | str

    @field_validator("rate")
    @classmethod
    def _rate(cls, v: float | str) -> float:
        return RequestIn._rate(v)


class RunOut(BaseModel):
    """What became of a committed request's transfer on the testbed (--execute)."""

    state: str  # launched | done | failed | interrupted | missed
    launched: float | None
    finish: float | None  # the last byte's arrival (seconds since the Unix epoch)
    late: float | None  # finish − deadline (negative: early)
    met: bool | None  # every byte by the deadline
    bytes: int | None
    reason: str | None


class RequestOut(BaseModel):
    id: str
    link: str
    state: str
    reason: str | None
    volume: int
    release: float
    deadline: float
    max_rate: float
    profile: list[tuple[float, float]]
    start: float | None
    finish: float | None
    expires: float | None
    predicted_completion: float | None
    run: RunOut | None = None


def _run(rec: Record) -> RunOut | None:
    run, dt = rec.run, rec.request.deadline_s
    if run is None:
        return None
    late = None if run.finish_s is None else run.finish_s - dt
    met = None if run.state == "launched" else run.state == "done" and (late or 0.0) <= 0
    return RunOut(
        state=run.state, launched=run.launched_s, finish=run.finish_s, late=late, met=met,
        bytes=run.bytes, reason=run.reason,
    )  # fmt: skip


def _out(rec: Record) -> RequestOut:
    r, p = rec.request, rec.plan
    return RequestOut(
        id=r.id, link=r.link, state=rec.state, reason=rec.reason, volume=r.volume_bytes,
        release=r.release_s, deadline=r.deadline_s, max_rate=r.max_rate_bps,
        profile=p.profile() if p else [], start=p.start if p else None,
        finish=p.finish if p else None, expires=rec.expires_s,
        predicted_completion=p.finish if p and rec.state in ("held", "committed") else None,
        run=_run(rec),
    )  # fmt: skip


def make_app(
    ledger: Ledger, token: str | None = None, clock: Callable[[], float] = time.time
) -> FastAPI:
    app = FastAPI(title="ITB transfer service", version="1")

    def auth(authorization: Annotated[str | None, Header()] = None) -> None:
        if token is not None and not (
            authorization and secrets.compare_digest(authorization, f"Bearer {token}")
        ):
            raise HTTPException(401, "a token is required: Authorization: Bearer TOKEN")

    guarded = [Depends(auth)]

    def link_of(name: str) -> str:
        if name not in ledger.rate:
            raise HTTPException(404, f"no link {name!r}; the links are {sorted(ledger.rate)}")
        return name

    @app.post("/v1/requests", status_code=201, dependencies=guarded, response_model=RequestOut)
    def quote(body: RequestIn):
        if body.link not in ledger.rate:
            raise HTTPException(
                422,
                [
                    {
                        "loc": ["body", "link"],
                        "msg": f"no link {body.link!r}; the links are {sorted(ledger.rate)}",
                        "type": "value_error",
                    }
                ],
            )
        req = Request(
            body.id, int(body.volume), body.release, body.deadline, float(body.max_rate), body.link
        )
        try:
            rec, new = ledger.quote(req, clock())
        except Conflict as e:
            raise HTTPException(409, str(e)) from None
        if not new:  # a retry: what the first one got
            return JSONResponse(_out(rec).model_dump(), status_code=200)
        return _out(rec)

    @app.post("/v1/requests/{rid}/commit", dependencies=guarded, response_model=RequestOut)
    def commit(rid: str):
        return _out(_call(ledger.commit, rid, clock()))

    @app.delete("/v1/requests/{rid}", dependencies=guarded, response_model=RequestOut)
    def cancel(rid: str):
        return _out(_call(ledger.cancel, rid, clock()))

    @app.get("/v1/requests/{rid}", dependencies=guarded, response_model=RequestOut)
    def get(rid: str):
        return _out(_call(ledger.get, rid, clock()))

    @app.get("/v1/links/{name}/schedule", dependencies=guarded)
    def schedule(name: str):
        link_of(name)
        recs, rate = ledger.promises(name, clock())
        return {
            "link": name, "rate": rate, "margin": ledger.margin,
            "capacity": rate * (1 - ledger.margin), "now": clock(),
            "requests": [_out(r).model_dump() for r in recs],
        }  # fmt: skip

    @app.put("/v1/links/{name}", dependencies=guarded)
    def set_link(name: str, body: LinkIn):
        link_of(name)
        broken = ledger.set_capacity(name, float(body.rate), clock())
        return {"link": name, "rate": float(body.rate), "broken": broken}

    @app.get("/v1/links", dependencies=guarded)
    def links():
        return {
            "links": [{"name": k, "rate": v} for k, v in ledger.rate.items()],
            "broken_at_start": ledger.broken_at_start,
        }

    @app.get("/", response_class=HTMLResponse)
    def page():
        return resources.files("itb.service").joinpath("page.html").read_text()

    return app


def _call(fn, rid: str, now: float) -> Record:
    try:
        return fn(rid, now)
    except NotFound:
        raise HTTPException(404, f"no request {rid!r}") from None
    except Conflict as e:
        raise HTTPException(409, str(e)) from None
