"""The five ITB applications (docs/benchmark.md) as generators of engine scenarios: from a
class, its scale on this testbed, a congestion control and a seed, each returns a
scenario document (the TOML `itb run` reads) and a description of how it realised
the class's sources.

Sources. A class has M = C_g·K forward sources and R·K reverse sources, each of
nominal capacity C_a. ITB realises every source as one TCP stream paced at C_a
(SO_MAX_PACING_RATE) rather than as one host behind a C_a access link: a K = 1000
class needs 800–2000 sources, far more than namespaces one machine can hold. Up to
MAX_SINGLE sources per direction each get their own transfer (their own completion
time); beyond that they are bundled into transfers of up to 64 streams ("virtual
sources"), a bundle completing when its last stream does. Transfers are spread over
at most MAX_PAIRS host pairs of a dumbbell whose bottleneck is the class's scaled C.

Adverse traffic (the class's reverse sources, PA's forward load) runs with
`wait = false`: it is stopped once the measured transfers are done.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from itb.errors import ScenarioError
from itb.scenario.units import format_duration, format_rate
from itb.suite import windows
from itb.suite.classes import DATA_CENTRE_K, ItbClass
from itb.suite.scaling import ClassScale

APPS = ("TU", "WM", "PP", "BU", "PA")
MAX_SINGLE = 32  # sources per direction that get a transfer each
MAX_STREAMS = 64  # streams in one bundle (the timeline's limit)
MAX_PAIRS = 8  # host pairs of the generated dumbbell
MAX_WEB_TRANSFERS = 500  # WM / PP transfers per repetition the local engine runs well
PA_MESSAGES, PA_MESSAGE_BYTES = 200, 1_000_000  # the documents' MPI ping-pong
# PA: the slowest source that still carries the documents' 1 MB messages (0.4 s each);
# below it the class is realised with fewer, faster sources (pa_aggregation).
PA_MIN_SOURCE_BPS = 20_000_000
PA_MAX_ESTIMATE_S = 3600  # PA: the longest ping-pong (pessimistic estimate) generated
WEB_FILES_PER_SOURCE = 5  # WM / PP: files each source draws over the window
WM_RATIO, PP_RATIO = 0.8, 0.5  # forward / reverse volume (RR-6244)
PP_PARETO_SHAPE = 1.5
UNTUNED_RMEM, UNTUNED_WMEM = "4096 131072 6291456", "4096 16384 4194304"  # Linux defaults
INITIAL_WINDOW_BYTES = 10 * 1448  # Linux's IW10 of full segments
SETTLE_S = 2.0  # PA: adverse traffic runs this long before the ping-pong starts
MAX_START_SPAN = 0.25  # of one transfer's time at C_a: starts stay inside it


@dataclass(frozen=True)
class Cell:
    """One point of a benchmark: application (and variant) × class × protocol."""

    app: str
    cls: ItbClass
    cc: str
    variant: str | None = None  # TU: "default" or "tuned" host buffers

    @property
    def name(self) -> str:
        v = f"-{self.variant}" if self.variant else ""
        return f"{self.app}{v}-{self.cls.name}-{self.cc}"


@dataclass
class Generated:
    doc: dict  # the scenario file's tables
    realisation: dict = field(default_factory=dict)
    window: windows.FlowWindow | None = None  # a source's window (None: one of C_a at C_g)


def variants(app: str) -> list[str | None]:
    return ["default", "tuned"] if app == "TU" else [None]


def check_app(app: str) -> str:
    if app not in APPS:
        raise ScenarioError(
            None, "--app", f"unknown application {app!r}; applications are {', '.join(APPS)}"
        )
    return app


def generate(
    cell: Cell,
    cs: ClassScale,
    seed: int,
    spacing_s: float,
    repetitions: int = 1,
    pa_messages: int = PA_MESSAGES,
) -> Generated:
    if check_app(cell.app) == "PA":
        g = _pa(cell, cs, seed, spacing_s, pa_messages)
    else:
        g = {"TU": _tu, "WM": _wm, "PP": _pp, "BU": _bu}[cell.app](cell, cs, seed, spacing_s)
    g.doc["experiment"].update(repetitions=repetitions, seed=seed)
    window = g.window or windows.of_source(cell.cls, cs)
    g.realisation.update(
        scale=cs.to_json(),
        cls=_class_json(cell.cls),
        app=cell.app,
        variant=cell.variant,
        cc=cell.cc,
        window=window.to_json(),
    )
    if cs.mode == "window":
        g.realisation.setdefault("notes", []).append(
            f"window scaling: the class RTT {cell.cls.rtt_ms:g} ms × {cs.factor:g} = "
            f"{cs.rtt_ms:g} ms on every path, so a source's window C_a · RTT is the documents' "
            "while every time counted in round trips lasts the factor longer"
        )
    return g


def _class_json(c: ItbClass) -> dict:
    return {
        "name": c.name,
        "k": c.k,
        "rtt_ms": c.rtt_ms,
        "c_g": c.c_g,
        "r": c.r,
        "meaning": c.meaning,
        "forward_sources": c.forward_sources,
        "reverse_sources": c.reverse_sources,
    }


# ---- building blocks -------------------------------------------------------------


def bundles(n_sources: int) -> list[int]:
    """Streams per transfer: one each up to MAX_SINGLE sources, else as even bundles of
    at most MAX_STREAMS."""
    if n_sources <= MAX_SINGLE:
        return [1] * n_sources
    n = max(MAX_SINGLE // 2, math.ceil(n_sources / MAX_STREAMS))
    base, extra = divmod(n_sources, n)
    return [base + (i < extra) for i in range(n)]


def _rate(bps: float) -> str:
    return format_rate(max(1, int(round(bps))))


def _secs(s: float) -> str:
    return format_duration(int(round(s * 1e6)))


def _testbed(
    cell: Cell,
    cs: ClassScale,
    pairs: int,
    *,
    rtt_ms: float | None = None,
    buffer: str = "1bdp",
    extra: dict | None = None,
) -> dict:
    doc = {
        "testbed": {
            "name": f"itb-{cell.name}".replace("_", "-")[:64],
            "topology": "dumbbell",
            "description": f"ITB {cell.app} class {cell.cls.name} ({cell.cls.meaning}), "
            f"scaled by {cs.factor:g} ({cs.mode} scaling)",
        },
        "dumbbell": {"pairs": pairs},
        "bottleneck": {
            "rate": _rate(cs.capacity_bps),
            "rtt": _secs((cs.rtt_ms if rtt_ms is None else rtt_ms) / 1000),
            "buffer": buffer,
        },
    }
    doc.update(extra or {})
    return doc


def _experiment(cell: Cell, duration_s: float) -> dict:
    return {
        "name": f"itb-{cell.name}",
        "duration": _secs(math.ceil(duration_s)),
        "interval": "100ms",
    }


def _sources(
    ident: str,
    sizes: list[int],
    pairs: int,
    reverse: bool,
    cs: ClassScale,
    per_source_bytes: int,
    cc: str,
    at_s: float,
    spacing_s: float,
    *,
    wait: bool = True,
    direction: str | None = None,
    first_pair: int = 1,
) -> list[dict]:
    """One [[transfer]] per bundle, round-robin over `pairs` host pairs from `first_pair`,
    `spacing_s` apart."""
    out = []
    for k, streams in enumerate(sizes):
        p = k % pairs + first_pair
        src, dst = (f"r{p}", f"l{p}") if reverse else (f"l{p}", f"r{p}")
        t = {
            "id": f"{ident}.{k + 1}",
            "src": src,
            "dst": dst,
            "at": _secs(at_s + k * spacing_s),
            "volume": f"{per_source_bytes * streams}B",
            "cc": cc,
            "streams": streams,
            "rate": _rate(cs.access_bps * streams),
        }
        if not wait:
            t["wait"] = False
        if direction:
            t["direction"] = direction
        out.append(t)
    return out


def _describe(what: str, n: int, sizes: list[int], cs: ClassScale, pairs: int) -> str:
    if not n:
        return f"no {what} sources"
    lo, hi = min(sizes), max(sizes)
    how = (
        f"{len(sizes)} transfers of one stream"
        if hi == 1
        else f"{len(sizes)} transfers (virtual sources) of {lo if lo == hi else f'{lo}–{hi}'} streams"
    )
    return (
        f"{n} {what} sources as {how}, each stream paced at C_a = "
        f"{_rate(cs.access_bps)}/s, over {min(pairs, len(sizes))} host pairs"
    )


def _for_whole_run(cs: ClassScale, duration_s: float) -> int:
    """Bytes of an adverse source: more than it can send at C_a before the run ends."""
    return int(cs.access_bps / 8 * duration_s)


def _fair_time_s(volume: int, cs: ClassScale, c_g: float) -> float:
    """A source's completion time in the fluid model: its share is min(C_a, C/M)."""
    return volume * 8 / (cs.access_bps / max(1.0, c_g))


