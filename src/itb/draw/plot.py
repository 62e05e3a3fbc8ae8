"""matplotlib for files only (no display on test machines and servers), and a figure
saved as PNG (embedded in a report) and SVG (for papers)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["plt", "save_figure"]


def save_figure(fig, path: Path) -> Path:
    """PNG (embedded in the report) and SVG (for papers) of the same figure."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    fig.savefig(path.with_suffix(".svg"))
    plt.close(fig)
    return path
