"""Verdicts: measured vs configured, with a tolerance, in words a person reads."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class Check:
    quantity: str
    configured: float | None
    measured: float | None
    unit: str
    tolerance_pct: float | None  # None: informative only
    detail: str = ""
    ok: bool | None = None  # None: informative; else the verdict
    error_pct: float | None = None
    cause: str | None = None  # why it is off, when known (e.g. "short of CPU")

    @property
    def verdict(self) -> str:
        if self.ok is None:
            return "info"
        if self.ok:
            return "ok"
        if self.cause:
            off = "" if self.error_pct is None else f" ({self.error_pct:+.2f} %)"
            return self.cause + off
        if self.error_pct is not None:
            return f"off by {self.error_pct:+.2f} %"
        return "failed"

    def to_json(self) -> dict:
        d = asdict(self)
        d["verdict"] = self.verdict
        return d


def relative(
    quantity: str,
    configured: float,
    measured: float,
    unit: str,
    tolerance_pct: float,
    detail: str = "",
) -> Check:
    """ok when |measured − configured| ≤ tolerance (percent of configured)."""
    err = 100.0 * (measured - configured) / configured if configured else 0.0
    return Check(
        quantity,
        configured,
        measured,
        unit,
        tolerance_pct,
        detail,
        ok=abs(err) <= tolerance_pct,
        error_pct=err,
    )


def at_least(
    quantity: str,
    configured: float,
    measured: float,
    unit: str,
    min_share_pct: float,
    detail: str = "",
) -> Check:
    """ok when measured ≥ min_share_pct % of configured."""
    err = 100.0 * (measured - configured) / configured
    return Check(
        quantity,
        configured,
        measured,
        unit,
        100.0 - min_share_pct,
        detail,
        ok=measured >= configured * min_share_pct / 100.0,
        error_pct=err,
    )


def at_most(quantity: str, bound: float, measured: float, unit: str, detail: str = "") -> Check:
    err = 100.0 * (measured - bound) / bound if bound else None
    return Check(quantity, bound, measured, unit, 0.0, detail, ok=measured <= bound, error_pct=err)
