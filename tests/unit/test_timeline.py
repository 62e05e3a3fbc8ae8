"""The experiment part of scenario files: validation before anything runs, resolution."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from itb.errors import ScenarioError
from itb.scenario.experiment.background import events_for_repetition
from itb.scenario.scenario import load_scenario

TESTBED = """
[testbed]
name = "t"
[dumbbell]
pairs = 4
access_rate = "50Mbit"
[bottleneck]
rate = "100Mbit"
rtt = "20ms"
"""


def scenario(tmp_path, body: str):
    path = tmp_path / "s.toml"
    path.write_text(TESTBED + textwrap.dedent(body))
    return load_scenario(path)


def error(tmp_path, body: str) -> ScenarioError:
    with pytest.raises(ScenarioError) as e:
        scenario(tmp_path, body)
    assert e.value.exit_code == 2
    assert e.value.file.endswith("s.toml")
    return e.value


def test_group_of_transfers_spaced_and_zipped(tmp_path):
    sc = scenario(
        tmp_path,
        """
        [experiment]
        repetitions = 3
        duration = "60s"
        [[transfer]]
        id = "bulk"
        src = ["l1", "l2", "l3", "l4"]
        dst = ["r1", "r2", "r3", "r4"]
        spacing = "1s"
        volume = "50MB"
    """,
    )
    ev = sc.experiment.events
    assert [e.id for e in ev] == ["bulk.1", "bulk.2", "bulk.3", "bulk.4"]
    assert [e.at_us for e in ev] == [0, 1_000_000, 2_000_000, 3_000_000]
    assert [(e.src, e.dst) for e in ev] == [("l1", "r1"), ("l2", "r2"), ("l3", "r3"), ("l4", "r4")]
    assert all(e.volume == 50_000_000 and e.cc == "cubic" and e.direction == "forward" for e in ev)
    assert sc.experiment.repetitions == 3


def test_synchronised_start_and_reverse_direction(tmp_path):
    sc = scenario(
        tmp_path,
        """
        [[transfer]]
        src = "r1"
        dst = ["l1", "l2"]
        spacing = "0s"
        volume = "1MB"
        streams = 5
        cc = "bbr"
    """,
    )
    assert [e.at_us for e in sc.experiment.events] == [0, 0]
    assert {e.direction for e in sc.experiment.events} == {"reverse"}
    assert sc.experiment.ccs() == {"bbr"}


@pytest.mark.parametrize(
    "body,field,words",
    [
        (
            '[[transfer]]\nsrc = "x9"\ndst = "r1"\nvolume = "1MB"',
            "transfer[0].src",
            "unknown host 'x9'",
        ),
        (
            '[[transfer]]\nsrc = "l1"\ndst = "r1"\nvolume = "1MB"\nat = "-1s"',
            "transfer[0].at",
            "negative",
        ),
        (
            '[[transfer]]\nsrc = "l1"\ndst = "r1"\nvolume = "0MB"',
            "transfer[0].volume",
            "larger than 0",
        ),
        (
            '[[transfer]]\nsrc = "l1"\ndst = "r1"\nvolume = "1MB"\ncc = "foo"',
            "transfer[0].cc",
            "unknown congestion control 'foo'",
        ),
        (
            '[experiment]\nduration = "10s"\n[[transfer]]\nsrc = "l1"\ndst = "r1"\nvolume = "1MB"\nat = "10s"',
            "transfer[0].at",
            "not before the end",
        ),
        (
            '[experiment]\nduration = "10s"\n[[transfer]]\nsrc = ["l1","l2"]\ndst = ["r1","r2"]\n'
            'volume = "1MB"\nat = "9s"\nspacing = "2s"',
            "transfer[0].spacing",
            "not before the end",
        ),
        (
            '[[transfer]]\nsrc = ["l1","l2"]\ndst = ["r1","r2","r3"]\nvolume = "1MB"',
            "transfer[0].src",
            "as many sources as destinations",
        ),
        ('[[transfer]]\nsrc = "l1"\ndst = "l1"\nvolume = "1MB"', "transfer[0].dst", "same host"),
        (
            '[[transfer]]\nsrc = "l1"\ndst = "r1"\nvolume = "1MB"\nspeed = 3',
            "transfer[0].speed",
            "unknown field 'speed'",
        ),
        ('[[set]]\nat = "1s"\nlink = "nope"\nrate = "10Mbit"', "set[0].link", "rl-rr"),
        ('[[set]]\nat = "1s"\nlink = "rl-rr"', "set[0]", "nothing to change"),
        ('[[command]]\nhost = "l1"\nargv = "iperf3 -s"', "command[0].argv", "list of strings"),
        (
            '[[udp]]\nsrc = "l1"\ndst = "r1"\nrate = "10Mbit"\nduration = "400s"',
            "udp[0].duration",
            "past the end",
        ),
        (
            '[[tcp_background]]\nsrc = "l1"\ndst = "r1"\nduration = "10s"\nmean_gap = "1s"\n'
            'sizes = {distribution = "pareto", mean = "1MB", shape = 0.9}',
            "tcp_background[0].sizes.shape",
            "shape > 1",
        ),
        ("[experimentt]\nrepetitions = 2", "experimentt", "unknown section"),
        (
            '[experiment]\nrepetitions = 0\n[[transfer]]\nsrc = "l1"\ndst = "r1"\nvolume = "1MB"',
            "experiment.repetitions",
            "between 1",
        ),
        ("[experiment]\nrepetitions = 2", "(file)", "timeline is empty"),
        # what flow's --interval-us accepts: 1 ms to 1 h (it refused others once running)
        (
            '[experiment]\ninterval = "100us"\n[[transfer]]\nsrc = "l1"\ndst = "r1"\nvolume = "1MB"',
            "experiment.interval",
            "must be 1ms to 3600s",
        ),
        (
            '[experiment]\ninterval = "3601s"\n[[transfer]]\nsrc = "l1"\ndst = "r1"\nvolume = "1MB"',
            "experiment.interval",
            "must be 1ms to 3600s",
        ),
        (
            '[experiment]\nduration = "86401s"\n[[transfer]]\nsrc = "l1"\ndst = "r1"\nvolume = "1MB"',
            "experiment.duration",
            "at most 86400 s",
        ),
        # flow allocated the message and aborted (SIGABRT) once the testbed was up
        (
            '[[pingpong]]\nsrc = "l1"\ndst = "r1"\nsize = "100GB"\ncount = 1',
            "pingpong[0].size",
            "a message is at most 1GiB",
        ),
    ],
)
def test_bad_timelines_name_field_and_reason(tmp_path, body, field, words):
    e = error(tmp_path, body)
    assert e.field == field
    assert words in e.reason


def test_duplicate_event_ids(tmp_path):
    e = error(
        tmp_path,
        """
        [[transfer]]
        id = "a"
        src = "l1"
        dst = "r1"
        volume = "1MB"
        [[pingpong]]
        id = "a"
        src = "l2"
        dst = "r2"
    """,
    )
    assert e.field == "pingpong[0].id" and "used twice" in e.reason


def test_set_link_forms_emulator_commands(tmp_path):
    from itb.engine.execute import set_command

    sc = scenario(
        tmp_path,
        """
        [[transfer]]
        src = "l1"
        dst = "r1"
        volume = "1MB"
        [[set]]
        at = "2s"
        link = "rl-rr"
        direction = "forward"
        rate = "50Mbit"
        loss = "1%"
    """,
    )
    s = next(e for e in sc.experiment.events if e.kind == "set")
    cmd = set_command(s, "ab")
    assert cmd["dir"] == "ab" and cmd["rate_bps"] == 50_000_000
    assert cmd["loss"]["model"] == "bernoulli" and cmd["loss"]["p"] == pytest.approx(0.01)
    assert "delay_us" not in cmd


def test_background_flows_are_seeded_per_repetition(tmp_path):
    sc = scenario(
        tmp_path,
        """
        [experiment]
        seed = 7
        duration = "200s"
        [[tcp_background]]
        src = ["l3", "l4"]
        dst = ["r3", "r4"]
        duration = "150s"
        mean_gap = "100ms"
        sizes = {distribution = "exponential", mean = "200kB"}
    """,
    )
    a1 = events_for_repetition(sc.experiment, 1)
    a1_again = events_for_repetition(sc.experiment, 1)
    a2 = events_for_repetition(sc.experiment, 2)
    assert [e.model_dump() for e in a1] == [e.model_dump() for e in a1_again]
    assert [e.volume for e in a1] != [e.volume for e in a2]
    assert {e.direction for e in a1} == {"background"}
    # 150 s at one flow per 100 ms on average: ~1500 flows of mean 200 kB
    assert 1300 < len(a1) < 1700
    assert np.mean([e.volume for e in a1]) == pytest.approx(200_000, rel=0.1)
    assert all(0 <= e.at_us < 150_000_000 for e in a1)


@pytest.mark.parametrize("dist,shape", [("pareto", 1.5), ("weibull", 0.7), ("exponential", None)])
def test_size_distributions_have_the_configured_mean(dist, shape):
    from itb.scenario.experiment.background import draw_size
    from itb.scenario.experiment.events import TcpBackground

    e = TcpBackground(
        id="b",
        at_us=0,
        src=("l1",),
        dst=("r1",),
        duration_us=1,
        mean_gap_us=1,
        distribution=dist,
        mean_bytes=1_000_000,
        shape=shape,
        cc="cubic",
    )
    rng = np.random.default_rng(1)
    sizes = np.array([draw_size(rng, e) for _ in range(200_000)])
    tol = 0.1 if dist == "pareto" else 0.02  # heavy tail: the sample mean converges slowly
    assert sizes.mean() == pytest.approx(1_000_000, rel=tol)


def test_shipped_scenarios_load():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "scenarios"
    files = sorted(root.glob("nxe/*.toml"))
    assert files
    for f in files:
        assert load_scenario(f).experiment.events
