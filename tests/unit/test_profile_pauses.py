"""Profiles that pause (a rate of 0 between steps that send) and pacing with headroom:
what the transfer service's plans need (docs/service.md), from the scenario to flow's
arguments, and the plans written as profiles."""

from __future__ import annotations

import pytest

from itb.engine import processes
from itb.scenario.experiment import profile as profiles
from itb.scenario.experiment.background import events_for_repetition
from itb.scenario.units import UnitError
from itb.service.model import Plan, Request
from itb.service.scenario import planned_transfer, profile_steps
from tests.unit.test_profile import refused, scenario


def test_a_pause_sends_nothing_and_the_completion_time_counts_it():
    # 80 Mbit/s for 1 s (10 MB), 2 s of pause, then 8 Mbit/s (1 MB/s): 12 MB at 5 s
    steps = profiles.parse_steps([[0, "80Mbit"], [1, 0], [3, "8Mbit"]])
    assert steps == ((0, 80_000_000), (1_000_000, 0), (3_000_000, 8_000_000))
    assert profiles.time_to_send_us(steps, 12_000_000) == pytest.approx(5_000_000)
    assert profiles.bits_by(steps, 2_500_000) == 10_000_000 * 8
    assert profiles.parse_steps([[0, "1Mbit"], [1, "0bit"], [2, "1Mbit"]])[1] == (1_000_000, 0)


@pytest.mark.parametrize(
    "steps, words",
    [
        ([[0, 0], [1, "1Mbit"]], "step 0: a rate of 0 is a pause"),
        ([[0, "1Mbit"], [1, "0"]], "step 1: a rate of 0 is a pause"),
    ],
)
def test_a_profile_neither_starts_nor_ends_with_a_pause(steps, words):
    with pytest.raises(UnitError) as e:
        profiles.parse_steps(steps)
    assert words in str(e.value)


TRANSFER = '[[transfer]]\nid = "p"\nsrc = "l1"\ndst = "r1"\nvolume = "1MB"\ncc = "nocc"\n'


def test_pace_headroom_and_pauses_reach_flow(tmp_path, monkeypatch):
    sc = scenario(
        tmp_path,
        TRANSFER + 'profile = [[0, "100Mbit"], [1, 0], [2, "50Mbit"]]\npace_headroom = 0.025\n',
    )
    monkeypatch.setenv("ITB_FLOW", "/usr/local/bin/flow")
    plan = processes.build(
        events_for_repetition(sc.experiment, 1), sc.topology, tmp_path / "rep", 100_000
    )
    send = next(list(p.argv) for p in plan.procs if p.id == "p.send")
    assert send[send.index("--profile") + 1] == "0:100000000,1000000:0,2000000:50000000"
    assert send[send.index("--pace-headroom") + 1] == "0.025"


@pytest.mark.parametrize(
    "body, field, words",
    [
        (
            TRANSFER + "pace_headroom = 0.1\n",
            "transfer[0].pace_headroom",
            "profile the pacing keeps",
        ),
        (
            TRANSFER + 'profile = [[0, "1Mbit"]]\nenforce = "application"\npace_headroom = 0.1\n',
            "transfer[0].pace_headroom",
            "profile the pacing keeps",
        ),
        (
            '[[transfer]]\nsrc = "l1"\ndst = "r1"\nvolume = "1MB"\nprotocol = "udt"\n'
            'profile = [[0, "10Mbit"], [1, 0], [2, "10Mbit"]]\n',
            "transfer[0].profile",
            "cannot pause",
        ),
    ],
)
def test_what_cannot_pause_or_pace_with_headroom_is_refused(tmp_path, body, field, words):
    e = refused(tmp_path, body)
    assert e.field == field and words in e.reason, (e.field, e.reason)


def test_a_plan_becomes_a_profile_from_its_start_with_its_gaps_as_pauses():
    plan = Plan(
        "r",
        (
            (10.0, 12.0, 8e6),
            (12.0, 13.0, 4_000_000.4),  # rounded up: never below the plan
            (13.0, 13.0004, 2e6),  # 0.4 ms: folded into the step before
            (15.0, 16.0, 8e6),
        ),
    )
    assert profile_steps(plan) == [
        [0.0, "8000000bit"],
        [2.0, "4000001bit"],
        [3.0004, "0bit"],
        [5.0, "8000000bit"],
    ]
    r = Request("r", 3_000_000, 9.0, 20.0, 1e7)
    t = planned_transfer(r, plan, "l1", "r1", lead_s=1.1, rtt_s=0.1, headroom=0.025 / 0.975)
    assert t["at"] == "11.000000s"  # launched one RTT before t_s = 10 s, after the 1.1 s lead
    assert t["pace_headroom"] == pytest.approx(0.025641)
    steps = profiles.parse_steps(t["profile"])
    # 2 s at 8 Mbit/s + 1 s at 4 Mbit/s + 0.4 ms at 4 Mbit/s = 2.5002 MB, then 1 MB/s
    assert profiles.time_to_send_us(steps, 3_000_000) == pytest.approx(5_499_800, abs=1)


def test_a_token_bucket_keeps_a_one_rate_plan_in_frames_and_refuses_a_profile():
    from itb.service.scenario import PlanError

    r = Request("r", 1_000_000, 0.0, 10.0, 1e9)
    one = Plan("r", ((2.0, 3.0, 8e6),))
    t = planned_transfer(r, one, "l1", "r1", 1.1, 0.1, 0.0, "bic-tbf", 1448 / 1514)
    # 8 Mbit/s of payload: 8e6 × 1514 / 1448 = 8 364 640.88 → rounded up
    assert t["rate"] == "8364641bit" and t["enforce"] == "tbf" and "profile" not in t
    two = Plan("r", ((2.0, 3.0, 8e6), (4.0, 5.0, 8e6)))
    with pytest.raises(PlanError, match="2 segments"):
        planned_transfer(r, two, "l1", "r1", 1.1, 0.1, 0.0, "bic-tbf", 1448 / 1514)
    paced = planned_transfer(r, two, "l1", "r1", 1.1, 0.1, 0.025, "reno-pacing")
    assert paced["cc"] == "reno" and paced["pace_headroom"] == 0.025 and "enforce" not in paced