def _duration(measured_s: float, start_span_s: float, rtt_ms: float) -> float:
    """Generous: three times the fluid estimate, so only a hung run reaches the end."""
    return max(60.0, 3 * (start_span_s + measured_s) + 40 * rtt_ms / 1000 + 30)


def _round_trip_s(size: int, cs: ClassScale, c: ItbClass) -> float:
    """One PA message there and back, pessimistically: after each idle pause TCP
    restarts from its initial window (slow-start rounds of one RTT each), and a
    loaded direction's full queue adds up to one more RTT to every round."""
    rounds = max(1, math.ceil(math.log2(1 + size / INITIAL_WINDOW_BYTES)))
    return sum(
        rounds * (2.0 if load >= 1.0 else 1.0) * cs.rtt_ms / 1000 + _fair_time_s(size, cs, load)
        for load in (c.c_g, c.r)
    )  # there at C_g, back against R


# ---- applications ----------------------------------------------------------------


def _bu(cell: Cell, cs: ClassScale, seed: int, spacing_s: float) -> Generated:
    return bulk(cell, cs, spacing_s, max_start_span=MAX_START_SPAN)


def bulk(
    cell: Cell,
    cs: ClassScale,
    spacing_s: float,
    *,
    max_start_span: float | None,
    reverse_after: bool = False,
) -> Generated:
    """BU: simultaneous large unidirectional transfers, forward at C_g, reverse at R.

    `max_start_span`: every forward source starts within this share of one transfer's
    time at C_a (the spacing shrinks to fit; None: exactly `spacing_s` apart).
    `reverse_after`: reverse sources start after the last forward one, with the same
    spacing (RR-6256 §4.3), instead of alongside them."""
    c = cell.cls
    n_rev = c.reverse_sources
    fwd, rev = bundles(c.forward_sources), bundles(n_rev)
    pairs = min(MAX_PAIRS, max(len(fwd), len(rev), 1))
    v = cs.bu_volume
    # Spaced starts must not dilute the congestion level: with many bundles or short
    # transfers the spacing shrinks so that every source is started within a share of
    # one transfer's time (the documents: 1 s between ~400 s transfers).
    if max_start_span is not None and len(fwd) > 1:
        spacing_s = min(spacing_s, max_start_span * cs.transfer_time_s / (len(fwd) - 1))
    span = spacing_s * (len(fwd) - 1)
    rev_at = span + spacing_s if reverse_after and fwd else 0.0
    dur = _duration(_fair_time_s(v, cs, c.c_g), span, cs.rtt_ms)
    transfers = _sources("bu", fwd, pairs, False, cs, v, cell.cc, 0, spacing_s)
    transfers += _sources(
        "rev", rev, pairs, True, cs, _for_whole_run(cs, dur), cell.cc, rev_at, spacing_s, wait=False
    )
    doc = _testbed(cell, cs, pairs) | {"experiment": _experiment(cell, dur), "transfer": transfers}
    when = (
        f"reverse transfers start after the forward ones ({rev_at:g} s), {spacing_s:g} s apart"
        if reverse_after
        else "reverse transfers start alongside the forward ones"
    )
    return Generated(
        doc,
        {
            "forward": _describe("forward", c.forward_sources, fwd, cs, pairs),
            "reverse": _describe("reverse", n_rev, rev, cs, pairs),
            "volume_bytes_per_source": v,
            "spacing_s": spacing_s,
            "start_span_s": span,
            "notes": [
                "every pair has one RTT (the modes of a multi-site BU collapse to it)",
                when,
                "reverse transfers are stopped once the forward ones are done",
            ],
        },
    )


