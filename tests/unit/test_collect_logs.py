"""Raw logs cut short by a stopped process still make tables (the cut line is dropped)."""

import json
import math

import pandas as pd
import pytest

from itb.analysis.logs import (
    build_tables,
    row_intervals,
    sample_frames,
    sent_columns,
    transfer_rows,
)
from itb.scenario import load_testbed

HEADER = "t_ns,stream,cwnd,ssthresh,rtt_us,total_retrans,pacing_rate_bps,delivery_rate_bps"


def test_a_line_cut_by_a_stop_is_dropped(tmp_path):
    rd = tmp_path / "rep-001"
    (rd / "nodes" / "l1").mkdir(parents=True)
    (rd / "nodes" / "r1").mkdir(parents=True)
    (rd / "nodes" / "l1" / "bg.send.csv").write_text(
        f"{HEADER}\n100,0,10,20,3000,0,1000,900\n200,0,11,20,3100,0,1000,950\n300,0"
    )
    (rd / "nodes" / "r1" / "bg.recv.csv").write_text("t_ns,bytes,streams_open\n100,1000,1\n200,")
    events = [{"kind": "transfer", "id": "bg", "src": "l1", "dst": "r1"}]
    frames = sample_frames(tmp_path, 1, 0.1, events)
    goodput, tcp = frames
    assert list(goodput["t_ns"]) == [100] and list(goodput["bytes"]) == [1000.0]
    assert list(tcp["t_ns"]) == [100, 200] and list(tcp["cwnd"]) == [10, 11]
    assert json.dumps(list(tcp["stream"])) == "[0, 0]"


def test_goodput_rows_are_divided_by_the_time_they_cover():
    # ticks every 100 ms; a late wake-up of 3 ms stays on the grid; two missed ticks make
    # a 300 ms row; the last row ends 40 ms after the previous tick (the last byte)
    t = pd.Series([100, 203, 300, 600, 640], dtype="int64") * 1_000_000
    assert row_intervals(t, 0.1) == pytest.approx([0.1, 0.1, 0.1, 0.3, 0.04])


def test_sent_columns_frame_every_segment():
    # 1 000 000 B of payload once + 2 896 B retransmitted, in 700 segments whose IP + TCP
    # headers make 700 × 52 B; each frame adds a 14-byte Ethernet header:
    # 1 002 896 + 36 400 + 9 800 = 1 049 096 B on the wire
    sent = {
        "bytes": 1_002_896,
        "retrans_bytes": 2_896,
        "segments": 700,
        "data_segments": 693,
        "header_bytes": 36_400,
    }
    assert sent_columns({"sent": sent}) == {
        "bytes_sent": 1_002_896,
        "bytes_retrans": 2_896,
        "segs_out": 700,
        "wire_bytes": 1_049_096,
    }
    for send in ({}, {"sent": None}, {"sent": sent | {"header_bytes": None}}):
        assert all(math.isnan(v) for v in sent_columns(send).values())


def test_transfer_rows_keep_the_link_and_the_pacing_cap_apart(tmp_path):
    topo = load_testbed(None, {"rate": "1Gbit", "access_rate": "100Mbit"})
    rd = tmp_path / "rep-001"
    for node in ("l1", "r1", "l2", "r2"):
        (rd / "nodes" / node).mkdir(parents=True)
    (rd / "result.json").write_text(json.dumps({"zero_ns": 0}))
    sent = {
        "bytes": 1_000_000,
        "retrans_bytes": 0,
        "segments": 700,
        "data_segments": 691,
        "header_bytes": 36_400,
    }
    (rd / "nodes" / "l1" / "a.send.json").write_text(
        json.dumps({"ok": True, "start_ns": 1_000, "sent": sent})
    )
    (rd / "nodes" / "l2" / "b.send.json").write_text(json.dumps({"ok": True, "start_ns": 1_000}))
    for node, tid in (("r1", "a"), ("r2", "b")):
        (rd / "nodes" / node / f"{tid}.recv.json").write_text(
            json.dumps({"ok": True, "bytes": 1_000_000, "last_byte_ns": 2_000})
        )
    events = [
        {
            "kind": "transfer",
            "id": "a",
            "src": "l1",
            "dst": "r1",
            "volume": 1_000_000,
            "direction": "forward",
            "at_us": 0,
            "rate_bps": 50_000_000,
        },
        {
            "kind": "transfer",
            "id": "b",
            "src": "l2",
            "dst": "r2",
            "volume": 1_000_000,
            "direction": "forward",
            "at_us": 0,
        },
    ]
    a, b = transfer_rows(tmp_path, 1, topo, events)
    # a: 100 Mbit/s access link (a wire rate) and paced at 50 Mbit/s (a payload rate)
    assert (a["access_link_bps"], a["pacing_cap_bps"], a["access_rate_bps"]) == (1e8, 5e7, 5e7)
    assert a["wire_bytes"] == 1_000_000 + 36_400 + 14 * 700 and a["segs_out"] == 700
    # b: no pacing; its sender left no counts (an older flow binary)
    assert b["access_link_bps"] == 1e8 and math.isnan(b["pacing_cap_bps"])
    assert math.isnan(b["wire_bytes"]) and b["ok"] and b["completion_s"] == 1e-6


def test_an_interrupted_repetition_stays_out_of_the_tables(tmp_path):
    """The user stopped it (a resume runs it again): it is not a measurement; a failed one
    is, and its transfer counts as not completed."""
    topo = load_testbed(None, {"rate": "1Gbit"})
    events = [
        {
            "kind": "transfer",
            "id": "a",
            "src": "l1",
            "dst": "r1",
            "volume": 1_000_000,
            "direction": "forward",
            "at_us": 0,
        }
    ]
    for r, status in ((1, "ok"), (2, "interrupted"), (3, "failed")):
        rd = tmp_path / f"rep-00{r}"
        for node in ("l1", "r1"):
            (rd / "nodes" / node).mkdir(parents=True)
        (rd / "events.json").write_text(json.dumps(events))
        (rd / "result.json").write_text(json.dumps({"zero_ns": 0, "status": status}))
        if status == "ok":
            (rd / "nodes" / "l1" / "a.send.json").write_text(
                json.dumps({"ok": True, "start_ns": 1_000})
            )
            (rd / "nodes" / "r1" / "a.recv.json").write_text(
                json.dumps({"ok": True, "bytes": 1_000_000, "last_byte_ns": 2_000})
            )
    tr = build_tables(tmp_path, topo, 0.1)["transfers"]
    assert list(tr["repetition"]) == [1, 3]
    assert list(tr["ok"]) == [True, False]
