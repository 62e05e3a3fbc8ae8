"""The run directory's records read through their typed models (itb.rundir.records):
a wrong shape or an unknown format is bad input (exit 2) naming the file and the field;
what the engine writes validates; extra keys of a newer writer are kept."""

import json
from types import SimpleNamespace

import pytest

from itb import rundir
from itb.analysis import logs as collect
from itb.cc.manage import Resolved
from itb.engine import checks, records
from itb.engine.outcome import Outcome
from itb.engine.runner import Stages
from itb.report.build import write_html
from itb.rundir.flow_summary import FlowSummary
from itb.rundir.records import (
    FORMAT_VERSION,
    RepEvents,
    RepResult,
    ResolvedScenario,
    RunDirError,
    RunMeta,
    read_record,
)
from itb.scenario.scenario import load_scenario

from .test_metrics import CONTEXT, _run_tables

SCENARIO = """
[testbed]
name = "records"
[dumbbell]
pairs = 1
[bottleneck]
rate = "100Mbit"
rtt = "20ms"

[experiment]
repetitions = 2
duration = "10s"

[[transfer]]
id = "bulk"
src = "l1"
dst = "r1"
volume = "1MB"
"""

# the fields records.run_meta writes, with the values of a finished run
META = {
    "format": 1,
    "scenario": "records",
    "scenario_hash": "ab" * 32,
    "testbed_hash": "cd" * 32,
    "source": "s.toml",
    "repetitions": 2,
    "seed": 1,
    "backend": "local",
    "created": "2026-01-01T00:00:00+0000",
    "versions": {"itb": "0.1.0", "git_dirty": False},
    "cpu": {"model": "x", "cores": 2, "kernel": "6.1", "machine": "x86_64"},
    "status": "complete",
}


def write(path, doc):
    path.write_text(json.dumps(doc))
    return path


def refused(path, model) -> str:
    with pytest.raises(RunDirError) as e:
        read_record(path, model)
    assert e.value.exit_code == 2
    return str(e.value)


# --- meta.json: each bad shape -----------------------------------------------------------


def test_a_meta_json_holding_an_array_names_the_file_and_what_it_holds(tmp_path):
    path = write(tmp_path / "meta.json", [1, 2])
    assert refused(path, RunMeta) == (
        f"{path}: holds a JSON array, where a run's description (meta.json) is a JSON object; "
        "the file is damaged or was not written by ITB"
    )


def test_an_empty_meta_json_is_refused_for_its_missing_format(tmp_path):
    path = write(tmp_path / "meta.json", {})
    assert refused(path, RunMeta) == f"{path}: field format: missing (this ITB reads format 1)"


@pytest.mark.parametrize("value,shown", [(999, "999"), ("x", "'x'"), (True, "true"), (1.0, "1.0")])
def test_a_format_this_itb_does_not_read_is_refused_before_the_shape(tmp_path, value, shown):
    # nothing but the format: the version is checked before the missing fields
    path = write(tmp_path / "meta.json", {"format": value})
    assert refused(path, RunMeta) == (
        f"{path}: field format: {shown} is not a format this ITB reads (it reads 1); the run "
        "was written by ITB (version not recorded): read it with that ITB, whose `itb report "
        "RUN` rebuilds the tables, metrics and report from the run's raw logs"
    )


def test_a_field_of_the_wrong_type_is_named_and_not_converted(tmp_path):
    path = write(tmp_path / "meta.json", META | {"repetitions": "3"})
    assert refused(path, RunMeta) == (
        f"{path}: field repetitions: input should be a valid integer, got '3'"
    )


def test_the_first_missing_field_is_named_with_how_many_more_there_are(tmp_path):
    # format 1 alone: scenario, scenario_hash, repetitions, seed and status are missing
    path = write(tmp_path / "meta.json", {"format": 1})
    assert refused(path, RunMeta) == f"{path}: field scenario: missing (and 4 more problems)"


def test_a_nested_field_is_named_by_its_path(tmp_path):
    stages = [
        {"stage": "preflight", "seconds": 0.1, "ok": True},
        {"stage": "deployment", "seconds": "slow", "ok": True},
    ]
    path = write(tmp_path / "meta.json", META | {"stages": stages})
    assert refused(path, RunMeta) == (
        f"{path}: field stages[1].seconds: input should be a valid number, got 'slow'"
    )


