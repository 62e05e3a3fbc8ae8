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


@dataclass
class PageCheck:
    figures: int | None  # images in the page; None if the self-check did not run
    broken: int | None
    console: list[str]  # console messages (errors and others)


def browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    raise PreflightError("no Chromium found (Debian: apt-get install chromium)")


def check_page(html: Path, screenshot: Path | None = None, timeout_s: float = 60) -> PageCheck:
    base = [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    res = subprocess.run(
        [*base, "--enable-logging=stderr", "--v=0", "--dump-dom", html.resolve().as_uri()],
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    body = re.search(r"<body([^>]*)>", res.stdout)
    attrs = dict(re.findall(r'data-(figures|broken)="(\d+)"', body.group(1))) if body else {}
    console = [m.group(1) for m in map(_CONSOLE.search, res.stderr.splitlines()) if m]
    if screenshot is not None:
        subprocess.run(
            [
                *base,
                "--window-size=1280,3000",
                f"--screenshot={screenshot.resolve()}",
                html.resolve().as_uri(),
            ],
            capture_output=True,
            timeout=timeout_s,
        )
    return PageCheck(
        int(attrs["figures"]) if "figures" in attrs else None,
        int(attrs["broken"]) if "broken" in attrs else None,
        console,
    )
