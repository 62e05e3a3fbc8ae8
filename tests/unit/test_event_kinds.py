"""Each event kind of a timeline is resolved by its own module (itb.scenario.experiment.
kinds): every section list of a scenario has one, in the order errors are reported, and
the checks every kind shares (hosts, dates, ids) name the field of the kind at fault."""

from __future__ import annotations

import pytest

from itb.errors import ScenarioError
from itb.scenario import load_testbed
from itb.scenario.experiment.kinds import KINDS
from itb.scenario.experiment.sections import ScenarioSections
from itb.scenario.experiment.timeline import resolve


def test_every_list_of_sections_has_its_kind_in_the_files_order():
    lists = [f for f in ScenarioSections.model_fields if f != "experiment"]
    assert [field for field, _ in KINDS] == lists
    assert lists == ["transfer", "pingpong", "udp", "tcp_background", "set", "command"]


def _sections(**kinds) -> ScenarioSections:
    return ScenarioSections.model_validate({"experiment": {"duration": "10s"}, **kinds})


def test_an_id_used_by_two_kinds_is_refused_at_the_second():
    topo = load_testbed(None, {"pairs": 2})
    sections = _sections(
        transfer=[{"id": "x", "src": "l1", "dst": "r1", "volume": "1MB"}],
        udp=[{"id": "x", "src": "l2", "dst": "r2", "rate": "1Mbit", "duration": "1s"}],
    )
    with pytest.raises(ScenarioError, match=r"udp\[0\]\.id.*event id 'x' is used twice"):
        resolve(sections, topo, "s.toml")


def test_the_first_kind_in_order_reports_its_error_first():
    topo = load_testbed(None, {"pairs": 2})
    # both wrong: the transfer's unknown host is reported, not the ping-pong's date
    sections = _sections(
        transfer=[{"src": "nowhere", "dst": "r1", "volume": "1MB"}],
        pingpong=[{"src": "l1", "dst": "r1", "at": "20s", "count": 1, "size": "1kB"}],
    )
    with pytest.raises(ScenarioError, match=r"transfer\[0\]\.src.*unknown host 'nowhere'"):
        resolve(sections, topo, "s.toml")


def test_events_of_every_kind_come_out_sorted_by_date_then_id():
    topo = load_testbed(None, {"pairs": 2})
    sections = _sections(
        transfer=[{"id": "b", "src": "l1", "dst": "r1", "volume": "1MB", "at": "1s"}],
        pingpong=[{"id": "a", "src": "l2", "dst": "r2", "at": "1s", "count": 1, "size": "1kB"}],
        set=[{"link": "rl-rr", "at": "0.5s", "rate": "500Mbit"}],
    )
    exp = resolve(sections, topo, "s.toml")
    assert [(e.id, e.at_us) for e in exp.events] == [
        ("set1", 500_000),
        ("a", 1_000_000),
        ("b", 1_000_000),
    ]


def test_every_event_a_repetition_runs_has_its_processes_module():
    from itb.engine.kinds import PROCESSES
    from itb.scenario.experiment import events as ev

    # a link change is applied by the engine at its date; background flows are drawn
    # into transfers for each repetition (itb.scenario.experiment.background)
    assert set(PROCESSES) == {ev.Transfer, ev.Pingpong, ev.Udp, ev.Command}
    assert {k: m.LISTENERS for k, m in PROCESSES.items()} == {
        ev.Transfer: 1,
        ev.Pingpong: 1,
        ev.Udp: 1,
        ev.Command: 0,
    }