def test_a_run_status_outside_the_three_the_runner_writes_is_refused(tmp_path):
    path = write(tmp_path / "meta.json", META | {"status": "done"})
    assert refused(path, RunMeta) == (
        f"{path}: field status: input should be 'running', 'complete' or 'incomplete', got 'done'"
    )


def test_a_valid_meta_json_reads_by_attribute_and_keeps_unknown_keys(tmp_path):
    path = write(tmp_path / "meta.json", META | {"added_later": {"a": 1}})
    meta = read_record(path, RunMeta)
    assert (meta.format, meta.scenario, meta.repetitions, meta.status) == (
        1,
        "records",
        2,
        "complete",
    )
    assert meta.versions.git_dirty is False and meta.dispatch is None and meta.stages == []
    assert meta.model_extra == {"added_later": {"a": 1}}


def test_not_json_and_not_text_stay_named_damaged(tmp_path):
    path = tmp_path / "meta.json"
    path.write_text("")
    assert "not valid JSON (line 1, column 1" in refused(path, RunMeta)
    path.write_bytes(b"\xff\xfe")
    assert refused(path, RunMeta) == f"{path}: not text; the file is damaged"


# --- result.json -------------------------------------------------------------------------


def test_a_result_json_without_status_is_refused(tmp_path):
    path = write(tmp_path / "result.json", {"repetition": 1, "reason": None, "files": []})
    assert refused(path, RepResult) == f"{path}: field status: missing"


def test_a_committed_file_of_the_wrong_type_is_named_by_its_index(tmp_path):
    files = [
        {"path": "a.csv", "bytes": 12, "sha256": "0" * 64},
        {"path": "b.csv", "bytes": "12", "sha256": "0" * 64},
    ]
    path = write(tmp_path / "result.json", {"status": "ok", "files": files})
    assert refused(path, RepResult) == (
        f"{path}: field files[1].bytes: input should be a valid integer, got '12'"
    )


def test_a_result_json_keeps_the_records_a_newer_writer_adds(tmp_path):
    """Output truncation records (or anything else added later), at the top and nested."""
    doc = {
        "status": "ok",
        "truncated": [{"id": "cmd.command", "stream": "stdout"}],
        "procs": {"cmd.command": {"node": "l1", "rc": 0, "dropped_bytes": {"stdout": 5}}},
    }
    res = read_record(write(tmp_path / "result.json", doc), RepResult)
    assert res.model_extra == {"truncated": [{"id": "cmd.command", "stream": "stdout"}]}
    assert res.procs["cmd.command"].rc == 0
    assert res.procs["cmd.command"].model_extra == {"dropped_bytes": {"stdout": 5}}


def test_a_damaged_result_json_makes_its_repetition_redone_and_the_report_name_it(tmp_path):
    rd = rundir.rep_dir(tmp_path, 1)
    rd.mkdir()
    rundir.commit(rd, {"repetition": 1, "status": "ok"})
    assert rundir.repetitions_done(tmp_path, 1) == {1}
    write(rd / "result.json", [1, 2])
    said = []
    assert rundir.repetitions_done(tmp_path, 1, said.append) == set()
    assert said == [
        f"repetition 1: {rd / 'result.json'}: holds a JSON array, where a "
        "repetition's result (result.json) is a JSON object; the file is damaged or "
        "was not written by ITB: it is redone"
    ]
    problem = said[0][len("repetition 1: ") : -len(": it is redone")]
    assert rundir.damaged(tmp_path) == [f"rep-001: {problem}"]


def test_a_repetition_meta_json_records_as_ended_is_damaged_when_its_marker_is_gone(tmp_path):
    meta = RunMeta.model_validate(META | {"repetition_status": ["ok", "not run"]})
    assert rundir.damaged(tmp_path, meta) == [
        f"rep-001: no commit marker ({tmp_path / 'rep-001' / 'result.json'}), though "
        "meta.json records the repetition ok"
    ]


# --- the resolved scenario and the events ------------------------------------------------