def pa_aggregation(c: ItbClass, cs: ClassScale) -> int:
    """K' for PA: the class's K, or, where its C_a is under PA_MIN_SOURCE_BPS (a 1 MB
    message would take 40 s at the 200 kbit/s of a K = 1000 class), the largest multiple
    of 10 (at least 10) whose sources C / K' reach it. C, C_g and R stay the class's."""
    if cs.access_bps >= PA_MIN_SOURCE_BPS:
        return c.k
    tens = int(cs.capacity_bps // (PA_MIN_SOURCE_BPS * DATA_CENTRE_K))
    return min(c.k, DATA_CENTRE_K * max(1, tens))


def _pa(
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
            f"{size} B at {cs.rtt_ms:g} ms RTT and {_rate(cs.access_bps)}/s "
            f"could take {est:.0f} s (slow start after every pause), over the "
            f"{PA_MAX_ESTIMATE_S} s ITB allows a repetition"
            + (
                "; window scaling stretched the RTT: run PA with --scaling rate"
                if cs.mode == "window"
                else ""
            ),
        )
    dur = _duration(est, start, cs.rtt_ms)
    adverse = _for_whole_run(cs, dur)
    transfers = []
    if load:  # on pairs 2.., the ping-pong owns pair 1
        transfers += _sources(
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
        )
    if rev:
        transfers += _sources(
            "rev", rev, pairs - 1, True, cs, adverse, cell.cc, 0, ramp, wait=False, first_pair=2
        )
    doc = _testbed(cell, cs, pairs) | {"experiment": _experiment(cell, dur)}
    doc["pingpong"] = [
        {
            "id": "pa",
            "src": "l1",
            "dst": "r1",
            "at": _secs(start),
            "count": messages,
            "size": f"{size}B",
            "cc": cell.cc,
            "rate": _rate(cs.access_bps),
        }
    ]
    if transfers:
        doc["transfer"] = transfers
    notes = [
        "the ping-pong's completion time is the measured one; the adverse "
        "traffic is stopped once it is done",
        "the echo of each message makes PA's own forward/reverse ratio 1, not the documents' 0.5",
        f"messages of the documents' {size} B, not scaled",
    ]
    if k != c0.k:
        notes.append(
            f"K = {c0.k} sources of C_a = {_rate(cs.capacity_bps / c0.k)}/s "
            f"would take {size * 8 * c0.k / cs.capacity_bps:.3g} s per message: the "
            f"class runs with K' = {k} sources of C / K' = {_rate(cs.access_bps)}/s "
            f"each, keeping C, C_g and R ({c.forward_sources} forward sources, "
            f"ping-pong included, and {c.reverse_sources} reverse); its aggregation "
            "level is not the class's"
        )
    return Generated(
        doc,
        {
            "forward": f"one ping-pong source ({messages} × {size} B, paced at C_a = "
            f"{_rate(cs.access_bps)}/s) on pair 1; "
            + _describe("adverse forward", c.forward_sources - 1, load, cs, pairs - 1),
            "reverse": _describe("reverse", c.reverse_sources, rev, cs, pairs - 1),
            "message_bytes": size,
            "pingpong_start_s": start,
            "sources_k": k,
            "estimated_s": est,
            "notes": notes,
        },
        window=windows.of_source(c, cs),
    )


def _tu(cell: Cell, cs: ClassScale, seed: int, spacing_s: float) -> Generated:
    """TU: one pair, one transfer at full speed, with the host's default socket buffers
    (Linux's tcp_rmem / tcp_wmem defaults) or tuned ones (≥ 2 BDP, ITB's testbed)."""
    c = cell.cls
    volume = int(cs.capacity_bps / 8 * cs.transfer_time_s)
    start = 1.0 if cell.variant == "default" else 0.0
    dur = _duration(cs.transfer_time_s * 4, start, cs.rtt_ms)  # untuned buffers are slow
    doc = _testbed(cell, cs, 1) | {"experiment": _experiment(cell, dur)}
    doc["transfer"] = [
        {
            "id": "tu",
            "src": "l1",
            "dst": "r1",
            "at": _secs(start),
            "volume": f"{volume}B",
            "cc": cell.cc,
        }
    ]
    if cell.variant == "default":
        doc["command"] = [
            {
                "id": f"untune-{h}",
                "host": h,
                "at": "0s",
                "argv": [
                    "sysctl",
                    "-q",
                    "-w",
                    f"net.ipv4.tcp_rmem={UNTUNED_RMEM}",
                    f"net.ipv4.tcp_wmem={UNTUNED_WMEM}",
                ],
            }
            for h in ("l1", "r1")
        ]
    return Generated(
        doc,
        {
            "forward": f"one transfer of {volume} B at full speed over C = "
            f"{_rate(cs.capacity_bps)}/s",
            "reverse": "none",
            "tuning": (
                "Linux default socket buffers (tcp_rmem "
                + UNTUNED_RMEM
                + ", tcp_wmem "
                + UNTUNED_WMEM
                + ")"
            )
            if cell.variant == "default"
            else "tuned socket buffers (tcp_rmem / tcp_wmem max ≥ 2 × BDP)",
            "notes": ["txqueuelen is not varied"],
        },
        window=windows.of_source(
            c,
            cs,
            testbed_rate_bps=cs.capacity_bps,
            documents_rate_bps=cs.capacity_bps * cs.factor,
            load=1.0,
        ),
    )


def _web(
    cell: Cell, cs: ClassScale, seed: int, *, ratio: float, sizes: str, rtt_distribution: str
) -> Generated:
    """WM / PP: every source draws Poisson arrivals of files over a window, offering
    its nominal capacity C_a on average (so C_g is the offered forward load over C);
    reverse sources carry 1/ratio of the forward volume."""
    c = cell.cls
    window = cs.transfer_time_s
    mean = cs.access_bps / 8 * window / WEB_FILES_PER_SOURCE
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
                    "at": _secs(t),
                    "volume": f"{max(1, int(v))}B",
                    "cc": cell.cc,
                    "rate": _rate(cs.access_bps),
                }
                if direction:
                    tr["direction"] = direction
                transfers.append(tr)

    draw("f", c.forward_sources, False, None)
    draw("u", n_rev_useful, True, None)
    adverse = bundles(c.reverse_sources)
    dur = _duration(window * max(1.0, c.c_g), 0, cs.rtt_ms)
    transfers += _sources(
        "rev", adverse, pairs, True, cs, _for_whole_run(cs, dur), cell.cc, 0, 0.0, wait=False
    )
    # Per-pair RTTs drawn around the class RTT; the bottleneck itself adds 1 ms.
    base_ms = 1.0
    rtt = {"distribution": rtt_distribution, "mean": _secs(cs.rtt_ms / 1000), "seed": seed}
    bdp = int(cs.capacity_bps / 8 * cs.rtt_ms / 1000)
    doc = _testbed(
        cell, cs, pairs, rtt_ms=base_ms, buffer=f"{max(bdp, 100_000)}B", extra={"pair_rtt": rtt}
    )
    doc |= {"experiment": _experiment(cell, dur), "transfer": transfers}
    return Generated(
        doc,
        {
            "forward": f"{c.forward_sources} sources, each with Poisson arrivals of {sizes} file "
            f"sizes (mean {int(mean)} B) over {window:g} s, offering C_a = "
            f"{_rate(cs.access_bps)}/s on average; each transfer paced at C_a",
            "reverse": f"{n_rev_useful} useful reverse sources (forward/reverse volume {ratio}); "
            + _describe("adverse reverse", c.reverse_sources, adverse, cs, pairs),
            "rtt": f"per-pair RTT {rtt_distribution} with mean {cs.rtt_ms:g} ms (where the "
            "host pairs lie is drawn with the seed)",
            "notes": [
                "TCP sends full segments: the documents' packet-size distributions are "
                "not reproduced",
                "completion times of forward files are measured",
            ],
        },
    )


def _wm(cell: Cell, cs: ClassScale, seed: int, spacing_s: float) -> Generated:
    return _web(cell, cs, seed, ratio=WM_RATIO, sizes="exponential", rtt_distribution="exponential")


def _pp(cell: Cell, cs: ClassScale, seed: int, spacing_s: float) -> Generated:
    return _web(cell, cs, seed, ratio=PP_RATIO, sizes="pareto", rtt_distribution="poisson")
