"""What the reports of the studies share: their figures drawn into <out>/report/ (those
with nothing to draw left out), the testbed's calibration that went with the study, and
the page rendered from the study's own template (report.html.j2 of its subpackage)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from itb import rundir
from itb.draw.html import figure, render

# A figure of a report: (draw it at this path → the PNG, or None: nothing to draw), its
# file name, its caption
Made = tuple[Callable[[Path], Path | None], str, str]


def figures(out: Path, made: Iterable[Made]) -> list[dict]:
    """The drawn figures, embedded (`html.figure`), in the order given."""
    figs = []
    for make, name, caption in made:
        f = make(out / "report" / name)
        if f:
            figs.append(figure(f, caption))
    return figs


def calibration(out: Path) -> dict | None:
    """The testbed's calibration copied into the study's directory, if there was one."""
    path = out / "calibration.json"
    return rundir.read_json(path) if path.exists() else None


def study_report(package: str, out: Path, **context) -> Path:
    """<out>/report/report.html from `package`'s report.html.j2 (with the calibration)."""
    return render(
        "report.html.j2",
        out / "report" / "report.html",
        package=package,
        calibration=calibration(out),
        **context,
    )