def test_the_resolved_scenario_and_events_are_the_scenarios_own_models(tmp_path):
    sc = load_scenario(write_scenario(tmp_path))
    doc = {
        "topology": json.loads(sc.topology.canonical_json()),
        "experiment": json.loads(sc.experiment.canonical_json()),
    }
    resolved = read_record(write(tmp_path / "scenario.resolved.json", doc), ResolvedScenario)
    assert resolved.topology.content_hash() == sc.topology.content_hash()
    assert resolved.experiment == sc.experiment
    doc["experiment"]["interval_us"] = "100ms"
    path = write(tmp_path / "scenario.resolved.json", doc)
    assert refused(path, ResolvedScenario) == (
        f"{path}: field experiment.interval_us: input should be a valid integer, got '100ms'"
    )
    events = [e.model_dump(mode="json") for e in sc.experiment.events]
    assert read_record(write(tmp_path / "events.json", events), RepEvents).root[0].id == "bulk"
    events[0]["kind"] = "teleport"
    assert "field [0]: input tag 'teleport' found using 'kind' does not match" in refused(
        write(tmp_path / "events.json", events), RepEvents
    )


def test_a_flow_summary_of_the_wrong_shape_is_named_a_cut_one_counts_as_missing(tmp_path):
    path = write(tmp_path / "bulk.recv.json", {"ok": True, "bytes": "1MB"})
    assert refused(path, FlowSummary) == (
        f"{path}: field bytes: input should be a valid integer, got '1MB'"
    )
    with pytest.raises(RunDirError, match="bulk.recv.json: field bytes"):
        collect._summary(path)
    path.write_text('{"ok": true, "bytes": 10')  # a stopped program's
    assert collect._summary(path) is None


# --- what the engine writes validates ----------------------------------------------------


