"""The concrete events of one repetition: a `[[tcp_background]]` event becomes its flows,
drawn from their seeded distributions (arrivals, sizes); with a `start_jitter`, every
transfer, ping-pong and UDP stream starts a seeded draw later; every other event is as
resolved (itb.scenario.experiment.timeline)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from itb.scenario.experiment.events import Experiment, Pingpong, TcpBackground, Transfer, Udp

if TYPE_CHECKING:
    import numpy as np


def events_for_repetition(exp: Experiment, repetition: int) -> list:
    """The concrete events of one repetition: background flows drawn from their
    distributions with a seed of (experiment seed, repetition, event index), so each
    repetition differs but a rerun of the same repetition is identical."""
    import numpy as np

    out: list = []
    for index, e in enumerate(exp.events):
        if not isinstance(e, TcpBackground):
            out.append(e)
            continue
        rng = np.random.default_rng([exp.seed, repetition, index])
        t, k = e.at_us, 0
        while True:
            t += int(rng.exponential(e.mean_gap_us))
            if t >= e.at_us + e.duration_us:
                break
            src, dst = e.src[k % len(e.src)], e.dst[k % len(e.dst)]
            k += 1
            if src == dst:
                continue
            out.append(
                Transfer(
                    id=f"{e.id}.{k}",
                    at_us=t,
                    src=src,
                    dst=dst,
                    volume=max(1, int(draw_size(rng, e))),
                    cc=e.cc,
                    streams=1,
                    rate_bps=None,
                    direction="background",
                    wait=e.wait,
                )
            )
    if exp.start_jitter_us:
        out = started_later(out, exp.seed, repetition, exp.start_jitter_us)
    out.sort(key=lambda ev: (ev.at_us, ev.id))
    return out


SCENARIO_DRAW = 0x6A  # the scenario's start_jitter
SIMULATOR_DRAW = 0x53  # a simulator's own (itb.backends.sim.testbed)


def started_later(
    events: list, seed: int, repetition: int, jitter_us: int, draw: int = SCENARIO_DRAW
) -> list:
    """Every transfer, ping-pong and UDP stream delayed by a draw in [0, jitter_us]
    (seeded by the seed, the repetition, the event's place and `draw`, which keeps two
    jitters' draws apart; its deadline, counted from its start, moves with it); other
    events as they are."""
    import numpy as np

    out = []
    for k, e in enumerate(events):
        if isinstance(e, Transfer | Pingpong | Udp):
            rng = np.random.default_rng([seed, repetition, k, draw])
            e = e.model_copy(update={"at_us": e.at_us + int(rng.integers(0, jitter_us + 1))})
        out.append(e)
    return out


def draw_size(rng: np.random.Generator, e: TcpBackground) -> float:
    """One flow size in bytes with mean e.mean_bytes."""
    import math

    if e.distribution == "fixed":
        return e.mean_bytes
    if e.distribution == "exponential":
        return rng.exponential(e.mean_bytes)
    shape = e.shape
    assert shape is not None  # resolve() requires one for pareto and weibull
    if e.distribution == "pareto":  # Lomax + 1 is Pareto with x_m = 1; scale to the mean
        xm = e.mean_bytes * (shape - 1) / shape
        return xm * (1 + rng.pareto(shape))
    scale = e.mean_bytes / math.gamma(1 + 1 / shape)  # weibull
    return scale * rng.weibull(shape)
