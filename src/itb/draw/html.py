"""Self-contained HTML reports: figures saved as PNG and SVG next to the report and
embedded in it as data URIs, so the one file reads offline, mailed or archived.

The shared templates (base, macros, calibration, the run's and the benchmark's) are
package data of `itb.draw` (templates/); a study's own template is package data of its
subpackage, next to its report module, and extends the shared ones."""

from __future__ import annotations

import base64
import functools
import math
from pathlib import Path

import jinja2

SHARED = jinja2.PackageLoader("itb.draw", "templates")


def num(x, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:.{digits}f}"


def pm(x, half, digits: int = 2) -> str:
    """x ± half (half missing: x alone)."""
    return (
        num(x, digits) if half is None or x is None else f"{num(x, digits)} ± {num(half, digits)}"
    )


def pval(p) -> str:
    """A p-value: 4 decimals, or 2 significant digits below 0.001 (never "0.0000")."""
    if p is None:
        return "–"
    return f"{p:.2g}" if p < 0.001 else f"{p:.4f}"


def mbit(bps) -> str:
    return "–" if bps is None else f"{bps / 1e6:g} Mbit/s"


@functools.cache
def _env(package: str | None) -> jinja2.Environment:
    """Templates of `package` (a study's subpackage) first, then the shared ones."""
    loader = (
        SHARED
        if package is None
        else jinja2.ChoiceLoader([jinja2.PackageLoader(package, "."), SHARED])
    )
    env = jinja2.Environment(
        loader=loader,
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(num=num, mbit=mbit, pval=pval)
    env.globals.update(pm=pm)
    return env


def data_uri(png: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(png.read_bytes()).decode()


def figure(png: Path, caption: str) -> dict:
    return {
        "src": data_uri(png),
        "caption": caption,
        "png": png.name,
        "svg": png.with_suffix(".svg").name,
    }


def render(template: str, path: Path, package: str | None = None, **context) -> Path:
    """`template` (of `package`, else a shared one) rendered to `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_env(package).get_template(template).render(**context))
    return path
