"""Rate profiles: the steps a scenario writes (inline or in a file), what is refused and
where, the completion time a transfer that keeps a profile has, and flow's arguments."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from itb.analysis.logs import profile_columns
from itb.engine import processes
from itb.errors import ScenarioError
from itb.scenario.experiment import profile as profiles
from itb.scenario.experiment.background import events_for_repetition
from itb.scenario.scenario import load_scenario
from itb.scenario.testbed.paths import path_rate_bps
from itb.scenario.units import UnitError

TESTBED = """
[testbed]
name = "t"
[dumbbell]
pairs = 2
access_rate = "1Gbit"
[bottleneck]
rate = "800Mbit"
rtt = "20ms"
[experiment]
duration = "60s"
"""


def scenario(tmp_path, body: str):
    path = tmp_path / "s.toml"
    path.write_text(TESTBED + textwrap.dedent(body))
    return load_scenario(path)


def refused(tmp_path, body: str) -> ScenarioError:
    with pytest.raises(ScenarioError) as e:
        scenario(tmp_path, body)
    assert e.value.exit_code == 2 and e.value.file.endswith("s.toml")
    return e.value


def test_inline_steps_in_base_units():
    assert profiles.parse_steps([[0, "100Mbit"], [10, "600Mbit"], ["12.5s", "1Gbit"]]) == (
        (0, 100_000_000),
        (10_000_000, 600_000_000),
        (12_500_000, 1_000_000_000),
    )
    with pytest.raises(UnitError, match="step 0: a profile starts at date 0"):
        profiles.parse_steps([[0.25, "1Mbit"]])


@pytest.mark.parametrize(
    "steps, words",
    [
        ([], "list of [date, rate]"),
        ([[1, "10Mbit"]], "step 0: a profile starts at date 0"),
        ([[0, "10Mbit"], [5, "20Mbit"], [5, "30Mbit"]], "step 2: date 5 s is not after"),
        ([[0, "10Mbit"], [-1, "20Mbit"]], "step 1"),
        ([[0, 100]], "step 0: 100 has no unit"),
        ([[0, "10MB"]], "step 0"),
        ([[0, "10Mbit", 3]], "step 0: expected [date, rate]"),
        ([[True, "10Mbit"]], "step 0"),
    ],
)
def test_bad_inline_steps_name_the_step(steps, words):
    with pytest.raises(UnitError, match=None) as e:
        profiles.parse_steps(steps)
    assert words in str(e.value), str(e.value)


def test_completion_time_of_a_transfer_that_keeps_its_profile():
    # 80 Mbit/s for 1 s (10 MB), then 8 Mbit/s (1 MB/s): 12 MB take 3 s, 5 MB 0.5 s.
    steps = ((0, 80_000_000), (1_000_000, 8_000_000))
    assert profiles.time_to_send_us(steps, 5_000_000) == pytest.approx(500_000)
    assert profiles.time_to_send_us(steps, 10_000_000) == pytest.approx(1_000_000)
    assert profiles.time_to_send_us(steps, 12_000_000) == pytest.approx(3_000_000)
    for v in (1, 2_500_000, 10_000_001, 11_999_999):  # the two are each other's inverse
        assert profiles.bits_by(steps, profiles.time_to_send_us(steps, v)) == pytest.approx(8 * v)
    assert profiles.bits_by(steps, 3_000_000) == 12_000_000 * 8


def test_a_scenario_profile_reaches_flow(tmp_path, monkeypatch):
    sc = scenario(
        tmp_path,
        """
        [[transfer]]
        id = "p"
        src = "l1"
        dst = "r1"
        volume = "100MB"
        cc = "nocc"
        profile = [[0, "100Mbit"], ["2s", "600Mbit"]]
        [[transfer]]
        id = "a"
        src = "l2"
        dst = "r2"
        volume = "10MB"
        cc = "reno"
        rate = "100Mbit"
        enforce = "application"
    """,
    )
    by_id = {e.id: e for e in sc.experiment.events}
    p, a = by_id["p"], by_id["a"]
    assert p.profile == ((0, 100_000_000), (2_000_000, 600_000_000)) and p.enforce == "pacing"
    assert a.profile is None and a.enforce == "application"
    monkeypatch.setenv("ITB_FLOW", "/usr/local/bin/flow")
    plan = processes.build(
        events_for_repetition(sc.experiment, 1),
        sc.topology,
        tmp_path / "rep-001",
        sc.experiment.interval_us,
    )
    send = {s.id: list(s.argv) for s in plan.procs}
    assert send["p.send"][send["p.send"].index("--profile") + 1] == "0:100000000,2000000:600000000"
    assert "--app-cap" not in send["p.send"]
    assert "--app-cap" in send["a.send"] and "--profile" not in send["a.send"]


def test_a_scenario_without_profiles_keeps_its_hash(tmp_path):
    sc = scenario(
        tmp_path,
        """
        [[transfer]]
        src = "l1"
        dst = "r1"
        volume = "1MB"
    """,
    )
    assert "profile" not in sc.experiment.canonical_json()
    assert "enforce" not in sc.experiment.canonical_json()


@pytest.mark.parametrize(
    "body, field, words",
    [
        (
            'rate = "10Mbit"\nprofile = [[0, "10Mbit"]]',
            "transfer[0].profile",
            "a rate or a profile",
        ),
        (
            'profile = [[0, "10Mbit"], [1, "900Mbit"]]',
            "transfer[0].profile[1]",
            "900Mbit exceeds the path's 800Mbit (l1 → r1)",
        ),
        ('volume = "1GB"\nprofile = [[0, "10Mbit"]]', "transfer[0].volume", "need 800 s"),
        ('enforce = "application"', "transfer[0].enforce", "has neither"),
        ('enforce = "bucket"', "transfer[0].enforce", "unsupported enforcement"),
        ('enforce = "tbf"', "transfer[0].enforce", "give rate, and no profile"),
        ('profile = [[2, "10Mbit"]]', "transfer[0].profile", "starts at date 0"),
        ('profile = "missing.csv"', "transfer[0].profile", "no such file"),
        ('profile = "/dev/zero"', "transfer[0].profile", "is a character device"),
        (
            'profile = [[0, "10Mbit"], [86401, "20Mbit"]]',
            "transfer[0].profile",
            "step 1: date 86401 s is after 86400 s",
        ),
    ],
)
def test_bad_profiles_are_refused_before_anything_runs(tmp_path, body, field, words):
    base = 'src = "l1"\ndst = "r1"\n'
    if "volume" not in body:
        base += 'volume = "1MB"\n'
    e = refused(tmp_path, "[[transfer]]\n" + base + body + "\n")
    assert e.field == field and words in e.reason, (e.field, e.reason)


def test_profile_files_csv_and_toml(tmp_path):
    (tmp_path / "p.csv").write_text("t_s,rate_bps\n0,100000000\n2.5,600000000\n")
    (tmp_path / "p.toml").write_text('profile = [[0, "100Mbit"], ["2.5s", "600Mbit"]]\n')
    want = ((0, 100_000_000), (2_500_000, 600_000_000))
    for name in ("p.csv", "p.toml"):
        sc = scenario(
            tmp_path, f'[[transfer]]\nsrc = "l1"\ndst = "r1"\nvolume = "10MB"\nprofile = "{name}"\n'
        )
        assert sc.experiment.events[0].profile == want


@pytest.mark.parametrize(
    "name, text, words",
    [
        ("p.csv", "t,rate\n0,1\n", "line 1 must be the header t_s,rate_bps"),
        ("p.csv", "t_s,rate_bps\n0,100000000\n1,abc\n", "p.csv, line 3: not a number"),
        ("p.csv", "t_s,rate_bps\n0,100000000\n1,1.5\n", "line 3: t_s must be"),
        ("p.csv", "t_s,rate_bps\n0,100000000\n0,100000000\n", "step 1: date 0 s is not after"),
        ("p.csv", "t_s,rate_bps\n0,100000000,7\n", "line 2: expected 2 fields"),
        ("p.toml", "profile = [[0, 5]]\n", "p.toml: step 0: 5 has no unit"),
        ("p.toml", "steps = []\n", "expected exactly one key"),
        ("p.txt", "0 1\n", "a profile file is .csv"),
    ],
)
def test_bad_profile_files_name_file_line_and_reason(tmp_path, name, text, words):
    (tmp_path / name).write_text(text)
    e = refused(
        tmp_path, f'[[transfer]]\nsrc = "l1"\ndst = "r1"\nvolume = "1MB"\nprofile = "{name}"\n'
    )
    assert e.field == "transfer[0].profile" and words in e.reason, e.reason


def test_path_rate_is_the_slowest_hop(tmp_path):
    sc = scenario(tmp_path, '[[transfer]]\nsrc = "l1"\ndst = "r1"\nvolume = "1MB"\n')
    assert path_rate_bps(sc.topology, "l1", "r1") == 800_000_000
    assert path_rate_bps(sc.topology, "r2", "l1") == 800_000_000
    assert path_rate_bps(sc.topology, "l1", "l2") == 1_000_000_000  # access links only


def test_lateness_against_the_profile():
    e = {
        "kind": "transfer",
        "volume": 12_000_000,
        "profile": [[0, 80_000_000], [1_000_000, 8_000_000]],
    }
    cols = profile_columns(e, True, 3_400_000_000, 100_000_000)
    assert cols["profile_s"] == pytest.approx(3.0) and cols["lateness_s"] == pytest.approx(0.3)
    assert np.isnan(profile_columns(e, False, None, None)["lateness_s"])
    assert np.isnan(profile_columns({"kind": "transfer", "volume": 1}, True, 2, 1)["profile_s"])


@pytest.mark.parametrize(
    "body, words",
    [
        # 100 MB along 10 then 100 Mbit/s: 10 s + 7 s
        (
            'volume = "100MB"\nprofile = [[0, "10Mbit"], [10, "100Mbit"]]\ndeadline = "16.5s"',
            "need 17 s along its profile",
        ),
        ('volume = "100MB"\nrate = "100Mbit"\ndeadline = "7.9s"', "need 8 s at 100Mbit"),
        ('volume = "1GB"\ndeadline = "9s"', "need 10 s at 800Mbit"),  # the path's bottleneck
        ('volume = "1MB"\ndeadline = "0s"', "must be longer than 0"),
    ],
)
def test_a_deadline_the_transfer_cannot_make_is_refused(tmp_path, body, words):
    e = refused(tmp_path, '[[transfer]]\nsrc = "l1"\ndst = "r1"\n' + body + "\n")
    assert e.field == "transfer[0].deadline" and words in e.reason, (e.field, e.reason)


def test_a_deadline_is_kept_and_judged(tmp_path):
    sc = scenario(
        tmp_path,
        """
        [[transfer]]
        src = "l1"
        dst = "r1"
        volume = "100MB"
        profile = [[0, "10Mbit"], [10, "100Mbit"]]
        deadline = "18s"
    """,
    )
    (t,) = sc.experiment.events
    assert t.deadline_us == 18_000_000
    e = {"kind": "transfer", "volume": 1, "deadline_us": 2_000_000}
    assert profile_columns(e, True, 1_900_000_000, 0)["deadline_met"] is True
    assert profile_columns(e, True, 2_100_000_000, 0)["deadline_met"] is False
    assert profile_columns(e, False, None, None)["deadline_met"] is False  # not completed
    assert profile_columns({"kind": "transfer", "volume": 1}, True, 2, 1)["deadline_met"] is None


def test_run_metrics_pool_the_lateness_of_profiled_transfers():
    from itb.analysis.metrics import lateness_stats

    assert lateness_stats([]) is None
    got = lateness_stats([0.1, -0.1, 0.3, None])
    assert got["n"] == 3 and got["n_failed"] == 1
    assert got["mean_s"] == pytest.approx(0.1) and got["min_s"] == -0.1 and got["max_s"] == 0.3
    assert got["sigma_s"] == pytest.approx(0.2)
    assert lateness_stats([0.2])["sigma_s"] is None


def test_a_udt_transfer_runs_itb_udt_along_its_rate(tmp_path, monkeypatch):
    sc = scenario(
        tmp_path,
        """
        [[transfer]]
        id = "u"
        src = "l1"
        dst = "r1"
        volume = "10MB"
        protocol = "udt"
        rate = "100Mbit"
        [[transfer]]
        id = "t"
        src = "l2"
        dst = "r2"
        volume = "10MB"
        cc = "reno"
    """,
    )
    by_id = {e.id: e for e in sc.experiment.events}
    u = by_id["u"]
    assert (u.protocol, u.cc, u.rate_bps, u.profile) == ("udt", "udt", None, ((0, 100_000_000),))
    assert sc.experiment.ccs() == {"reno"}  # nothing to load for UDT
    monkeypatch.setenv("ITB_FLOW", "/usr/local/bin/flow")
    monkeypatch.setenv("ITB_ITB_UDT", "/usr/local/bin/itb-udt")
    plan = processes.build(
        events_for_repetition(sc.experiment, 1),
        sc.topology,
        tmp_path / "rep-001",
        sc.experiment.interval_us,
    )
    argv = {s.id: list(s.argv) for s in plan.procs}
    assert argv["u.send"][:2] == ["/usr/local/bin/itb-udt", "send"]
    assert argv["u.send"][argv["u.send"].index("--profile") + 1] == "0:100000000"
    assert argv["u.recv"][:2] == ["/usr/local/bin/itb-udt", "recv"]
    assert argv["t.send"][0] == "/usr/local/bin/flow"


@pytest.mark.parametrize(
    "extra, field, words",
    [
        ('cc = "reno"\nrate = "10Mbit"', "transfer[0].cc", "UDT4's own congestion control"),
        ("", "transfer[0].rate", "needs a rate or a profile"),
        ('rate = "10Mbit"\nstreams = 2', "transfer[0].protocol", "one stream"),
        ('rate = "10Mbit"\nenforce = "application"', "transfer[0].enforce", "for TCP"),
        ('protocol = "quic"', "transfer[0].protocol", "unsupported protocol"),
    ],
)
def test_bad_udt_transfers_are_refused(tmp_path, extra, field, words):
    body = '[[transfer]]\nsrc = "l1"\ndst = "r1"\nvolume = "1MB"\n'
    body += extra + ("\n" if "protocol" in extra else '\nprotocol = "udt"\n')
    e = refused(tmp_path, body)
    assert e.field == field and words in e.reason, (e.field, e.reason)


def test_transfers_with_a_profile_get_no_fair_share_ideal():
    import pandas as pd

    from itb.analysis.metrics import run_metrics

    tr = pd.DataFrame(
        {
            "repetition": [1],
            "transfer": ["p"],
            "kind": ["transfer"],
            "direction": ["forward"],
            "src": ["l1"],
            "dst": ["r1"],
            "cc": ["nocc"],
            "streams": [1],
            "bytes_expected": [10**8],
            "bytes": [10**8],
            "start_ns": [10**9],
            "end_ns": [9 * 10**9],
            "completion_s": [8.0],
            "ok": [True],
            "error": [None],
            "access_rate_bps": [np.nan],
            "rtt_s": [0.02],
            "rep_start_ns": [0],
            "at_s": [0.0],
            "profile_s": [7.9],
            "lateness_s": [0.1],
        }
    )
    m = run_metrics(tr, pd.DataFrame(), pd.DataFrame(), {"capacity_bps": 1e9, "mtu": 1500})
    assert m.repetitions[0].fair_share is None and m.overall.fair_share is None
    assert m.overall.lateness.n == 1 and m.overall.lateness.mean_s == pytest.approx(0.1)
    assert m.repetitions[0].transfers[0].lateness_s == pytest.approx(0.1)


def test_a_profile_date_the_sender_cannot_reach_is_refused_by_the_file_line_check(tmp_path):
    # 10^12 s: flow refused it ("date too large") only once the testbed was built
    (tmp_path / "far.csv").write_text("t_s,rate_bps\n0,100000000\n1000000000000,200000000\n")
    e = refused(
        tmp_path, '[[transfer]]\nsrc = "l1"\ndst = "r1"\nvolume = "1MB"\nprofile = "far.csv"\n'
    )
    assert e.field == "transfer[0].profile" and e.exit_code == 2
    assert "step 1: date 1e+12 s is after 86400 s (24 h, the longest timeline)" in e.reason


def test_the_latest_profile_date_is_the_longest_timeline():
    from itb.scenario.experiment.sections import MAX_DURATION_US

    assert profiles.MAX_DATE_US == MAX_DURATION_US == 86_400_000_000
    assert profiles.check(((0, 1000), (86_400_000_000, 2000)))[-1][0] == 86_400_000_000
