"""What the service's HTTP API reads and writes (docs/service.md, "API").

A request's fields are checked strictly: `true` is not a volume, NaN and Infinity are not
dates or rates, an id is 1–128 letters, digits or `. _ : -`, a link name 1–64 letters,
digits or `. _ -`. Dates are seconds since the Unix epoch (taken to the nanosecond),
volumes bytes, rates whole bit/s. An answer gives dates in seconds and the plan exactly:
`plan` is its segments [[from ns, to ns, bit/s], …].
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from itb.scenario.units import UnitError, parse_rate, parse_size
from itb.service.intplan import s_of
from itb.service.store import Record

RATE_HI = 10**12
ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
LINK = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
DATE_MAX = 4102444800.0  # 2100-01-01: a date beyond is a unit mistake (ms, µs)
TEXT_MAX = 64  # a volume or rate written with its unit


def link_name(v: str) -> str:
    if not LINK.fullmatch(v):
        raise ValueError(
            "a link's name: 1 to 64 letters, digits or . _ -, starting with a letter or digit"
        )
    return v


def request_id(v: str) -> str:
    if not ID.fullmatch(v):
        raise ValueError("1 to 128 letters, digits or . _ : -, starting with a letter or digit")
    return v


def _unit(parse: Callable, v: str) -> int:
    if len(v) > TEXT_MAX:
        raise ValueError(f"at most {TEXT_MAX} characters")
    try:
        out = parse(v)
    except UnitError as e:
        raise ValueError(str(e)) from None
    if out is None:
        raise ValueError("must be finite")
    return out


def rate_bps(v: float | str) -> int:
    """A rate as whole bit/s (rounded down), 1 bit/s to 1 Tbit/s."""
    r = v if not isinstance(v, str) else _unit(lambda s: parse_rate(s, lo=1, hi=RATE_HI), v)
    if not (math.isfinite(r) and 1 <= r <= RATE_HI):
        raise ValueError("a rate of 1 bit/s to 1 Tbit/s")
    return math.floor(r)


def _not_bool(v):
    if isinstance(v, bool):
        raise ValueError("a number (or a text with a unit), not true or false")
    return v


class RequestIn(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    id: str = Field(
        description="the client's id: a retry with the same id and body is answered the same"
    )
    link: str
    volume: int | str = Field(description='bytes, or with a unit: "3.5GB"')
    release: float = Field(ge=0, le=DATE_MAX, description="seconds since the Unix epoch")
    deadline: float = Field(ge=0, le=DATE_MAX, description="seconds since the Unix epoch")
    max_rate: float | str = Field(description='bit/s, or with a unit: "1Gbit"')

    @field_validator("volume", "release", "deadline", "max_rate", mode="before")
    @classmethod
    def _numbers(cls, v):
        return _not_bool(v)

    @field_validator("id", mode="before")
    @classmethod
    def _id(cls, v):
        return request_id(v) if isinstance(v, str) else v

    @field_validator("link", mode="before")
    @classmethod
    def _link(cls, v):
        return link_name(v) if isinstance(v, str) else v

    @field_validator("volume")
    @classmethod
    def _volume(cls, v: int | str) -> int:
        n = v if isinstance(v, int) else _unit(parse_size, v)
        if not 0 < n <= 10**15:
            raise ValueError("a volume of 1 byte to 1 PB")
        return n

    @field_validator("max_rate")
    @classmethod
    def _rate(cls, v: float | str) -> int:
        return rate_bps(v)

    @model_validator(mode="after")
    def _window(self) -> RequestIn:
        if self.deadline <= self.release:
            raise ValueError("deadline: must be after the release")
        return self


class LinkIn(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    rate: float | str

    @field_validator("rate", mode="before")
    @classmethod
    def _rate(cls, v):
        return rate_bps(_not_bool(v))


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
    max_rate: int
    profile: list[tuple[float, float]]
    plan: list[tuple[int, int, int]]
    start: float | None
    finish: float | None
    expires: float | None
    created: float
    predicted_completion: float | None
    run: RunOut | None = None


def run_out(rec: Record) -> dict | None:
    run, dt = rec.run, s_of(rec.request.deadline_ns)
    if run is None:
        return None
    late = None if run.finish_s is None else run.finish_s - dt
    met = None if run.state == "launched" else run.state == "done" and (late or 0.0) <= 0
    return {
        "state": run.state, "launched": run.launched_s, "finish": run.finish_s, "late": late,
        "met": met, "bytes": run.bytes, "reason": run.reason,
    }  # fmt: skip


def out(rec: Record) -> dict:
    """A record as the API answers it (RequestOut's fields)."""
    r, p = rec.request, rec.plan
    return {
        "id": r.id, "link": r.link, "state": rec.state, "reason": rec.reason,
        "volume": r.volume_bytes, "release": s_of(r.release_ns),
        "deadline": s_of(r.deadline_ns), "max_rate": r.max_rate_bps,
        "profile": p.profile() if p else [], "plan": [list(s) for s in p.segments] if p else [],
        "start": s_of(p.start_ns) if p else None, "finish": s_of(p.finish_ns) if p else None,
        "expires": s_of(rec.expires_ns) if rec.expires_ns is not None else None,
        "created": s_of(rec.created_ns),
        "predicted_completion": s_of(p.finish_ns) if p and rec.state in ("held", "committed") else None,
        "run": run_out(rec),
    }  # fmt: skip


def trimmed(errors: list[dict]) -> list[dict]:
    """A 422's details without the input echoed whole: its first 64 characters at most."""
    outs = []
    for e in errors:
        d = {k: e[k] for k in ("type", "loc", "msg") if k in e}
        d["msg"] = str(d.get("msg", ""))[:300]
        if "input" in e:
            text = e["input"] if isinstance(e["input"], str) else repr(e["input"])
            d["input"] = text if len(text) <= 64 else text[:64] + f"… ({len(text)} characters)"
        outs.append(d)
    return outs
