"""Open a report in headless Chromium, as a reader would, and say what went wrong:
console errors and figures that did not load (the report's own load-time check)."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from itb.errors import PreflightError

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
_CONSOLE = re.compile(r":CONSOLE[^\]]*\]\s*(.*)")
WINDOW = (1280, 800)


@dataclass
class PageCheck:
    figures: int | None  # images in the page; None if the self-check did not run
    broken: int | None
    console: list[str]  # console messages (errors and others)
    # at 1280 × 800: where a benchmark's verdict matrix ends (px from the top; None: no
    # matrix), and the page's and the window's widths
    verdicts_bottom: int | None = None
    page_width: int | None = None
    window_width: int | None = None

    def first_screen(self, height: int = WINDOW[1]) -> bool:
        """The verdict matrix is whole on the first screen."""
        return self.verdicts_bottom is not None and self.verdicts_bottom <= height


def browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    raise PreflightError("no Chromium found (Debian: apt-get install chromium)")


def check_page(html: Path, screenshot: Path | None = None, timeout_s: float = 60) -> PageCheck:
    base = [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    res = subprocess.run(
        [
            *base,
            f"--window-size={WINDOW[0]},{WINDOW[1]}",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            html.resolve().as_uri(),
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    body = re.search(r"<body([^>]*)>", res.stdout)
    attrs = dict(re.findall(r'data-([a-z-]+)="(\d+)"', body.group(1))) if body else {}
    console = [m.group(1) for m in map(_CONSOLE.search, res.stderr.splitlines()) if m]
    if screenshot is not None:
        subprocess.run(
            [
                *base,
                f"--window-size={WINDOW[0]},{WINDOW[1]}",
                f"--screenshot={screenshot.resolve()}",
                html.resolve().as_uri(),
            ],
            capture_output=True,
            timeout=timeout_s,
        )

    def num(name: str) -> int | None:
        return int(attrs[name]) if name in attrs else None

    return PageCheck(
        num("figures"), num("broken"), console,
        num("verdicts-bottom"), num("page-width"), num("window-width"),
    )  # fmt: skip
