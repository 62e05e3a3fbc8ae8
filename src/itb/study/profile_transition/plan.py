"""The plan of `itb study profile transition`: one cell per (mechanism, RTT), a one-pair
dumbbell at C whose timeline runs one transfer per height, one after another, each a
connection of its own that follows the low rate, then its height."""

from __future__ import annotations

import math
from pathlib import Path

from itb.errors import ScenarioError
from itb.scenario.experiment import profile as profiles
from itb.scenario.units import format_rate
from itb.study.profile_transition.args import TransitionArgs
from itb.study.profile_transition.cells import TransitionCell
from itb.study.pursuit import Mechanism, secs, testbed_doc
from itb.sweep.index import SweepIndex
from itb.sweep.sweep import Sweep, SweepCell

TAIL_SHARE = 0.1  # a transfer's volume over what its profile allows by the step's end


def profile_of(a: TransitionArgs, height: int) -> tuple[tuple[tuple[int, int], ...], int]:
    """One step's transfer: its profile (µs, bit/s) and volume. The volume is what the
    profile allows by the end of the high step plus TAIL_SHARE, so a sender that runs
    ahead of its profile (UDT) still sends through the whole step, and one that keeps it
    ends a little after."""
    if not a.low_bps < height <= a.capacity_bps:
        raise ScenarioError(
            None,
            "--heights",
            f"{format_rate(height)} is not between the low rate {format_rate(a.low_bps)} and C",
        )
    steps = ((0, a.low_bps), (round(a.low_hold_s * 1e6), height))
    end_us = round((a.low_hold_s + a.hold_s) * 1e6)
    return steps, math.floor(profiles.bits_by(steps, end_us) * (1 + TAIL_SHARE) / 8)


def cell_doc(a: TransitionArgs, mech: Mechanism, rtt_ms: float) -> dict:
    name = f"transition-{mech.name}-rtt{rtt_ms:g}"
    transfers, at = [], 0.0
    for k, h in enumerate(a.heights_bps):
        steps, volume = profile_of(a, h)
        transfers.append(
            {
                "id": f"h{k + 1}",
                "src": "l1",
                "dst": "r1",
                "at": secs(at),
                "volume": f"{volume}B",
                **mech.transfer_fields(),
                "profile": [[t / 1e6, format_rate(r)] for t, r in steps],
            }
        )
        at += 1.5 * profiles.time_to_send_us(steps, volume) / 1e6 + 1 + 5 * rtt_ms / 1000
    return {
        **testbed_doc(
            name,
            f"low → high steps, {mech.name}, RTT {rtt_ms:g} ms",
            1,
            a.capacity_bps,
            rtt_ms,
            a.open_window,
            a.buffer,
        ),
        "experiment": {
            "name": name,
            "repetitions": a.repeat,
            "seed": a.seed,
            "duration": secs(math.ceil(at + 10)),
            "interval": "100ms",
        },
        "transfer": transfers,
    }


def sweep_of(a: TransitionArgs, out: Path) -> Sweep[TransitionCell]:
    if not a.mechanisms or not a.rtts_ms or not a.heights_bps:
        raise ScenarioError(
            None,
            "--mechanisms" if not a.mechanisms else "--rtt" if not a.rtts_ms else "--heights",
            "give at least one",
        )
    cells = [
        SweepCell(
            TransitionCell(
                name=f"{m.name}-rtt{rtt:g}ms", mechanism=m.name, protocol=m.protocol, rtt_ms=rtt
            ),
            cell_doc(a, m, rtt),
        )
        for m in a.mechanisms
        for rtt in a.rtts_ms
    ]
    return Sweep(
        out, "profile-transition", SweepIndex[TransitionCell], a.key(), cells, a.repeat, a.seed
    )
