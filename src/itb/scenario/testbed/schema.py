"""The testbed file as the user writes it (TOML), validated field by field.

Each unit-bearing field is parsed here into exact numbers (units.py), so every error
carries the field path. Rules spanning fields (rtt XOR delays, buffer vs MTU, host
names, which sections fit which topology) belong to topologies.py, which knows the
whole file. validate_file turns pydantic's errors into ScenarioError.
"""

from __future__ import annotations

import re
import types
import typing
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    model_validator,
)
from pydantic_core import ErrorDetails

from itb.errors import ScenarioError
from itb.scenario.testbed.model import Loss
from itb.scenario.units import (
    BufferSpec,
    UnitError,
    parse_buffer,
    parse_duration,
    parse_loss,
    parse_rate,
)

TOPOLOGIES = ("dumbbell", "chain", "star")
FAMILIES = ("ipv4", "ipv6")
MTUS = (1500, 9000)
MAX_RTT_US = 10_000_000  # 10 s: longer round trips are no WAN we emulate
# 1 s per direction and link: measured exact at 1 Gbit/s (RTT 2.000 s, TCP and UDP at the
# rate: docs/scenario.md); beyond 1.5 s the neighbour resolution across the link (3 probes
# 1 s apart) would not complete
MAX_ONE_WAY_US = 1_000_000
MAX_PAIRS = 100
MAX_ROUTERS = 64

# Node names become namespace names (with a prefix) and interface names "h-<name>",
# "to-<name>" (≤ 15 characters), hence the 10-character limit.
NODE_NAME = re.compile(r"[a-z][a-z0-9-]{0,9}")
TESTBED_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def _rate(v: object) -> int | None:
    return parse_rate(v)  # the link capacity range applies to every rate in the file


def _rtt(v: object) -> int:
    us = parse_duration(v)
    if us > MAX_RTT_US:
        raise UnitError(f"RTT {v!r} exceeds the maximum of 10 s")
    return us


def _one_way(v: object) -> int:
    us = parse_duration(v)
    if us > MAX_ONE_WAY_US:
        raise UnitError(f"one-way delay {v!r} exceeds the maximum of 1 s")
    return us


def _node_name(v: object) -> str:
    if not isinstance(v, str) or not NODE_NAME.fullmatch(v):
        raise UnitError(
            f"{v!r} is not a valid node name: 1 to 10 characters of a-z, 0-9 and '-', starting with a letter"
        )
    return v


def choice(allowed: tuple, what: str):
    def check(v: object):
        if isinstance(v, bool) or v not in allowed:
            raise UnitError(
                f"unsupported {what} {v!r}; allowed: {', '.join(str(a) for a in allowed)}"
            )
        return v

    return check


def strict_int(lo: int, hi: int | None = None):
    def check(v: object) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise UnitError(f"expected a whole number, got {v!r}")
        if v < lo or (hi is not None and v > hi):
            raise UnitError(
                f"must be between {lo} and {hi} (got {v})"
                if hi is not None
                else f"must be at least {lo} (got {v})"
            )
        return v

    return BeforeValidator(check)


def _families(v: object) -> tuple[str, ...]:
    if not isinstance(v, (list, tuple)):
        raise UnitError(f'expected a list such as ["ipv4", "ipv6"], got {v!r}')
    if not v:
        raise UnitError("at least one address family is needed: ipv4, ipv6 or both")
    for f in v:
        choice(FAMILIES, "address family")(f)
    if len(set(v)) != len(v):
        raise UnitError(f"address family listed twice in {list(v)!r}")
    return tuple(
        f for f in FAMILIES if f in v
    )  # canonical order: the hash ignores how it was written


def _loss(v: object) -> Loss:
    if isinstance(v, Loss):
        return v
    if isinstance(v, dict):
        return LossTable.model_validate(
            v
        ).resolve()  # its ValidationError is unwrapped by first_error
    p = parse_loss(v)
    return Loss(model="bernoulli", p=p) if p > 0 else Loss()


