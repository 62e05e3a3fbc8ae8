"""WM and PP, the web applications: Poisson arrivals of files per source, of
exponential (WM) or Pareto (PP) sizes, over host pairs of drawn RTTs."""

from __future__ import annotations

import numpy as np

from itb.errors import ScenarioError
from itb.suite.apps.parts import (
    MAX_PAIRS,
    Cell,
    Generated,
    bundles,
    describe,
    duration,
    experiment,
    for_whole_run,
    on_protocol,
    queue_for,
    rate,
    secs,
    sources,
    testbed,
)
from itb.suite.scaling import ClassScale

MAX_WEB_TRANSFERS = 500  # WM / PP transfers per repetition the local engine runs well
WEB_FILES_PER_SOURCE = 5  # WM / PP: files each source draws over the window
WM_RATIO, PP_RATIO = 0.8, 0.5  # forward / reverse volume (RR-6244)
PP_PARETO_SHAPE = 1.5


def _web(
    cell: Cell, cs: ClassScale, seed: int, *, ratio: float, sizes: str, rtt_distribution: str
) -> Generated:
    """WM / PP: every source draws Poisson arrivals of files over a window, offering
    its nominal capacity C_a on average (so C_g is the offered forward load over C);
    reverse sources carry 1/ratio of the forward volume."""
    c = cell.cls
    window = cs.transfer_time_s
    mean = cs.access_bps * c.forward_share / 8 * window / WEB_FILES_PER_SOURCE
    n_rev_useful = round(c.forward_sources / ratio)
    expected = WEB_FILES_PER_SOURCE * (c.forward_sources + n_rev_useful)
    if expected > MAX_WEB_TRANSFERS:
        raise ScenarioError(
            None,
            "--class",
            f"{cell.app} class {c.name} needs about {expected} transfers per "
            f"repetition ({c.forward_sources} + {n_rev_useful} sources × "
            f"{WEB_FILES_PER_SOURCE} files); the local engine runs up to "
            f"{MAX_WEB_TRANSFERS}: run {cell.app} on the data-centre classes "
            "(B, D, F, H, J, L)",
        )
    rng = np.random.default_rng([seed, ord(cell.app[0]), ord(c.name)])
    pairs = min(MAX_PAIRS, max(1, c.forward_sources))
    transfers = []

    def draw(ident: str, n_sources: int, reverse: bool, direction: str | None) -> None:
        for s in range(n_sources):
            t = 0.0
            for k in range(WEB_FILES_PER_SOURCE * 4):
                t += rng.exponential(window / WEB_FILES_PER_SOURCE)
                if t >= window:
                    break
                if sizes == "exponential":
                    v = rng.exponential(mean)
                else:  # Pareto with this mean: x_m = mean (α − 1) / α
                    v = (
                        mean
                        * (PP_PARETO_SHAPE - 1)
                        / PP_PARETO_SHAPE
                        * (1 + rng.pareto(PP_PARETO_SHAPE))
                    )
                p = s % pairs + 1
                src, dst = (f"r{p}", f"l{p}") if reverse else (f"l{p}", f"r{p}")
                tr = {
                    "id": f"{ident}{s + 1}.{k + 1}",
                    "src": src,
                    "dst": dst,
                    "at": secs(t),
                    "volume": f"{max(1, int(v))}B",
                    "rate": rate(cs.access_bps),
                }
                on_protocol(tr, cell.cc)
                if direction:
                    tr["direction"] = direction
                transfers.append(tr)

    draw("f", c.forward_sources, False, None)
    draw("u", n_rev_useful, True, None)
    adverse = bundles(c.reverse_sources)
    dur = duration(window * max(1.0, c.c_g), 0, cs.rtt_ms)
    transfers += sources(
        "rev",
        adverse,
        pairs,
        True,
        cs,
        for_whole_run(cs, dur),
        cell.cc,
        0,
        0.0,
        wait=False,
        share=c.reverse_share,
    )
    # Per-pair RTTs drawn around the class RTT; the bottleneck itself adds 1 ms.
    base_ms = 1.0
    rtt = {"distribution": rtt_distribution, "mean": secs(cs.rtt_ms / 1000), "seed": seed}
    # the queue a BDP multiple of the class RTT (the bottleneck's own is 1 ms), at least
    # 100 kB; a size given with --buffer as it is
    queue = queue_for(cs, cs.rtt_ms, 100_000)
    doc = testbed(cell, cs, pairs, rtt_ms=base_ms, buffer=queue, extra={"pair_rtt": rtt})
    doc |= {"experiment": experiment(cell, dur), "transfer": transfers}
    return Generated(
        doc,
        {
            "forward": f"{c.forward_sources} sources, each with Poisson arrivals of {sizes} file "
            f"sizes (mean {int(mean)} B) over {window:g} s, offering C_a = "
            f"{rate(cs.access_bps)}/s on average; each transfer paced at C_a",
            "reverse": f"{n_rev_useful} useful reverse sources (forward/reverse volume {ratio}); "
            + describe(
                "adverse reverse", c.reverse_sources, adverse, cs, pairs, share=c.reverse_share
            ),
            "rtt": f"per-pair RTT {rtt_distribution} with mean {cs.rtt_ms:g} ms (where the "
            "host pairs lie is drawn with the seed)",
            "notes": [
                "TCP sends full segments: the documents' packet-size distributions are "
                "not reproduced",
                "completion times of forward files are measured",
            ],
        },
    )


def wm(cell: Cell, cs: ClassScale, seed: int, spacing_s: float) -> Generated:
    return _web(cell, cs, seed, ratio=WM_RATIO, sizes="exponential", rtt_distribution="exponential")


def pp(cell: Cell, cs: ClassScale, seed: int, spacing_s: float) -> Generated:
    return _web(cell, cs, seed, ratio=PP_RATIO, sizes="pareto", rtt_distribution="poisson")
