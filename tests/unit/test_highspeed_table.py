"""RFC 3649's a(w)/b(w) table, as generated for the HighSpeed eBPF program."""

import contextlib
import importlib.util
import io
from pathlib import Path

import pytest

BPF = Path(__file__).resolve().parents[2] / "bpf"


@pytest.fixture(scope="module")
def gen():
    spec = importlib.util.spec_from_file_location("gen_highspeed_table", BPF / "gen_highspeed_table.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_rows_follow_the_rfc_formulas(gen):
    rows = gen.rows()
    assert rows[0] == (38, 256, 128)  # Low_Window: standard TCP, a = 1, b = 1/2
    ws = [w for w, _, _ in rows]
    assert ws == sorted(set(ws)) and ws[-1] > 83000 > ws[-2]  # ends just past High_Window
    assert all(1.05 < b / a < 1.08 for a, b in zip(ws[1:], ws[2:]))  # 6 % apart
    for w, a, b in rows[1:]:
        assert a == max(256, round(gen.a_of(w) * 256))
        assert b == round(gen.b_of(w) * 256)
    # RFC 3649 Appendix B (whole segments) has a = 2 from 118 and a = 70 near the top;
    # the fractional rows agree within the row spacing
    for w, a in ((118, 2), (79082, 70)):
        row = max(r for r in rows if r[0] <= w)
        assert row[1] / 256 == pytest.approx(a, rel=0.1)
    assert rows[-1][2] / 256 == pytest.approx(0.1, abs=0.005)  # High_Decrease
    # p(w) = 0.078 / w^1.2 is the RFC's rounded inverse of w = 0.12 / p^0.835 (within 5 %)
    for w in (1000, 10000, 80000):
        a, b = gen.a_of(w), gen.b_of(w)
        p = 0.078 / w ** 1.2
        assert w == pytest.approx(0.12 / p ** 0.835, rel=0.05)
        assert a == pytest.approx(w * w * p * 2 * b / (2 - b))


def test_committed_header_is_the_generators_output(gen):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        gen.main()
    assert (BPF / "highspeed_table.h").read_text() == out.getvalue()
