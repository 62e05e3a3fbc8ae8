"""Raw logs cut short by a stopped process still make tables (the cut line is dropped)."""

import json

import pandas as pd
import pytest

from itb.engine.collect import row_intervals, sample_frames

HEADER = "t_ns,stream,cwnd,ssthresh,rtt_us,total_retrans,pacing_rate_bps,delivery_rate_bps"


def test_a_line_cut_by_a_stop_is_dropped(tmp_path):
    rd = tmp_path / "rep-001"
    (rd / "nodes" / "l1").mkdir(parents=True)
    (rd / "nodes" / "r1").mkdir(parents=True)
    (rd / "nodes" / "l1" / "bg.send.csv").write_text(
        f"{HEADER}\n100,0,10,20,3000,0,1000,900\n200,0,11,20,3100,0,1000,950\n300,0")
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
