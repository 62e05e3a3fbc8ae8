"""A sweep's index (<kind>.json) as typed models: written and read back the same; an
index written before it was typed (the dict `Sweep.open` built) reads back typed, resumes
and is analysed; a damaged or other-shaped one is refused naming the file and the field."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from itb import rundir
from itb.errors import ScenarioError
from itb.rundir.records import RunDirError
from itb.study.friendliness.analysis import analyse as friendliness_analysis
from itb.study.friendliness.cells import FriendlinessCell
from itb.study.profile_margin.cells import MarginCell
from itb.study.profile_pair.cells import PairCell, PlannedFlow
from itb.study.profile_stage0.cells import CpuCell, RateCell, Stage0Cell
from itb.suite import benchmark, windows
from itb.suite.realisation import BenchCell
from itb.sweep.index import SweepIndex, read_index
from itb.sweep.sweep import Sweep, digest

CREATED = "2026-11-26T09:00:00+0100"


def old_layout(
    kind: str, key: dict, cells: list[tuple[str, dict]], order: list, status: str = "complete"
) -> dict:
    """The index as `Sweep.open` wrote it before it was typed: the plan's info dict of
    each cell between its name and its paths."""
    return {
        "format": 1,
        "kind": kind,
        "digest": digest(key),
        "args": key,
        "created": CREATED,
        "cells": [
            {"name": name, **info, "scenario": f"scenarios/{name}.toml", "run": f"cells/{name}"}
            for name, info in cells
        ],
        "order": order,
        "status": status,
    }


def write_old(sweep: Sweep, data: dict) -> None:
    sweep.out.mkdir(parents=True, exist_ok=True)
    rundir.write_json(sweep.index_path, data)  # as the old code wrote it


MARGIN_INFO = {
    "rtt_ms": 20.0,
    "margin": 0.05,
    "target_bps": 950_000_000.0,
    "input_bps": 908_569_246,
    "volume": 7_125_000_000,
    "predicted_s": 60.0,
    "extrapolated": False,
}


def test_an_index_round_trips_through_its_file(tmp_path):
    cell = MarginCell(name="rtt20ms-m5", **MARGIN_INFO)
    index = SweepIndex[MarginCell](
        format=1,
        kind="profile-margin",
        digest="0123456789",
        args={"rtts_ms": [20.0]},
        created=CREATED,
        cells=[cell],
        order=[("rtt20ms-m5", 1), ("rtt20ms-m5", 2)],
        status="running",
    )
    path = tmp_path / "profile-margin.json"
    index.write(path)
    # flat, the name first and the paths (from the name) last, as ITB always wrote it
    assert json.loads(path.read_text()) == {
        "format": 1,
        "kind": "profile-margin",
        "digest": "0123456789",
        "args": {"rtts_ms": [20.0]},
        "created": CREATED,
        "cells": [
            {
                "name": "rtt20ms-m5",
                **MARGIN_INFO,
                "scenario": "scenarios/rtt20ms-m5.toml",
                "run": "cells/rtt20ms-m5",
            }
        ],
        "order": [["rtt20ms-m5", 1], ["rtt20ms-m5", 2]],
        "status": "running",
    }
    assert list(json.loads(path.read_text())["cells"][0])[-2:] == ["scenario", "run"]
    back = read_index(path, SweepIndex[MarginCell])
    assert back == index and back.cells[0].run == "cells/rtt20ms-m5"
    assert back.order[1] == ("rtt20ms-m5", 2)


def test_an_index_written_before_the_change_reads_back_typed(tmp_path):
    flows = [
        {
            "flow": "A",
            "input_steps": [[0, 478_011_000], [20_000_000, 286_806_600]],
            "volume": 2_250_000_000,
            "predicted_s": 60.0,
            "extrapolated": False,
        },
        {
            "flow": "B",
            "input_steps": [[0, 95_602_200], [20_000_000, 286_806_600]],
            "volume": 2_250_000_000,
            "predicted_s": 60.0,
            "extrapolated": True,
        },
    ]
    key = {"combos": ["nocc-pacing+udt"], "margins": [0.1]}
    sweep = Sweep(tmp_path / "s", "profile-pair", SweepIndex[PairCell], key, [], 2, 1)
    old = old_layout(
        "profile-pair",
        key,
        [
            (
                "nocc-pacing+udt-m10",
                {
                    "combo": "nocc-pacing+udt",
                    "mechanisms": ["nocc-pacing", "udt"],
                    "margin": 0.1,
                    "rtt_ms": 12.0,
                    "flows": flows,
                },
            )
        ],
        [["nocc-pacing+udt-m10", 1], ["nocc-pacing+udt-m10", 2]],
        status="incomplete",
    )
    write_old(sweep, old)
    index = sweep.open()  # the same arguments: resumed
    (cell,) = index.cells
    assert isinstance(cell, PairCell) and cell.run == "cells/nocc-pacing+udt-m10"
    assert cell.flows[1] == PlannedFlow(
        flow="B",
        input_steps=[(0, 95_602_200), (20_000_000, 286_806_600)],
        volume=2_250_000_000,
        predicted_s=60.0,
        extrapolated=True,
    )
    assert index.status == "incomplete" and index.order == [
        ("nocc-pacing+udt-m10", 1),
        ("nocc-pacing+udt-m10", 2),
    ]
    # written back (a resumed sweep's end) with exactly what it was read with
    index.status = "complete"
    index.write(sweep.index_path)
    assert json.loads(sweep.index_path.read_text()) == {**old, "status": "complete"}


def test_a_stage0_index_reads_each_cell_as_its_part(tmp_path):
    key = {"parts": ["cpu", "files"]}
    sweep = Sweep(tmp_path / "s", "profile-stage0", SweepIndex[Stage0Cell], key, [], 1, 1)
    old = old_layout(
        "profile-stage0",
        key,
        [
            (
                "stage0-cpu-udt-rtt0",
                {
                    "part": "cpu",
                    "mechanism": "udt",
                    "rtt_ms": 0.0,
                    "inputs": {"x1": 100_000_000, "x2": 500_000_000},
                },
            ),
            (
                "stage0-files-d2m",
                {"part": "files", "label": "d2m", "mechanism": "reno", "streams": 1},
            ),
        ],
        [["stage0-files-d2m", 1], ["stage0-cpu-udt-rtt0", 1]],
    )
    write_old(sweep, old)
    cpu, files = sweep.open().cells
    assert isinstance(cpu, CpuCell) and cpu.inputs == {"x1": 100_000_000, "x2": 500_000_000}
    assert isinstance(files, RateCell) and (files.label, files.streams) == ("d2m", 1)
    sweep.index.write(sweep.index_path)
    assert json.loads(sweep.index_path.read_text()) == old  # no key of the other part added


SCALE = {
    "cls": "F",
    "factor": 100.0,
    "volume_factor": 48.0,
    "capacity_bps": 100_000_000,
    "access_bps": 10_000_000.0,
    "transfer_time_s": 5.0,
    "source": "--capacity",
    "mode": "rate",
    "rtt_ms": 20.0,
    "bu_volume_bytes": 6_250_000,
}


def _transfers(rows):
    return pd.DataFrame(
        [
            {
                "repetition": r,
                "direction": "forward",
                "cc": cc,
                "streams": 1,
                "completion_s": t,
                "ok": True,
            }
            for r, cc, t in rows
        ]
    )


def test_a_friendliness_study_begun_before_resumes_and_is_analysed(tmp_path):
    key = {"ccs": ["cubic"], "reference": "reno", "c_g": [1.5]}
    realisation = {
        "forward": "15 sources of C_a",
        "reverse": "none",
        "volume_bytes_per_source": 6_250_000,
        "spacing_s": 0.0,
        "start_span_s": 0.0,
        "notes": ["every pair has one RTT"],
        "scale": SCALE,
    }
    info = {"reference": "reno", "c_g": 1.5, "c_g_realised": 1.5, "realisation": realisation}
    old = old_layout(
        "friendliness",
        key,
        [
            ("cubic-vs-reno-cg1.5", {"tested": "cubic", **info}),
            ("reno-alone-cg1.5", {"tested": "alone", **info}),
        ],
        [["reno-alone-cg1.5", 1], ["cubic-vs-reno-cg1.5", 1]],
    )
    sweep = Sweep(tmp_path / "s", "friendliness", SweepIndex[FriendlinessCell], key, [], 1, 1)
    write_old(sweep, old)
    sweep.open()
    mixed, alone = sweep.index.cells
    assert mixed.realisation.scale.capacity_bps == 100_000_000
    assert mixed.realisation.model_extra == {
        "volume_bytes_per_source": 6_250_000,
        "spacing_s": 0.0,
        "start_span_s": 0.0,
    }
    # one repetition: cubic 10 s and 12 s, reno 15 s next to it, 12 s alone
    for cell, rows in (
        (mixed, [(1, "cubic", 10.0), (1, "cubic", 12.0), (1, "reno", 15.0)]),
        (alone, [(1, "reno", 12.0)]),
    ):
        (tmp_path / "s" / cell.run).mkdir(parents=True)
        _transfers(rows).to_parquet(tmp_path / "s" / cell.run / "transfers.parquet")
    (p,) = friendliness_analysis(sweep).points
    assert (p.name, p.tested, p.c_g_realised) == ("cubic-vs-reno-cg1.5", "cubic", 1.5)
    assert p.tested_group.t_mean == 11.0 and p.reference_group.t_mean == 15.0
    assert p.ratio == pytest.approx(15 / 11) and p.reference_alone.t_mean == 12.0
    # the sources each group ran with: its rows' streams
    assert (p.tested_group.sources, p.reference_group.sources, p.reference_alone.sources) == (
        2,
        1,
        1,
    )


def test_a_benchmark_from_before_windows_reads_with_its_defaults(tmp_path):
    key = {"apps": ["BU"], "classes": ["F"], "ccs": ["reno"]}
    scale = {k: v for k, v in SCALE.items() if k not in ("mode", "rtt_ms")}  # not recorded then
    realisation = {
        "forward": "15 sources",
        "reverse": "none",
        "notes": [],
        "scale": scale,
        "cls": {
            "name": "F",
            "k": 10,
            "rtt_ms": 20.0,
            "c_g": 1.5,
            "r": 0.0,
            "meaning": "congested",
            "forward_sources": 15,
            "reverse_sources": 0,
        },
        "app": "BU",
        "variant": None,
        "cc": "reno",
    }
    old = old_layout(
        "bench",
        key,
        [
            (
                "BU-F-reno",
                {
                    "app": "BU",
                    "variant": None,
                    "class": "F",
                    "cc": "reno",
                    "realisation": realisation,
                },
            )
        ],
        [["BU-F-reno", 1]],
    )
    sweep = Sweep(tmp_path / "b", "bench", SweepIndex[BenchCell], key, [], 1, 1)
    write_old(sweep, old)
    (cell,) = sweep.open().cells
    assert (cell.label, cell.cls, cell.cc) == ("BU", "F", "reno")
    r = cell.realisation
    assert r.window is None and r.scale.mode == "rate" and r.scale.rtt_ms is None
    assert windows.warnings_of([r]) == []
    (row,) = benchmark.summarise(sweep).rows  # nothing ran: no repetition
    assert (row.cls, row.repetitions, row.scaling, row.testbed_rtt_ms) == ("F", 0, "rate", None)
    assert row.window_segments is None and row.window_warning is False
    sweep.index.write(sweep.index_path)
    assert json.loads(sweep.index_path.read_text()) == old  # no default written in


def _margin_index(tmp_path, cells: list[dict], **top) -> tuple[Sweep, dict]:
    key = {"margins": [0.05]}
    sweep = Sweep(tmp_path / "s", "profile-margin", SweepIndex[MarginCell], key, [], 1, 1)
    data = old_layout("profile-margin", key, [], []) | top
    data["cells"] = cells
    write_old(sweep, data)
    return sweep, data


def _refused(sweep: Sweep) -> str:
    with pytest.raises(RunDirError) as e:
        sweep.open()
    assert e.value.exit_code == 2
    return str(e.value)


def test_a_cell_missing_a_label_is_refused_naming_the_file_and_the_field(tmp_path):
    good = {
        "name": "rtt20ms-m5",
        **MARGIN_INFO,
        "scenario": "scenarios/rtt20ms-m5.toml",
        "run": "cells/rtt20ms-m5",
    }
    bad = {k: v for k, v in good.items() if k != "margin"} | {"name": "rtt20ms-m10"}
    sweep, _ = _margin_index(tmp_path, [good, bad])
    assert _refused(sweep) == f"{sweep.index_path}: field cells[1].margin: missing"


def test_a_label_of_another_type_or_a_key_the_cell_lacks_is_refused(tmp_path):
    good = {"name": "rtt20ms-m5", **MARGIN_INFO}
    sweep, _ = _margin_index(tmp_path, [good | {"rtt_ms": "20"}])
    assert _refused(sweep) == (
        f"{sweep.index_path}: field cells[0].rtt_ms: input should be a valid number, got '20'"
    )
    sweep, _ = _margin_index(tmp_path, [good | {"colour": "red"}])
    assert _refused(sweep) == (
        f"{sweep.index_path}: field cells[0].colour: extra inputs are not permitted, got 'red'"
    )


def test_a_stage0_cell_is_checked_as_its_part(tmp_path):
    key = {"parts": ["cpu"]}
    sweep = Sweep(tmp_path / "s", "profile-stage0", SweepIndex[Stage0Cell], key, [], 1, 1)
    write_old(
        sweep,
        old_layout(
            "profile-stage0",
            key,
            [("stage0-cpu-udt-rtt0", {"part": "cpu", "mechanism": "udt", "rtt_ms": 0.0})],
            [],
        ),
    )
    assert _refused(sweep) == f"{sweep.index_path}: field cells[0].cpu.inputs: missing"


def test_an_index_of_format_2_is_refused_naming_the_version(tmp_path):
    sweep, _ = _margin_index(tmp_path, [], format=2)
    assert _refused(sweep) == (
        f"{sweep.index_path}: field format: 2 is not a format this ITB reads (it reads 1)"
    )


def test_an_index_that_is_not_one_is_refused(tmp_path):
    sweep, _ = _margin_index(tmp_path, [])
    sweep.index_path.write_text('{"format": 1, "kind": "profile-margin"')
    assert "not valid JSON" in _refused(sweep)
    sweep.index_path.write_text("[1, 2]")
    assert _refused(sweep) == (
        f"{sweep.index_path}: holds a JSON array, where a sweep's index "
        "(<kind>.json) is a JSON object; the file is damaged or was not "
        "written by ITB"
    )
    sweep, data = _margin_index(tmp_path, [], status="done")
    assert _refused(sweep).startswith(
        f"{sweep.index_path}: field status: input should be "
        "'running', 'complete' or 'incomplete', got 'done'"
    )


def test_other_arguments_are_named_before_the_cells_are_read(tmp_path):
    sweep, _ = _margin_index(tmp_path, [{"name": "x", "unknown": 1}])
    other = Sweep(sweep.out, "profile-margin", SweepIndex[MarginCell], {"margins": [0.1]}, [], 1, 1)
    with pytest.raises(ScenarioError, match=r'other arguments \(\{"margins": \[0.05\]\}\)'):
        other.open()


def test_a_sweep_not_open_has_no_index(tmp_path):
    sweep = Sweep(tmp_path / "s", "profile-margin", SweepIndex[MarginCell], {}, [], 1, 1)
    with pytest.raises(RuntimeError, match="not open"):
        sweep.index  # noqa: B018
