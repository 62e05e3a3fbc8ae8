"""HighSpeed's AIMD table as the eBPF program uses it: RFC 3649 Appendix B's windows with
b(w) from the RFC's formula in 1/256 (the differential test checks it against Linux's)."""

import contextlib
import importlib.util
import io
import math
from pathlib import Path

import pytest

from itb.cc import highspeed

BPF = Path(__file__).resolve().parents[2] / "bpf"


def test_rows_follow_the_rfc():
    rows = highspeed.rows()
    assert len(rows) == 72 and rows[0] == (38, 128)  # Low_Window: b = 1/2
    ws = [w for w, _ in rows]
    assert ws == sorted(set(ws)) and ws[-3] < 83000 < ws[-1]  # ends past High_Window
    for w, b in rows:
        assert b == math.floor(highspeed.b_of(w) * 256)
    assert rows[-1][1] / 256 == pytest.approx(0.1, abs=0.01)  # High_Decrease
    # RFC 3649 section 5: a(w) = w^2 p(w) 2 b(w) / (2 - b(w)), p(w) = 0.078 / w^1.2; row i
    # is where a(w) reaches i + 1 segments (within the RFC's rounding, 1 %)
    for i, (w, _) in enumerate(rows[1:], start=1):
        b = highspeed.b_of(w)
        assert w * w * (0.078 / w**1.2) * 2 * b / (2 - b) == pytest.approx(i + 1, rel=0.01)


def test_the_row_linux_applies():
    # at or below 38: row 0 (halve); 39..118: row 1; beyond the last window: the last row
    assert [highspeed.row_of(w) for w in (2, 38, 39, 118, 119, 89053, 10**6)] == [
        0,
        0,
        1,
        1,
        2,
        71,
        71,
    ]
    assert highspeed.decrease(38) == 0.5 and highspeed.decrease(100) == 112 / 256


def test_committed_header_is_the_generators_output():
    spec = importlib.util.spec_from_file_location("gen", BPF / "gen_highspeed_table.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        gen.main()
    assert (BPF / "highspeed_table.h").read_text() == out.getvalue()
