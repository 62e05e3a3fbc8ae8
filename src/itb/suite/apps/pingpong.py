"""PA, the ping-pong application: MPI-like 1 MB messages there and back between two
sites, under the class's load, and the aggregation that keeps its sources fast enough
for them."""

from __future__ import annotations

import math
from dataclasses import replace

from itb.errors import ScenarioError
from itb.suite import windows
from itb.suite.apps.parts import (
    MAX_PAIRS,
    Cell,
    Generated,
    bundles,
    describe,
    duration,
    experiment,
    fair_time_s,
    for_whole_run,
    rate,
    secs,
    sources,
    testbed,
)
from itb.suite.classes import DATA_CENTRE_K, ItbClass
from itb.suite.scaling import ClassScale

PA_MESSAGES, PA_MESSAGE_BYTES = 200, 1_000_000  # the documents' MPI ping-pong
# RR-6244 §4.5.4: PA's forward/reverse traffic ratio is 0.5, so each 1 MB message is
# answered with 2 MB
PA_REPLY_FACTOR = 2
# PA: the slowest source that still carries the documents' 1 MB messages (0.4 s each);
# below it the class is realised with fewer, faster sources (pa_aggregation).
PA_MIN_SOURCE_BPS = 20_000_000
PA_MAX_ESTIMATE_S = 3600  # PA: the longest ping-pong (pessimistic estimate) generated
INITIAL_WINDOW_BYTES = 10 * 1448  # Linux's IW10 of full segments
SETTLE_S = 2.0  # PA: adverse traffic runs this long before the ping-pong starts


def _round_trip_s(size: int, cs: ClassScale, c: ItbClass) -> float:
    """One PA message there and its reply (PA_REPLY_FACTOR × as large) back,
    pessimistically: after each idle pause TCP restarts from its initial window
    (slow-start rounds of one RTT each), and a loaded direction's full queue adds up to
    one more RTT to every round."""

    def one_way(nbytes: int, load: float) -> float:
        rounds = max(1, math.ceil(math.log2(1 + nbytes / INITIAL_WINDOW_BYTES)))
        return rounds * (2.0 if load >= 1.0 else 1.0) * cs.rtt_ms / 1000 + fair_time_s(
            nbytes, cs, load
        )

    return one_way(size, c.c_g) + one_way(
        PA_REPLY_FACTOR * size, c.r
    )  # there at C_g, back against R


def pa_aggregation(c: ItbClass, cs: ClassScale) -> int:
    """K' for PA: the class's K, or, where its C_a is under PA_MIN_SOURCE_BPS (a 1 MB
    message would take 40 s at the 200 kbit/s of a K = 1000 class), the largest multiple
    of 10 (at least 10) whose sources C / K' reach it. C, C_g and R stay the class's."""
    if cs.access_bps >= PA_MIN_SOURCE_BPS:
        return c.k
    tens = int(cs.capacity_bps // (PA_MIN_SOURCE_BPS * DATA_CENTRE_K))
    return min(c.k, DATA_CENTRE_K * max(1, tens))


def pa(
    cell: Cell, cs: ClassScale, seed: int, spacing_s: float, messages: int = PA_MESSAGES
) -> Generated:
    """PA: `messages` (the documents': 200) × 1 MB MPI-like ping-pong between two sites,
    under the class's load. The messages keep the documents' size (their slow start is
    what PA exposes); a class whose sources are too slow for them runs with fewer, faster
    ones (pa_aggregation)."""
    c0, size = cell.cls, PA_MESSAGE_BYTES
    k = pa_aggregation(c0, cs)
    c = replace(c0, k=k)
    if k != c0.k:
        cs = replace(cs, access_bps=cs.capacity_bps / k)
    load, rev = bundles(max(0, c.forward_sources - 1)), bundles(c.reverse_sources)
    pairs = min(MAX_PAIRS, max(len(load), len(rev)) + 1)
    ramp = min(spacing_s, 5.0 / max(1, len(load)))  # adverse flows: up within 5 s
    start = (ramp * max(0, len(load) - 1) + SETTLE_S) if load or rev else 0.0
    est = messages * _round_trip_s(size, cs, c)
    if est > PA_MAX_ESTIMATE_S:
        raise ScenarioError(
            None,
            "--app",
            f"PA class {c.name}: {messages} round trips of "
            f"{size} B at {cs.rtt_ms:g} ms RTT and {rate(cs.access_bps)}/s "
            f"could take {est:.0f} s (slow start after every pause), over the "
            f"{PA_MAX_ESTIMATE_S} s ITB allows a repetition"
            + (
                "; window scaling stretched the RTT: run PA with --scaling rate"
                if cs.mode == "window"
                else ""
            ),
        )
    dur = duration(est, start, cs.rtt_ms)
    adverse = for_whole_run(cs, dur)
    transfers = []
    if load:  # on pairs 2.., the ping-pong owns pair 1
        transfers += sources(
            "load",
            load,
            pairs - 1,
            False,
            cs,
            adverse,
            cell.cc,
            0,
            ramp,
            wait=False,
            direction="background",
            first_pair=2,
            share=c.forward_share,
        )
    if rev:
        transfers += sources(
            "rev",
            rev,
            pairs - 1,
            True,
            cs,
            adverse,
            cell.cc,
            0,
            ramp,
            wait=False,
            first_pair=2,
            share=c.reverse_share,
        )
    doc = testbed(cell, cs, pairs) | {"experiment": experiment(cell, dur)}
    doc["pingpong"] = [
        {
            "id": "pa",
            "src": "l1",
            "dst": "r1",
            "at": secs(start),
            "count": messages,
            "size": f"{size}B",
            "reply_size": f"{PA_REPLY_FACTOR * size}B",
            "cc": cell.cc,
            "rate": rate(cs.access_bps),
        }
    ]
    if transfers:
        doc["transfer"] = transfers
    notes = [
        "the ping-pong's completion time is the measured one; the adverse "
        "traffic is stopped once it is done",
        f"each message answered with {PA_REPLY_FACTOR * size} B: the documents' forward/reverse "
        "ratio of 0.5",
        f"messages of the documents' {size} B, not scaled",
    ]
    if k != c0.k:
        notes.append(
            f"K = {c0.k} sources of C_a = {rate(cs.capacity_bps / c0.k)}/s "
            f"would take {size * 8 * c0.k / cs.capacity_bps:.3g} s per message: the "
            f"class runs with K' = {k} sources of C / K' = {rate(cs.access_bps)}/s "
            f"each, keeping C, C_g and R ({c.forward_sources} forward sources, "
            f"ping-pong included, and {c.reverse_sources} reverse); its aggregation "
            "level is not the class's"
        )
    return Generated(
        doc,
        {
            "forward": f"one ping-pong source ({messages} × {size} B there, "
            f"{PA_REPLY_FACTOR * size} B back, paced at C_a = "
            f"{rate(cs.access_bps)}/s) on pair 1; "
            + describe(
                "adverse forward", c.forward_sources - 1, load, cs, pairs - 1, share=c.forward_share
            ),
            "reverse": describe(
                "reverse", c.reverse_sources, rev, cs, pairs - 1, share=c.reverse_share
            ),
            "message_bytes": size,
            "pingpong_start_s": start,
            "sources_k": k,
            "estimated_s": est,
            "notes": notes,
        },
        window=windows.of_source(c, cs),
    )
