"""`itb report` on a real run whose records were damaged afterwards: bad input (exit 2)
naming the file and the field, never a crash (exit 70 and an itb-crash-* file). One run of
a few seconds is made for the module; every case damages a copy of it."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from .conftest import FLOW, LINKEM, itb

SCENARIO = """
[testbed]
name = "records-test"
[dumbbell]
pairs = 1
access_rate = "50Mbit"
[bottleneck]
rate = "100Mbit"
rtt = "10ms"

[experiment]
repetitions = 1
duration = "20s"

[[transfer]]
id = "bulk"
src = "l1"
dst = "r1"
volume = "1MB"
"""


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """(run directory, scenario file, environment) of one finished run."""
    if not FLOW.exists():
        pytest.skip("flow not built (make native)")
    tmp = tmp_path_factory.mktemp("records")
    env = os.environ.copy()
    env.update(
        {
            "ITB_PREFIX": "itbt",
            "ITB_STATE_DIR": str(tmp / "state"),
            "ITB_LINKEM": str(LINKEM),
            "ITB_FLOW": str(FLOW),
        }
    )
    scenario = tmp / "scenario.toml"
    scenario.write_text(SCENARIO)
    run = tmp / "run"
    try:
        res = itb("run", str(scenario), "--out", str(run), env=env, timeout=300)
        assert res.returncode == 0, res.stderr + res.stdout
        yield run, scenario, env
    finally:
        with pytest.MonkeyPatch.context() as mp:
            for k in ("ITB_PREFIX", "ITB_STATE_DIR", "ITB_LINKEM", "ITB_FLOW"):
                mp.setenv(k, env[k])
            from itb import cc
            from itb.backends import local

            local.clean()
            cc.clean()


def crash_files() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("itb-crash-*"))


def copy_of(made, tmp_path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(made[0], copy)
    return copy


def report_refuses(copy: Path, env, named: Path) -> str:
    """`itb report COPY`: exit 2, the file named, no traceback and no crash file."""
    before = crash_files()
    res = itb("report", str(copy), env=env)
    assert res.returncode == 2, res.stderr + res.stdout
    assert str(named) in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert crash_files() == before
    return " ".join(res.stderr.split())


def test_the_run_as_written_reports(made, tmp_path):
    """The engine's own records validate, and the report renders from the typed meta."""
    copy = copy_of(made, tmp_path)
    res = itb("report", str(copy), env=made[2])
    assert res.returncode == 0, res.stderr
    html = (copy / "report" / "report.html").read_text()
    assert "<h1>records-test</h1>" in html and "Status <b>complete</b>, 1 repetition(s)" in html
    # the share of CPU time the hypervisor stole during the repetition, read on this machine
    result = copy / "rep-001" / "result.json"
    rec = json.loads(result.read_text())
    assert 0.0 <= rec["cpu_steal"] <= 1.0, rec["cpu_steal"]
    # a repetition's warnings are listed in the report
    rec["warnings"].append("the hypervisor gave 19 % of this machine's CPU time to others")
    result.write_text(json.dumps(rec))
    assert itb("report", str(copy), env=made[2]).returncode == 0
    html = (copy / "report" / "report.html").read_text()
    assert "<li>repetition 1: the hypervisor gave 19 % of this machine" in html


def test_a_meta_json_holding_an_array_is_refused_naming_it(made, tmp_path):
    copy = copy_of(made, tmp_path)
    (copy / "meta.json").write_text("[1,2]")
    err = report_refuses(copy, made[2], copy / "meta.json")
    assert f"{copy / 'meta.json'}: holds a JSON array, where a run's description" in err


def test_an_empty_meta_json_object_is_refused_for_its_missing_format(made, tmp_path):
    copy = copy_of(made, tmp_path)
    (copy / "meta.json").write_text("{}")
    err = report_refuses(copy, made[2], copy / "meta.json")
    assert f"{copy / 'meta.json'}: field format: missing (this ITB reads format 1)" in err


def test_a_meta_json_of_format_999_is_refused_as_a_format_this_itb_does_not_read(made, tmp_path):
    copy = copy_of(made, tmp_path)
    meta = json.loads((copy / "meta.json").read_text())
    (copy / "meta.json").write_text(json.dumps(meta | {"format": 999}))
    err = report_refuses(copy, made[2], copy / "meta.json")
    assert (
        f"{copy / 'meta.json'}: field format: 999 is not a format this ITB reads (it reads 1)"
    ) in err


def test_a_missing_resolved_scenario_is_named(made, tmp_path):
    copy = copy_of(made, tmp_path)
    (copy / "scenario.resolved.json").unlink()
    err = report_refuses(copy, made[2], copy / "scenario.resolved.json")
    assert f"{copy / 'scenario.resolved.json'}: missing" in err


def test_a_result_json_without_status_is_named_with_its_repetition(made, tmp_path):
    copy = copy_of(made, tmp_path)
    marker = copy / "rep-001" / "result.json"
    res = json.loads(marker.read_text())
    del res["status"]
    marker.write_text(json.dumps(res))
    err = report_refuses(copy, made[2], marker)
    assert f"rep-001: {marker}: field status: missing" in err and "--resume" in err


def test_resuming_a_run_whose_meta_json_is_damaged_is_refused(made, tmp_path):
    copy = copy_of(made, tmp_path)
    (copy / "meta.json").write_text("[1,2]")
    before = crash_files()
    res = itb("run", str(made[1]), "--out", str(copy), "--resume", env=made[2], timeout=120)
    assert res.returncode == 2, res.stderr + res.stdout
    assert f"{copy / 'meta.json'}: holds a JSON array" in " ".join(res.stderr.split())
    assert crash_files() == before
