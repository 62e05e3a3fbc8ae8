"""`itb bench` as a registered study: its options are its arguments' fields, and a
directory made by `itb bench` before it was a study is the one the same command resumes
(the digests below were printed by the previous command for the same options)."""

from __future__ import annotations

from typer.testing import CliRunner

from itb.study.bench import STUDY
from itb.study.bench.args import BenchStudyArgs
from itb.study.registry import OwnOutput, Study, studies
from itb.suite import benchmark
from itb.sweep.sweep import digest


def _key_of(monkeypatch, tmp_path, *options: str) -> str:
    from itb.cli import app

    ran: list = []
    monkeypatch.setattr(benchmark, "sweep_of", lambda args, *a, **k: ran.append(args))
    CliRunner().invoke(app, ["bench", *options, "--out", str(tmp_path / "b")])
    assert ran, "the benchmark was not planned"
    return digest(ran[0].key())


def test_the_same_options_name_the_directory_they_named_before_bench_was_a_study(
    monkeypatch, tmp_path
):
    assert (
        _key_of(monkeypatch, tmp_path, "--app", "BU", "--class", "B", "--cc", "reno,cubic",
                "--capacity", "10Mbit")
        == "f068e34183"
    )  # fmt: skip
    assert _key_of(monkeypatch, tmp_path, "--scale", "4", "--repeat", "5") == "7c57a6f22f"


def test_the_benchmark_is_a_study_of_the_registry_with_its_own_output():
    assert ("bench",) in {r.study.name for r in studies()}
    assert isinstance(STUDY, Study) and isinstance(STUDY, OwnOutput)


def test_quick_fills_in_only_the_options_not_given():
    quick = BenchStudyArgs(quick=True, capacity_bps="10Mbit")
    assert quick.classes is not None and [c.name for c in quick.classes] == ["B", "F"]
    assert (quick.transfer_time, quick.spacing, quick.pa_messages) == (2.0, 0.25, 8)
    assert quick.bench.budget_s == 600 and quick.bench.sequential and quick.bench.repeat == 10
    given = BenchStudyArgs(quick=True, capacity_bps="10Mbit", classes="A", spacing=0.0)
    assert [c.name for c in given.classes or ()] == ["A"] and given.spacing == 0.0
    plain = BenchStudyArgs(capacity_bps="10Mbit")
    assert (plain.transfer_time, plain.spacing, plain.pa_messages) == (240.0, 1.0, 200)
    assert len(plain.classes or ()) == 12 and plain.bench.budget_s is None