Rate = Annotated[int | None, BeforeValidator(_rate)]
Rtt = Annotated[int, BeforeValidator(_rtt)]
OneWay = Annotated[int, BeforeValidator(_one_way)]
Probability = Annotated[float, BeforeValidator(parse_loss)]
LossField = Annotated[Loss, BeforeValidator(_loss)]
Buffer = Annotated[BufferSpec, BeforeValidator(parse_buffer)]
NodeName = Annotated[str, BeforeValidator(_node_name)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LossTable(_Section):
    """loss = {model = "gilbert-elliott", p = 0.01, r = 0.3, loss_bad = 1.0, loss_good = 0.0}"""

    model: Annotated[
        str, BeforeValidator(choice(("none", "bernoulli", "gilbert-elliott"), "loss model"))
    ]
    p: Probability | None = None
    r: Probability | None = None
    loss_bad: Probability | None = None
    loss_good: Probability | None = None

    @model_validator(mode="after")
    def _fields_fit_model(self) -> LossTable:
        given = {k for k in ("p", "r", "loss_bad", "loss_good") if getattr(self, k) is not None}
        needed = {"none": set(), "bernoulli": {"p"}, "gilbert-elliott": {"p", "r"}}[self.model]
        allowed = needed | ({"loss_bad", "loss_good"} if self.model == "gilbert-elliott" else set())
        if missing := needed - given:
            raise UnitError(f"loss model {self.model!r} needs {', '.join(sorted(missing))}")
        if extra := given - allowed:
            raise UnitError(f"loss model {self.model!r} takes no {', '.join(sorted(extra))}")
        return self

    def resolve(self) -> Loss:
        if self.model == "none" or (self.model == "bernoulli" and self.p == 0):
            return Loss()
        if self.model == "bernoulli":
            return Loss(model="bernoulli", p=self.p)
        return Loss(
            model="gilbert_elliott",
            p=self.p,
            r=self.r,
            loss_bad=1.0 if self.loss_bad is None else self.loss_bad,
            loss_good=0.0 if self.loss_good is None else self.loss_good,
        )


class LinkSpec(_Section):
    """One emulated link: [bottleneck], each [[chain.link]], each [[star.spoke]].

    Unset *_reverse fields follow the forward ones; rtt defaults to 20 ms when neither
    rtt nor delay_forward/delay_reverse is given (see topologies.resolve_link).
    """

    rate: Rate = 1_000_000_000
    rate_reverse: Rate = None  # only read when set (model_fields_set): None means unlimited
    rtt: Rtt | None = None
    delay_forward: OneWay | None = None
    delay_reverse: OneWay | None = None
    loss: LossField = Loss()
    loss_reverse: LossField | None = None
    buffer: Buffer = BufferSpec("bdp", 1)
    buffer_reverse: Buffer | None = None


def _testbed_name(v: object) -> str:
    if not isinstance(v, str) or not TESTBED_NAME.fullmatch(v):
        raise UnitError(
            f"{v!r} is not a valid testbed name: up to 64 letters, digits, '.', '_' or '-'"
        )
    return v


class TestbedSection(_Section):
    name: Annotated[str, BeforeValidator(_testbed_name)] = "default"
    description: str = ""  # free text for people; not part of the resolved topology
    topology: Annotated[str, BeforeValidator(choice(TOPOLOGIES, "topology"))] = "dumbbell"
    families: Annotated[tuple[str, ...], BeforeValidator(_families)] = FAMILIES
    mtu: Annotated[int, BeforeValidator(choice(MTUS, "MTU"))] = 1500
    # every TCP segment travels and is acknowledged on its own (hosts: TSO/GSO off, routes
    # with Linux's quickack metric)
    ack_every_segment: StrictBool = False
    # receivers advertise a window as large as their socket buffers from the first ACK
    # (tcp_rmem's default and the routes' initrwnd), as RR-6874's patched receiver did
    open_receive_window: StrictBool = False


class DumbbellSection(_Section):
    pairs: Annotated[int, strict_int(1, MAX_PAIRS)] = 2
    access_rate: Rate = None  # only read when set; default: unlimited


class PairRttSpec(_Section):
    distribution: Annotated[
        str,
        BeforeValidator(choice(("fixed", "multimodal", "exponential", "poisson"), "distribution")),
    ]
    values: list[Rtt] | None = None  # fixed: one total RTT per pair
    modes: list[Rtt] | None = None  # multimodal
    weights: list[float] | None = None  # multimodal, optional
    mean: Rtt | None = None  # exponential, poisson
    seed: Annotated[int, strict_int(0, 2**63 - 1)] = 1  # 64-bit seeds


class ChainHost(_Section):
    name: NodeName
    router: Annotated[int, strict_int(0)]
    access_rate: Rate = None  # only read when set


class ChainSection(_Section):
    routers: Annotated[int, strict_int(2, MAX_ROUTERS)] | None = None
    access_rate: Rate = None  # only read when set
    link: list[LinkSpec] = Field(default_factory=list)
    host: list[ChainHost] = Field(default_factory=list)


class StarSpoke(LinkSpec):
    name: NodeName | None = None  # the leaf router; default s1, s2, ...
    side: Annotated[str, BeforeValidator(choice(("left", "right"), "side"))] | None = None
    hosts: list[NodeName]
    access_rate: Rate = None  # only read when set


class StarSection(_Section):
    access_rate: Rate = None  # only read when set
    spoke: list[StarSpoke] = Field(default_factory=list)


class TestbedFile(_Section):
    """The whole file. Sections for another topology than testbed.topology are errors."""

    testbed: TestbedSection = TestbedSection()
    dumbbell: DumbbellSection | None = None
    bottleneck: LinkSpec | None = None
    pair_rtt: PairRttSpec | None = None
    chain: ChainSection | None = None
    star: StarSection | None = None


# --- error translation ---------------------------------------------------------------


def field_path(loc: tuple) -> str:
    """("chain", "link", 2, "rate") → "chain.link[2].rate"."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(file)"


def _model_at(loc: tuple, root: type[BaseModel]) -> type[BaseModel] | None:
    """The schema class found at `loc`, to list the allowed fields for an unknown one."""
    cls: Any = root
    for part in loc:
        if isinstance(part, int):
            continue
        if (
            not (isinstance(cls, type) and issubclass(cls, BaseModel))
            or part not in cls.model_fields
        ):
            return None
        cls = _inner_model(cls.model_fields[part].annotation)
    return cls if isinstance(cls, type) and issubclass(cls, BaseModel) else None


def _inner_model(tp: Any) -> Any:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp
    if typing.get_origin(tp) in (list, tuple, typing.Union, types.UnionType, Annotated):
        for arg in typing.get_args(tp):
            if (found := _inner_model(arg)) is not None:
                return found
    return None


def first_error(
    err: ErrorDetails, loc: tuple[int | str, ...] = (), root: type[BaseModel] | None = None
) -> tuple[tuple[int | str, ...], str]:
    """(location, reason) of one pydantic error, descending into nested validations."""
    root = root or TestbedFile
    loc = loc + tuple(err["loc"])
    kind, value = err["type"], err.get("input")
    cause = (err.get("ctx") or {}).get("error")
    if isinstance(cause, ValidationError):
        return first_error(cause.errors()[0], loc, root)
    if cause is not None:
        return loc, str(cause)
    if kind == "extra_forbidden":
        model = _model_at(loc[:-1], root)
        allowed = f"; allowed here: {', '.join(model.model_fields)}" if model else ""
        return loc, f"unknown field {loc[-1]!r}{allowed}"
    if kind == "missing":
        return loc, "required field is missing"
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return loc, f"expected a table, got {value!r}"
    if kind in ("list_type", "tuple_type"):
        return loc, f"expected a list, got {value!r}"
    msg = err["msg"]
    return loc, f"{msg[:1].lower()}{msg[1:]} (got {value!r})"


def validate_file(data: dict, source: str | None) -> TestbedFile:
    if not isinstance(data, dict):
        raise ScenarioError(
            source, "(file)", f"expected a table of sections, got {type(data).__name__}"
        )
    try:
        return TestbedFile.model_validate(data)
    except ValidationError as e:
        loc, reason = first_error(e.errors()[0])
        raise ScenarioError(source, field_path(loc), reason) from None


__all__ = [
    "MAX_ONE_WAY_US",
    "MAX_RTT_US",
    "ChainHost",
    "ChainSection",
    "DumbbellSection",
    "LinkSpec",
    "LossTable",
    "PairRttSpec",
    "StarSection",
    "StarSpoke",
    "TestbedFile",
    "TestbedSection",
    "field_path",
    "first_error",
    "validate_file",
]