def write_scenario(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    return path


def fake_host(name):
    return SimpleNamespace(
        run=lambda argv, check=False: SimpleNamespace(returncode=0, stdout="4096 131072 16777216\n")
    )


def test_the_meta_and_results_a_run_writes_validate(tmp_path):
    """meta.json built as records.run_meta and the runner's stages build it (local, then
    the keys an SSH run adds), with two committed repetitions: one ok with a dispatch
    error of 0.1 ms, one whose testbed could not be rebuilt (0.3 ms)."""
    sc = load_scenario(write_scenario(tmp_path))
    run = tmp_path / "run"
    run.mkdir()
    meta = records.run_meta(sc, 2, 7)
    meta["backend"] = "local"
    stage = Stages(meta, lambda s: None)
    with stage("preflight"):
        meta["warnings"] = ["no calibration found"]
        meta["congestion_controls"] = [Resolved("cubic", "cubic", "built-in", False).to_json()]
    with stage("deployment"):
        meta["sysctls"] = checks.deployment_check(sc, fake_host)
    meta["calibration"] = "calibration.json"
    rundir.write_json(run / "meta.json", meta)
    assert read_record(run / "meta.json", RunMeta).status == "running"
    for r, error_ns in ((1, 100_000), (2, 300_000)):
        out = Outcome(zero_ns=1_000, end_ns=2_000)
        out.dispatch.append(
            {
                "id": "bulk.send",
                "node": "l1",
                "kind": "send",
                "at_ns": 1_000,
                "t_ns": 1_000 + error_ns,
                "error_ns": error_ns,
                "spawn_ns": 5,
                "clock_uncertainty_ns": 0,
            }
        )
        out.procs["bulk.send"] = {
            "node": "l1",
            "dispatched_ns": 1_000 + error_ns,
            "spawned_ns": 1_010 + error_ns,
            "pid": 42,
            "exited_ns": 2_000,
            "rc": 0,
        }
        out.clock["l1"] = {
            "offset_ns": 0,
            "rtt_ns": 0,
            "uncertainty_ns": 0,
            "spread_ns": 0,
            "samples": 0,
            "same_clock": True,
        }
        if r == 2:
            out.fail("the testbed could not be rebuilt: gone", environment=True)
        rd = rundir.rep_dir(run, r)
        rd.mkdir()
        (rd / "events.json").write_text("[]")
        rundir.commit(rd, {"repetition": r, **out.to_json()})
    rd3 = rundir.rep_dir(run, 3)
    rd3.mkdir()
    rundir.commit(
        rd3,
        {
            "repetition": 3,
            "status": "failed",
            "reason": "rebuild",  # as
            "environment": True,
            "dispatch": [],
            "procs": {},
            "clock": {},
        },
    )  # _failed_build
    meta["status"] = "complete"
    meta["dispatch"] = records.dispatch_summary(run, 2)
    meta["repetition_status"] = [rundir.rep_result(run, r)["status"] for r in (1, 2)]
    meta["files"] = records.manifest(run)
    rundir.write_json(run / "meta.json", meta)
    got = read_record(run / "meta.json", RunMeta)
    assert (got.repetitions, got.seed, got.status) == (2, 7, "complete")
    assert got.repetition_status == ["ok", "failed"]
    assert [s.stage for s in got.stages] == ["preflight", "deployment"]
    assert got.sysctls.bdp_bytes == 250_000  # 100 Mbit/s × 20 ms / 8
    # errors 0.1 and 0.3 ms: p50 0.2, p99 0.1 + 0.99 × 0.2 = 0.298, max 0.3
    assert got.dispatch.events == 2 and got.dispatch.p50_ms == pytest.approx(0.2)
    assert got.dispatch.p99_ms == pytest.approx(0.298) and got.dispatch.max_ms == 0.3
    assert got.dispatch.start_skew.per_event[1].skew_ms == 0.3
    assert [r.status for r in map(lambda r: rundir.rep_record(run, r), (1, 2, 3))] == [
        "ok",
        "failed",
        "failed",
    ]
    assert rundir.rep_record(run, 2).environment and rundir.rep_record(run, 1).files
    assert rundir.repetitions_done(run, 3) == {1}
    # what an SSH run adds: its hosts' facts, the inventory, another congestion controls' form
    meta["hosts"] = {"h1": {"role": "end", "cpu": {"model": "x", "cores": 8}, "nic": {"mtu": 9000}}}
    meta["inventory"] = {
        "source": "lab.toml",
        "placement": {"l1": "h1", "r1": "h2"},
        "emulator": "h3",
        "provider": None,
    }
    meta["congestion_controls"] = [
        {"name": "bic", "kernel_name": "itb_bic", "source": "ours", "kernel_lacks_it_on": ["h1"]}
    ]
    meta["backend"] = "ssh"
    meta.setdefault("resumed", []).append("2026-01-02T00:00:00+0000")
    rundir.write_json(run / "meta.json", meta)
    got = read_record(run / "meta.json", RunMeta)
    assert got.inventory.placement == {"l1": "h1", "r1": "h2"} and got.resumed
    assert rundir.open_for_resume(run, sc.content_hash()) == json.loads(
        (run / "meta.json").read_text()
    )


def test_resuming_a_run_whose_meta_json_is_damaged_is_bad_input(tmp_path):
    for doc, why in (
        ([1, 2], "holds a JSON array"),
        ({}, "field format: missing"),
        (META | {"format": 999}, "field format: 999 is not a format"),
    ):
        write(tmp_path / "meta.json", doc)
        with pytest.raises(RunDirError, match=why) as e:
            rundir.open_for_resume(tmp_path, "ab" * 32)
        assert e.value.exit_code == 2 and str(tmp_path / "meta.json") in str(e.value)
    write(tmp_path / "meta.json", META)
    with pytest.raises(RunDirError, match="another scenario"):
        rundir.open_for_resume(tmp_path, "ef" * 32)


def test_the_run_report_renders_from_the_typed_meta(tmp_path):
    from itb.analysis.metrics import run_metrics

    meta = RunMeta.model_validate(META | {"scenario": "typed <run>"})
    html = write_html(
        tmp_path / "report.html", meta, run_metrics(*_run_tables(), CONTEXT), []
    ).read_text()
    assert "<h1>typed &lt;run&gt;</h1>" in html
    assert "Status <b>complete</b>, 2 repetition(s), seed 1,\nscenario abababababab." in html


def test_the_run_format_is_the_one_meta_json_is_written_with():
    assert FORMAT_VERSION == rundir.FORMAT_VERSION == 1


def test_a_record_that_is_an_endless_device_is_refused_unread(tmp_path):
    path = tmp_path / "meta.json"
    path.symlink_to("/dev/zero")
    assert refused(path, RunMeta) == (
        f"{path}: is a character device, not a results file (ITB reads only regular files)"
    )
