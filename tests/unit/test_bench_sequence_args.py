"""`itb bench`'s sequence options: --max-repeat and --budget end a sequence, --repeat fixes
the repetitions and refuses them; the budget's units; what the arguments' key keeps (the
directory: a longer budget continues the same benchmark)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from itb.analysis.sequential import Design, design_of
from itb.errors import ScenarioError
from itb.study.bench.args import parse_budget
from itb.suite import benchmark
from itb.suite.classes import CLASSES
from itb.suite.scaling import make_scale

BASE = ["bench", "--app", "BU", "--class", "B", "--cc", "reno,cubic", "--capacity", "10Mbit"]


def _args(monkeypatch, *extra: str, tmp_path) -> benchmark.BenchArgs | Exception:
    from itb.cli import app

    ran: list = []
    monkeypatch.setattr(benchmark, "sweep_of", lambda args, *a, **k: ran.append(args))
    res = CliRunner().invoke(app, [*BASE, *extra, "--out", str(tmp_path / "b")])
    return ran[0] if ran else res.exception


def test_without_repeat_the_benchmark_repeats_until_decided_at_most_max_repeat(
    monkeypatch, tmp_path
):
    a = _args(monkeypatch, tmp_path=tmp_path)
    assert isinstance(a, benchmark.BenchArgs)
    assert a.sequential and a.repeat == 10 and a.budget_s is None
    assert a.design == Design.adaptive(10) and a.design.looks == (3, 5, 7, 10)
    a = _args(monkeypatch, "--max-repeat", "20", "--budget", "1.5h", tmp_path=tmp_path)
    assert a.repeat == 20 and a.budget_s == 5400 and a.design.looks == (3, 5, 7, 10, 14, 20)
    a = _args(monkeypatch, "--repeat", "4", tmp_path=tmp_path)
    assert not a.sequential and a.design == Design.fixed(4)


def test_repeat_refuses_a_sequence_option_before_anything_is_written(monkeypatch, tmp_path):
    for extra, flag in ((("--max-repeat", "5"), "--max-repeat"), (("--budget", "1h"), "--budget")):
        e = _args(monkeypatch, "--repeat", "3", *extra, tmp_path=tmp_path)
        assert isinstance(e, ScenarioError) and e.exit_code == 2 and flag in str(e)
        assert not (tmp_path / "b").exists()


def test_a_budget_takes_seconds_minutes_or_hours():
    assert (parse_budget("900s"), parse_budget("20min"), parse_budget("2h")) == (900, 1200, 7200)
    assert parse_budget(" 0.5 h ") == 1800
    for bad in ("20", "20 m", "-5min", "0s", "soon"):
        with pytest.raises(ScenarioError, match="--budget"):
            parse_budget(bad)


def test_the_key_holds_the_design_not_the_budget():
    scale = make_scale(factor=None, capacity_bps=10**7, transfer_time_s=2.0)
    seq = benchmark.BenchArgs(("BU",), (CLASSES["B"],), ("reno", "cubic"), 10, 1, 1.0, scale,
                              sequential=True, budget_s=60.0)  # fmt: skip
    longer = benchmark.BenchArgs(("BU",), (CLASSES["B"],), ("reno", "cubic"), 10, 1, 1.0, scale,
                                 sequential=True, budget_s=600.0)  # fmt: skip
    fixed = benchmark.BenchArgs(("BU",), (CLASSES["B"],), ("reno", "cubic"), 10, 1, 1.0, scale)
    assert seq.key() == longer.key() and seq.key()["design"] == "sequential"
    assert "design" not in fixed.key()  # (a fixed design's key as before sequences existed)
    assert design_of(seq.key()) == Design.adaptive(10) and design_of(fixed.key()) == Design.fixed(
        10
    )
    quick = benchmark.BenchArgs(("BU",), (CLASSES["B"],), ("reno",), 4, 1, 1.0, scale,
                                sequential=True, first_look=4)  # fmt: skip
    assert quick.key()["first_look"] == 4 and design_of(quick.key()).looks == (4,)
