"""`[[command]]`s held to a rate profile: what the scenario accepts and refuses, how the
plan starts them (inside their cgroup, from the first instruction), and the per-step
measurement of a profile at the bottleneck."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from itb.analysis.steps import step_rates, worst_ratio_error
from itb.engine import processes
from itb.errors import ScenarioError
from itb.scenario.experiment.background import events_for_repetition
from itb.scenario.scenario import load_scenario

TESTBED = """
[testbed]
name = "t"
[dumbbell]
pairs = 1
access_rate = "1Gbit"
[bottleneck]
rate = "800Mbit"
rtt = "20ms"
[experiment]
duration = "60s"
"""
COMMAND = """
[[command]]
id = "gridftp"
host = "l1"
at = "1s"
argv = ["globus-url-copy", "file:///dev/zero", "ftp://198.18.2.1:2811/dev/null"]
"""


def scenario(tmp_path, extra: str):
    path = tmp_path / "s.toml"
    path.write_text(TESTBED + COMMAND + textwrap.dedent(extra))
    return load_scenario(path)


def test_a_paced_command_starts_inside_its_cgroup(tmp_path, monkeypatch):
    monkeypatch.setenv("ITB_CGROUP_ROOT", "/sys/fs/cgroup/unified")
    monkeypatch.setenv("ITB_ITB_INCGROUP", "/opt/itb-incgroup")
    sc = scenario(
        tmp_path, 'profile = [[0, "200Mbit"], [4, "600Mbit"]]\ncc = "nocc"\ncontrol_port = 2811\n'
    )
    (cmd,) = sc.experiment.events
    assert cmd.profile == ((0, 200_000_000), (4_000_000, 600_000_000))
    assert cmd.paced and sc.experiment.ccs() == {"nocc"}
    plan = processes.build(
        events_for_repetition(sc.experiment, 1),
        sc.topology,
        tmp_path / "rep-001",
        sc.experiment.interval_us,
        {"nocc": "itb_nocc"},
    )
    (p,) = plan.procs
    group = f"/sys/fs/cgroup/unified/itb-{os.environ.get('ITB_PREFIX', 'itb')}/pace-gridftp"
    assert p.pace.cgroup == group
    assert p.pace.steps == cmd.profile and p.pace.cc == "itb_nocc" and p.pace.control_port == 2811
    # the node sees the engine's cgroup hierarchy through /proc/<engine>/root
    assert list(p.argv[:2]) == ["/opt/itb-incgroup", f"/proc/{os.getpid()}/root{group}"]
    assert list(p.argv[2:]) == list(cmd.argv)


def test_a_command_without_profile_is_as_before(tmp_path):
    sc = scenario(tmp_path, "")
    (cmd,) = sc.experiment.events
    assert not cmd.paced and sc.experiment.ccs() == set()
    text = sc.experiment.canonical_json()
    assert "profile" not in text and "control_port" not in text and '"cc"' not in text
    plan = processes.build(
        list(sc.experiment.events), sc.topology, tmp_path / "r", sc.experiment.interval_us
    )
    assert plan.procs[0].pace is None and plan.procs[0].argv == cmd.argv


@pytest.mark.parametrize(
    "extra, field, words",
    [
        (
            'profile = [[0, "10Mbit"], [1, "2Gbit"]]',
            "command[0].profile[1]",
            "2Gbit exceeds 800Mbit, the fastest path out of l1",
        ),
        ("control_port = 2811", "command[0].control_port", "has neither"),
        ('cc = "vegasx"', "command[0].cc", "unknown congestion control"),
        ("control_port = 70000", "command[0].control_port", "between 1 and 65535"),
        ('profile = [[3, "10Mbit"]]', "command[0].profile", "starts at date 0"),
        ('profile = "nowhere.csv"', "command[0].profile", "no such file"),
    ],
)
def test_bad_paced_commands_are_refused_with_field_and_reason(tmp_path, extra, field, words):
    with pytest.raises(ScenarioError) as e:
        scenario(tmp_path, extra + "\n")
    assert e.value.exit_code == 2 and e.value.file.endswith("s.toml")
    assert e.value.field == field and words in e.value.reason, (e.value.field, e.value.reason)


def log(rates_bps: list[tuple[float, float]], start_ns: int, until_s: float) -> pd.DataFrame:
    """A 1 ms bottleneck table whose rate is rates_bps[k][1] from rates_bps[k][0] on
    (each row stamped with its interval's end)."""
    t = np.arange(0, int(until_s * 1000)) / 1000  # interval starts, s
    rate = np.zeros_like(t)
    for at, r in rates_bps:
        rate[t >= at - 1e-9] = r
    return pd.DataFrame(
        {
            "t_ns": start_ns + np.round((t + 0.001) * 1e9).astype(np.int64),
            "interval_s": 0.001,
            "bytes": rate * 0.001 / 8,
        }
    )


def test_each_step_is_measured_after_it_settled():
    share = 1448 / 1514
    # the sender reaches each step's wire rate 0.3 s late: outside the measured spans
    rows = log([(0.3, 100e6 / share), (4.3, 300e6 / share * 1.02)], 10**9, 9.0)
    rates = step_rates(
        rows, 10**9, [(0, 100_000_000), (4_000_000, 300_000_000)], share, 10**9 + int(8.5e9)
    )
    assert [(r.from_s, r.to_s) for r in rates] == [(1.0, 4.0), (5.0, 8.5)]
    assert rates[0].ratio == pytest.approx(1.0, abs=1e-9)
    assert rates[1].ratio == pytest.approx(1.02, abs=1e-9)
    assert worst_ratio_error(rates) == pytest.approx(0.02, abs=1e-9)


def test_a_step_too_short_to_settle_is_not_measured():
    rows = log([(0.0, 1e8)], 0, 3.0)
    rates = step_rates(
        rows,
        0,
        [(0, 100_000_000), (500_000, 200_000_000), (1_200_000, 50_000_000)],
        1.0,
        int(2.0e9),
    )
    assert rates[1].measured_bps is None and rates[1].ratio is None
    assert rates[2].measured_bps is None  # cut by the end
    with pytest.raises(ValueError):
        step_rates(rows, 0, [(0, 1)], 0.0, 1)


class FakePacer:
    def __init__(self, log, path):
        self.log, self.path = log, path

    def set(self, rate, cc=None, skip_port=0):
        self.log.append(("set", self.path.name, rate, cc, skip_port))

    def detach(self):
        self.log.append(("detach", self.path.name))


def held(ident: str, steps, at_us: int = 0):
    from itb.engine.pacing import PaceSpec
    from itb.engine.processes import ProcSpec

    return ProcSpec(
        id=f"{ident}.command",
        event=ident,
        role="command",
        node="l1",
        at_us=at_us,
        argv=("x",),
        stdout="o",
        stderr="e",
        pace=PaceSpec(f"/cg/pace-{ident}", steps, "itb_nocc", 2811),
    )


def test_pacing_sets_each_step_at_its_date_and_removes_what_it_made(monkeypatch):
    import time

    from itb.engine import pacing

    log = []
    monkeypatch.setattr(pacing.cgroup, "create", lambda p: log.append(("create", p.name)))
    monkeypatch.setattr(pacing.cgroup, "kill", lambda p: log.append(("kill", Path(p).name)))
    monkeypatch.setattr(pacing.pace, "attach", lambda host, p: FakePacer(log, p))
    # two commands whose second steps fall on the same date: ordered by id, no error
    pc = pacing.Pacing([held("a", ((0, 10), (20_000, 30))), held("b", ((0, 5), (20_000, 7)))])
    pc.setup()
    assert log == [
        ("create", "pace-a"),
        ("set", "pace-a", 10, "itb_nocc", 2811),
        ("create", "pace-b"),
        ("set", "pace-b", 5, "itb_nocc", 2811),
    ]
    records = []
    pc.start(time.monotonic_ns(), records.append, lambda why: records.append(why))
    pc.thread.join(timeout=2)
    assert [r["id"] for r in records] == ["a.command.step1", "b.command.step1"]
    assert all(r["kind"] == "pace" and r["error_ns"] >= 0 for r in records)
    pc.teardown()
    assert log[-4:] == [
        ("detach", "pace-a"),
        ("kill", "pace-a"),
        ("detach", "pace-b"),
        ("kill", "pace-b"),
    ]


def test_a_pacing_that_cannot_be_set_up_removes_only_what_it_made(monkeypatch):
    from itb.engine import pacing
    from itb.errors import BackendError

    log = []

    def create(p):
        if p.name == "pace-b":
            raise BackendError("cgroup /cg/pace-b exists but is not ITB's")
        log.append(("create", p.name))

    monkeypatch.setattr(pacing.cgroup, "create", create)
    monkeypatch.setattr(pacing.cgroup, "kill", lambda p: log.append(("kill", Path(p).name)))
    monkeypatch.setattr(pacing.pace, "attach", lambda host, p: FakePacer(log, p))
    pc = pacing.Pacing([held("a", ((0, 10),)), held("b", ((0, 5),))])
    with pytest.raises(BackendError, match="pacing a command: cgroup /cg/pace-b exists"):
        pc.setup()
    assert ("kill", "pace-a") in log and ("kill", "pace-b") not in log


def test_the_profiles_of_a_run_are_measured_on_their_direction(tmp_path):
    import json

    from itb.analysis.steps import profiles_kept

    rd = tmp_path / "rep-001"
    rd.mkdir()
    events = [
        {
            "kind": "command",
            "id": "gridftp",
            "host": "l1",
            "profile": [[0, 100_000_000], [2_000_000, 300_000_000]],
        },
        {"kind": "command", "id": "plain", "host": "l1"},
        {"kind": "transfer", "id": "back", "direction": "reverse", "profile": [[0, 50_000_000]]},
    ]
    (rd / "events.json").write_text(json.dumps(events))
    (rd / "result.json").write_text(
        json.dumps({"procs": {"gridftp.command": {"dispatched_ns": 10**9, "exited_ns": 6 * 10**9}}})
    )
    fwd = log([(1.0, 100e6 / 0.5), (3.0, 300e6 / 0.5)], 0, 7.0).assign(direction="forward")
    rev = log([(0.0, 50e6 / 0.5 * 1.01)], 0, 7.0).assign(direction="reverse")
    bn = pd.concat([fwd, rev]).assign(link="rl-rr", repetition=1)
    tr = pd.DataFrame(
        {
            "repetition": [1],
            "transfer": ["back"],
            "src": ["r1"],
            "start_ns": [0],
            "end_ns": [5 * 10**9],
        }
    )
    sides, share = {"l1": "left", "r1": "right", "l2": "left"}, {"tcp": 0.5, "udt": 0.5}
    kept = profiles_kept(tmp_path, tr, bn, "rl-rr", sides, share)
    by = {k.event: k for k in kept}
    assert set(by) == {"gridftp", "back"}
    assert by["gridftp"].direction == "forward" and by["back"].direction == "reverse"
    assert [round(s.ratio, 6) for s in by["gridftp"].steps] == [1.0, 1.0]
    assert by["gridftp"].steps[1].to_s == pytest.approx(4.8)  # 0.2 s before it exited
    assert by["back"].steps[0].ratio == pytest.approx(1.01)
    assert not by["gridftp"].shared_with and not by["back"].shared_with
    assert profiles_kept(tmp_path, tr, bn, None, {}, share) == []
    # another sender on the left while the command ran: the link's rate is not its own
    other = pd.DataFrame(
        {
            "repetition": [1],
            "transfer": ["other"],
            "src": ["l2"],
            "start_ns": [2 * 10**9],
            "end_ns": [float("nan")],
        }
    )
    kept = profiles_kept(tmp_path, pd.concat([tr, other]), bn, "rl-rr", sides, share)
    g = next(k for k in kept if k.event == "gridftp")
    assert g.shared_with == ["other"] and all(s.ratio is None for s in g.steps)
    assert g.steps[0].measured_bps is not None
