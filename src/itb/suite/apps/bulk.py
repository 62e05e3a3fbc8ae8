"""BU, the bulk application: simultaneous large unidirectional transfers (also the
bulk studies' cells: `bulk` with their start span and reverse timing)."""

from __future__ import annotations

from itb.errors import ScenarioError
from itb.suite.apps.parts import (
    MAX_PAIRS,
    SIM_MAX_PAIRS,
    Cell,
    Generated,
    bundles,
    describe,
    duration,
    experiment,
    fair_time_s,
    for_whole_run,
    rtt_mix,
    sources,
    testbed,
)
from itb.suite.scaling import ClassScale

MAX_START_SPAN = 0.25  # of one transfer's time at C_a: starts stay inside it


def bu(
    cell: Cell, cs: ClassScale, seed: int, spacing_s: float, streams_per_source: int = 1
) -> Generated:
    return bulk(
        cell,
        cs,
        spacing_s,
        max_start_span=MAX_START_SPAN,
        streams_per_source=streams_per_source,
        seed=seed,
    )


def bulk(
    cell: Cell,
    cs: ClassScale,
    spacing_s: float,
    *,
    max_start_span: float | None,
    reverse_after: bool = False,
    streams_per_source: int = 1,
    seed: int = 1,
) -> Generated:
    """BU: simultaneous large unidirectional transfers, forward at C_g, reverse at R.

    `max_start_span`: every forward source starts within this share of one transfer's
    time at C_a (the spacing shrinks to fit; None: exactly `spacing_s` apart).
    `reverse_after`: reverse sources start after the last forward one, with the same
    spacing (RR-6256 §4.3), instead of alongside them. `streams_per_source`: each forward
    source is that many parallel streams sharing its C_a (RR-6244's N_s). A class with an
    RTT mix (--rtt) spreads its modes over the host pairs, drawn with `seed`."""
    c = cell.cls
    n_rev = c.reverse_sources
    sim = cs.simulated
    fwd = bundles(c.forward_sources, streams_per_source, simulated=sim)
    rev = bundles(n_rev, simulated=sim)
    pairs = min(SIM_MAX_PAIRS if sim else MAX_PAIRS, max(len(fwd), len(rev), 1))
    modes = cs.rtt_modes_ms
    if modes and len(fwd) < len(modes):
        raise ScenarioError(
            None,
            "--rtt",
            f"class {c.name}: {len(modes)} RTT modes need a forward source on each; the class "
            f"has {len(fwd)} (K = {c.k})",
        )
    v = cs.bu_volume
    # Spaced starts must not dilute the congestion level: with many bundles or short
    # transfers the spacing shrinks so that every source is started within a share of
    # one transfer's time (the documents: 1 s between ~400 s transfers).
    if max_start_span is not None and len(fwd) > 1:
        spacing_s = min(spacing_s, max_start_span * cs.transfer_time_s / (len(fwd) - 1))
    span = spacing_s * (len(fwd) - 1)
    rev_at = span + spacing_s if reverse_after and fwd else 0.0
    dur = duration(fair_time_s(v, cs, c.c_g, c.forward_share), span, cs.rtt_ms)
    transfers = sources(
        "bu",
        fwd,
        pairs,
        False,
        cs,
        v,
        cell.cc,
        0,
        spacing_s,
        streams_per_source=streams_per_source,
        share=c.forward_share,
    )
    transfers += sources(
        "rev",
        rev,
        pairs,
        True,
        cs,
        for_whole_run(cs, dur),
        cell.cc,
        rev_at,
        spacing_s,
        wait=False,
        share=c.reverse_share,
    )
    bed = testbed(cell, cs, pairs, **(rtt_mix(cs, pairs, seed) if modes else {}))
    doc = bed | {"experiment": experiment(cell, dur), "transfer": transfers}
    when = (
        f"reverse transfers start after the forward ones ({rev_at:g} s), {spacing_s:g} s apart"
        if reverse_after
        else "reverse transfers start alongside the forward ones"
    )
    return Generated(
        doc,
        {
            "forward": describe(
                "forward", c.forward_sources, fwd, cs, pairs, streams_per_source, c.forward_share
            ),
            "streams_per_source": streams_per_source,
            "reverse": describe("reverse", n_rev, rev, cs, pairs, share=c.reverse_share),
            "volume_bytes_per_source": v,
            "spacing_s": spacing_s,
            "start_span_s": span,
            "notes": [
                (
                    "host pairs' RTTs: modes "
                    + ", ".join(f"{m:g} ms" for m in modes)
                    + " in equal proportions, one per pair (drawn with the seed); the "
                    "bottleneck's queue follows the modes' mean"
                )
                if modes
                else "every pair has one RTT (the modes of a multi-site BU collapse to it: "
                "--rtt gives several)",
                when,
                "reverse transfers are stopped once the forward ones are done",
            ],
        },
    )
