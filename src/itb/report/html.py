"""Self-contained HTML reports: figures saved as PNG and SVG next to the report and
embedded in it as data URIs, so the one file reads offline, mailed or archived."""

from __future__ import annotations

import base64
import math
from pathlib import Path

import jinja2

_env = jinja2.Environment(loader=jinja2.PackageLoader("itb.report", "templates"),
                          autoescape=jinja2.select_autoescape(["html", "j2"]),
                          undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def num(x, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:.{digits}f}"


def pm(x, half, digits: int = 2) -> str:
    """x ± half (half missing: x alone)."""
    return num(x, digits) if half is None or x is None else f"{num(x, digits)} ± {num(half, digits)}"


def pval(p) -> str:
    """A p-value: 4 decimals, or 2 significant digits below 0.001 (never "0.0000")."""
    if p is None:
        return "–"
    return f"{p:.2g}" if p < 0.001 else f"{p:.4f}"


def mbit(bps) -> str:
    return "–" if bps is None else f"{bps / 1e6:g} Mbit/s"


_env.filters.update(num=num, mbit=mbit, pval=pval)
_env.globals.update(pm=pm)


def data_uri(png: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(png.read_bytes()).decode()


def figure(png: Path, caption: str) -> dict:
    return {"src": data_uri(png), "caption": caption, "png": png.name,
            "svg": png.with_suffix(".svg").name}


def render(template: str, path: Path, **context) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_env.get_template(template).render(**context))
    return path
