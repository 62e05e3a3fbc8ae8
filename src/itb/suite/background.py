"""RR-6244's background traffic B (Table 5: "type of background traffic (CBR, VBR) and
shape (Poisson, Pareto, Weibull, …)"), as `itb bench --background KIND:SHARE[:SHAPE]`:
adverse forward traffic of a mean rate SHARE × C on a host pair of its own, stopped
once the cell's measured traffic is done.

- `cbr`: UDP datagrams at a constant rate (constant bit rate), SHARE × C of payload;
- `poisson`: UDP datagrams with exponential gaps at that mean rate (variable bit rate);
- `exponential`, `pareto`, `weibull`: TCP flows (cubic, the hosts' default, whatever
  protocol the cell measures, so that every protocol meets the same background) with
  Poisson arrivals, one a second on average, of sizes drawn from that distribution with
  a mean of one second of the load (SHARE × C / 8 bytes), so the mean offered load is
  SHARE × C. Pareto's shape α defaults to 1.5, Weibull's k to 0.5.

The document names its two background levels "WM I" and "WM II" without defining them;
web-like background is `exponential:SHARE` (WM's file sizes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from itb.errors import ScenarioError
from itb.scenario.units import format_rate
from itb.suite.scaling import ClassScale

KINDS = ("none", "cbr", "poisson", "exponential", "pareto", "weibull")
UDP_KINDS = ("cbr", "poisson")
DEFAULT_SHAPE = {"pareto": 1.5, "weibull": 0.5}
FLOW_GAP_S = 1.0  # the mean gap between TCP background flows
BACKGROUND_CC = "cubic"
MAX_SHARE = 0.9  # of C: the measured traffic keeps at least a tenth of the link


@dataclass(frozen=True)
class Background:
    kind: str = "none"
    share: float = 0.0  # the mean offered load over C
    shape: float | None = None  # Pareto α, Weibull k

    @property
    def text(self) -> str:
        """As the option, the key and the table write it: "none", "cbr:20%", "pareto:20%:1.5"."""
        if self.kind == "none":
            return "none"
        base = f"{self.kind}:{100 * self.share:g}%"
        return base if self.shape is None else f"{base}:{self.shape:g}"

    def add_to(self, doc: dict, cs: ClassScale) -> str | None:
        """Put the background on a new host pair of the scenario `doc` (a dumbbell), over
        its whole timeline, and say what it is; None (and `doc` untouched) for none."""
        if self.kind == "none":
            return None
        duration = doc["experiment"]["duration"]  # the whole timeline
        pair = doc["dumbbell"]["pairs"] + 1
        doc["dumbbell"]["pairs"] = pair
        src, dst = f"l{pair}", f"r{pair}"
        load_bps = self.share * cs.capacity_bps
        if self.kind in UDP_KINDS:
            doc["udp"] = doc.get("udp", []) + [
                {
                    "id": "bg",
                    "src": src,
                    "dst": dst,
                    "rate": format_rate(max(1, int(load_bps))),
                    "duration": duration,
                    "arrivals": self.kind,
                    "wait": False,
                }
            ]
            how = "constant-rate" if self.kind == "cbr" else "Poisson-spaced"
            return (
                f"background B = {self.text}: {how} UDP datagrams of 1472 B at "
                f"{load_bps / 1e6:.4g} Mbit/s ({100 * self.share:g} % of C) on pair {pair} "
                f"({src} → {dst}), stopped once the measured traffic is done"
            )
        mean_bytes = max(1, int(load_bps / 8 * FLOW_GAP_S))
        sizes: dict = {"distribution": self.kind, "mean": f"{mean_bytes}B"}
        if self.shape is not None:
            sizes["shape"] = self.shape
        doc["tcp_background"] = doc.get("tcp_background", []) + [
            {
                "id": "bg",
                "src": [src],
                "dst": [dst],
                "duration": duration,
                "mean_gap": f"{FLOW_GAP_S:g}s",
                "sizes": sizes,
                "cc": BACKGROUND_CC,
                "wait": False,
            }
        ]
        shape = "" if self.shape is None else f", shape {self.shape:g}"
        return (
            f"background B = {self.text}: {BACKGROUND_CC} TCP flows on pair {pair} ({src} → "
            f"{dst}), Poisson arrivals {FLOW_GAP_S:g} s apart on average, {self.kind} sizes "
            f"of mean {mean_bytes} B{shape}: {load_bps / 1e6:.4g} Mbit/s offered on average "
            f"({100 * self.share:g} % of C), stopped once the measured traffic is done"
        )


def parse_background(text: str | None) -> Background:
    """--background: none, or KIND:SHARE[:SHAPE] with SHARE a percentage ("20%") or a
    fraction ("0.2") of C, above 0 and at most MAX_SHARE."""
    if text is None or text.strip().lower() in ("", "none", "0"):
        return Background()
    parts = [p.strip() for p in text.strip().lower().split(":")]
    kind = parts[0]
    form = "KIND:SHARE[:SHAPE], e.g. cbr:20%, poisson:0.2, pareto:20%:1.5"
    if kind not in KINDS:
        raise ScenarioError(
            None, "--background", f"unknown kind {kind!r}; kinds are {', '.join(KINDS)}"
        )
    if len(parts) < 2 or len(parts) > 3:
        raise ScenarioError(None, "--background", f"{text!r}: give {form}")
    share = _share(parts[1], text)
    shape = None
    if len(parts) == 3:
        if kind not in DEFAULT_SHAPE:
            raise ScenarioError(None, "--background", f"{kind} has no shape: give {kind}:SHARE")
        shape = _number(parts[2], text, "shape")
    elif kind in DEFAULT_SHAPE:
        shape = DEFAULT_SHAPE[kind]
    if kind == "pareto" and shape is not None and shape <= 1:
        raise ScenarioError(None, "--background", "a Pareto shape must exceed 1 (a finite mean)")
    if kind == "weibull" and shape is not None and shape <= 0:
        raise ScenarioError(None, "--background", "a Weibull shape must be positive")
    return Background(kind, share, shape)


def _number(part: str, text: str, what: str) -> float:
    try:
        v = float(part)
    except ValueError:
        v = math.nan
    if not math.isfinite(v):
        raise ScenarioError(None, "--background", f"{text!r}: {what} {part!r} is not a number")
    return v


def _share(part: str, text: str) -> float:
    pct = part.endswith("%")
    v = _number(part.removesuffix("%"), text, "share")
    v = v / 100 if pct else v
    if not 0 < v <= MAX_SHARE:
        raise ScenarioError(
            None,
            "--background",
            f"{text!r}: the share of C must lie above 0 and at most {100 * MAX_SHARE:g} %",
        )
    return v
