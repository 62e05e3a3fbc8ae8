"""A `[[command]]`'s `output_limit`: what the scenario accepts and refuses, that it leaves
the scenario's hash alone while unset, the limit every process of a plan gets, and how
the engine records and `itb run` says that a process's output was cut."""

from __future__ import annotations

import pytest

from itb.engine import processes
from itb.engine.execute import Repetition
from itb.engine.processes import ProcSpec, RepetitionPlan
from itb.errors import ScenarioError
from itb.scenario.experiment.background import events_for_repetition
from itb.scenario.experiment.sections import DEFAULT_OUTPUT_LIMIT
from itb.scenario.scenario import load_scenario

SCENARIO = """
[testbed]
name = "o"
[dumbbell]
pairs = 1
[bottleneck]
rate = "100Mbit"
rtt = "20ms"
[experiment]
duration = "30s"
[[transfer]]
id = "bulk"
src = "l1"
dst = "r1"
volume = "5MB"
[[command]]
id = "flood"
host = "l1"
argv = ["yes"]
check = false
"""


def load(tmp_path, extra: str = ""):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO + extra)
    return load_scenario(path)


def command(sc):
    (c,) = [e for e in sc.experiment.events if e.kind == "command"]
    return c


def test_the_output_limit_is_a_size_with_its_unit(tmp_path):
    assert command(load(tmp_path, 'output_limit = "1MiB"\n')).output_limit_bytes == 1_048_576
    assert command(load(tmp_path, 'output_limit = "2.5MB"\n')).output_limit_bytes == 2_500_000
    assert command(load(tmp_path)).output_limit_bytes is None  # the engine's default
    assert DEFAULT_OUTPUT_LIMIT == 67_108_864  # 64 MiB


@pytest.mark.parametrize(
    "value, says",
    [
        ('"0B"', "larger than 0"),
        ("0", "larger than 0"),
        ('"17GiB"', "at most 16GiB"),
        ('"1Mb"', "capital B"),
        ("1000", "no unit"),
        ('"lots"', "is not a size"),
    ],
)
def test_a_bad_output_limit_is_refused_naming_the_field(tmp_path, value, says):
    with pytest.raises(ScenarioError) as e:
        load(tmp_path, f"output_limit = {value}\n")
    assert "command[0].output_limit" in str(e.value) and says in str(e.value)
    assert e.value.exit_code == 2


def test_an_unset_output_limit_leaves_the_scenario_hash_alone(tmp_path):
    plain = load(tmp_path)
    assert "output_limit" not in plain.experiment.canonical_json()
    limited = load(tmp_path, 'output_limit = "1MiB"\n')
    assert '"output_limit_bytes":1048576' in limited.experiment.canonical_json()
    assert limited.content_hash() != plain.content_hash()


def test_every_process_of_a_plan_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setenv("ITB_FLOW", "/usr/local/bin/flow")
    for extra, want in (("", 67_108_864), ('output_limit = "1MiB"\n', 1_048_576)):
        sc = load(tmp_path, extra)
        plan = processes.build(
            events_for_repetition(sc.experiment, 1),
            sc.topology,
            tmp_path / "rep-001",
            sc.experiment.interval_us,
        )
        limits = {p.id: p.output_limit_bytes for p in plan.procs}
        # ITB's own programs (flow) get the default too
        assert limits == {"bulk.recv": 67_108_864, "bulk.send": 67_108_864, "flood.command": want}


def repetition(tmp_path, limit=1_048_576) -> Repetition:
    p = ProcSpec(
        id="flood.command",
        event="flood",
        role="command",
        node="l1",
        at_us=0,
        argv=("yes",),
        stdout=str(tmp_path / "o"),
        stderr=str(tmp_path / "e"),
        check=False,
        output_limit_bytes=limit,
    )
    return Repetition(
        RepetitionPlan([p], [], 1.0), workers=None, emulators={}, duration_us=60_000_000, tag=1
    )


def test_the_engine_records_a_cut_output_with_what_each_stream_dropped(tmp_path):
    rep = repetition(tmp_path)
    ready, awaited = set(), {"flood.command"}
    rep.recorder.handle(
        "l1",
        {
            "ev": "dispatched",
            "id": "r1/flood.command",
            "at_ns": 5,
            "t_ns": 5,
            "spawned_ns": 6,
            "pid": 42,
        },
        ready,
        awaited,
    )
    for stream in ("stdout", "stderr"):
        rep.recorder.handle(
            "l1",
            {
                "ev": "truncated",
                "id": "r1/flood.command",
                "t_ns": 7,
                "stream": stream,
                "limit_bytes": 1_048_576,
            },
            ready,
            awaited,
        )
    rep.recorder.handle(
        "l1",
        {
            "ev": "exited",
            "id": "r1/flood.command",
            "t_ns": 9,
            "rc": 0,
            "stderr_tail": "",
            "dropped_bytes": {"stdout": 900, "stderr": 30},
        },
        ready,
        awaited,
    )
    out = rep.out.to_json()
    assert out["status"] == "ok" and awaited == set()  # a cut output does not fail it
    assert out["truncated"] == [
        {
            "process": "flood.command",
            "node": "l1",
            "stream": "stdout",
            "limit_bytes": 1_048_576,
            "dropped_bytes": 900,
        },
        {
            "process": "flood.command",
            "node": "l1",
            "stream": "stderr",
            "limit_bytes": 1_048_576,
            "dropped_bytes": 30,
        },
    ]
    assert out["warnings"] == [
        f"flood.command on l1: its {stream} reached its output limit (1048576 bytes, stdout "
        "and stderr together): the rest was dropped"
        for stream in ("stdout", "stderr")
    ]


def test_a_drop_known_only_from_the_exit_is_recorded_with_the_planned_limit(tmp_path):
    rep = repetition(tmp_path, limit=4096)
    rep.recorder.handle(
        "l1",
        {
            "ev": "exited",
            "id": "r1/flood.command",
            "t_ns": 9,
            "rc": 0,
            "stderr_tail": "",
            "dropped_bytes": {"stdout": 10, "stderr": 0},
        },
        set(),
        set(),
    )
    assert rep.out.truncated == [
        {
            "process": "flood.command",
            "node": "l1",
            "stream": "stdout",
            "limit_bytes": 4096,
            "dropped_bytes": 10,
        }
    ]


def test_itb_run_says_which_output_was_cut_and_at_what_limit(capsys):
    from itb.cli import run as cli_run

    cli_run._print_truncated(
        2,
        [
            {
                "process": "flood.command",
                "node": "l1",
                "stream": "stdout",
                "limit_bytes": 1_048_576,
                "dropped_bytes": 123_456,
            },
            {
                "process": "flood.command",
                "node": "l1",
                "stream": "stderr",
                "limit_bytes": 1_048_576,
                "dropped_bytes": 7,
            },
        ],
    )
    said = capsys.readouterr().out
    assert said.strip() == (
        "repetition 2: the output of flood.command on l1 was truncated at "
        "its output limit of 1 MiB; dropped: stdout 123456 bytes, "
        "stderr 7 bytes"
    )
