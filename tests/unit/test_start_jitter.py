"""`start_jitter`: each repetition starts every transfer, ping-pong and UDP stream a
seeded draw later (so repetitions of a deterministic testbed, a simulator, differ), the
same draw for the same repetition; link changes keep their dates; the scenario's hash is
unchanged without it; a jitter past the timeline's end is refused."""

from __future__ import annotations

import pytest

from itb.errors import ScenarioError
from itb.scenario import load_testbed
from itb.scenario.experiment.background import events_for_repetition
from itb.scenario.scenario import timeline_on

TOPO = load_testbed(None)


def exp(jitter=None, duration="60s"):
    e = {"duration": duration}
    if jitter:
        e["start_jitter"] = jitter
    return timeline_on(
        TOPO,
        {
            "experiment": e,
            "transfer": [{"id": "t", "src": "l1", "dst": "r1", "at": "1s", "volume": "1MB"}],
            "set": [{"id": "s", "at": "2s", "link": "rl-rr", "rate": "500Mbit"}],
        },
        "t",
    ).experiment


def test_each_repetition_draws_its_own_start_within_the_jitter_and_again_the_same():
    e = exp("10ms")
    starts = [next(x.at_us for x in events_for_repetition(e, r) if x.id == "t") for r in (1, 2, 3)]
    assert all(1_000_000 <= t <= 1_010_000 for t in starts) and len(set(starts)) == 3
    again = next(x.at_us for x in events_for_repetition(e, 2) if x.id == "t")
    assert again == starts[1]
    assert next(x.at_us for x in events_for_repetition(e, 1) if x.id == "s") == 2_000_000


def test_without_a_jitter_nothing_moves_and_the_hash_is_the_old_one():
    e = exp()
    assert [x.at_us for x in events_for_repetition(e, 1)] == [1_000_000, 2_000_000]
    assert "start_jitter" not in e.canonical_json()


def test_a_jitter_that_reaches_the_timelines_end_is_refused():
    with pytest.raises(ScenarioError, match="start_jitter"):
        exp("59s")
