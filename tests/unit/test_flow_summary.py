"""flow's summaries and ITB's models of them have the same fields and format: both are
held to native/flow/summary-format.json (flow's own tests hold its Summary structs to it
too). A summary without `format` (a flow from before it) reads as format 1; a newer
format is refused, named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from itb.rundir import flow_summary as F
from itb.rundir.records import RunDirError, read_record

SPEC = json.loads(
    (Path(__file__).resolve().parents[2] / "native" / "flow" / "summary-format.json").read_text()
)


@pytest.mark.parametrize("role", ["send", "recv", "udp-send", "udp-recv"])
def test_each_roles_model_has_the_fields_flow_writes(role):
    assert set(F.BY_ROLE[role].model_fields) == set(SPEC[role])


def test_the_format_is_the_one_flow_writes():
    assert F.SUMMARY_FORMAT == SPEC["format"] == 1


def write(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_a_summary_from_before_the_format_field_reads_as_format_1(tmp_path):
    s = read_record(
        write(tmp_path / "t.recv.json", {"role": "recv", "bytes": 10, "ok": True}), F.RecvSummary
    )
    assert (s.format, s.bytes) == (1, 10)


def test_a_summary_of_a_newer_format_is_refused_naming_it(tmp_path):
    path = write(tmp_path / "t.send.json", {"format": 2, "role": "send", "bytes": 10})
    with pytest.raises(RunDirError) as e:
        read_record(path, F.SendSummary)
    assert str(e.value) == (
        f"{path}: field format: 2 is not a format this ITB reads (it reads "
        "1); written by another flow: report the run with the ITB that "
        "made it"
    )


def test_a_send_summary_as_flow_writes_it_reads_with_its_blocks(tmp_path):
    data = {
        "format": 1,
        "role": "send",
        "streams": 2,
        "cc": "cubic",
        "cc_in_use": "cubic",
        "bytes": 1000,
        "start_ns": 5,
        "end_ns": 9,
        "connect_ns": 4,
        "goodput_bps": 2e12,
        "total_retrans": 0,
        "sent": {
            "bytes": 1000,
            "retrans_bytes": 0,
            "segments": 3,
            "data_segments": 1,
            "header_bytes": 156,
        },
        "rate_bps": None,
        "rate_changes": [],
        "cpu": {"user_s": 0, "system_s": 0.25},
        "ok": True,
        "error": None,
    }
    s = read_record(write(tmp_path / "t.send.json", data), F.SendSummary)
    assert s.sent.header_bytes == 156 and s.cpu.system_s == 0.25 and s.profile is None
