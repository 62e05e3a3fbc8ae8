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
        out = [_jittered(e, exp, repetition, k) for k, e in enumerate(out)]
    out.sort(key=lambda ev: (ev.at_us, ev.id))
    return out


def _jittered(e, exp: Experiment, repetition: int, k: int):
    """A transfer, ping-pong or UDP stream delayed by a draw in [0, start_jitter] (seeded
    by the experiment's seed, the repetition and the event's place; its deadline, counted
    from its start, moves with it); other events as they are."""
    import numpy as np

    if not isinstance(e, Transfer | Pingpong | Udp):
        return e
    rng = np.random.default_rng([exp.seed, repetition, k, 0x6A])  # (0x6A: this draw's own)
    return e.model_copy(update={"at_us": e.at_us + int(rng.integers(0, exp.start_jitter_us + 1))})


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
