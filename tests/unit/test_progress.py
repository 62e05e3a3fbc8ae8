"""The status line of a running repetition (itb.engine.progress): its clock, its count of
finished transfers and each unfinished one's bytes and ETA, read from the receivers' logs."""

from __future__ import annotations

from itb.engine import progress
from itb.engine.processes import ProcSpec

ZERO_NS = 1_000_000_000_000  # the timeline's zero on the monotonic clock


def receiver(event: str, expected: int, log: str) -> ProcSpec:
    return ProcSpec(
        id=f"{event}.recv",
        event=event,
        role="recv",
        node="r1",
        at_us=0,
        argv=("flow", "recv", "--bytes", str(expected)),
        stdout="",
        stderr="",
        files={"log": log},
    )


def at(monkeypatch, ns: int) -> None:
    monkeypatch.setattr(progress.time, "monotonic_ns", lambda: ns)


def test_a_clock_read_before_the_timeline_starts_says_starting_not_a_negative_time(
    monkeypatch, tmp_path
):
    p = progress.TransferProgress([receiver("t1", 10_000_000, str(tmp_path / "t1.csv"))])
    at(monkeypatch, ZERO_NS - 100_000_000)  # 0.1 s before the zero (the prelude)
    line = p.line(ZERO_NS)
    assert line == "starting · 0/1 transfers done"
    assert "-" not in line


def test_at_the_zero_and_after_the_clock_counts_seconds_and_the_bytes_received(
    monkeypatch, tmp_path
):
    log = tmp_path / "t1.csv"
    p = progress.TransferProgress([receiver("t1", 10_000_000, str(log))])
    at(monkeypatch, ZERO_NS)
    assert p.line(ZERO_NS) == "t =    0.0 s · 0/1 transfers done"
    log.write_text("t_ns,bytes\n1,2000000\n2,2000000\n")  # 4 MB of 10 by 2.5 s
    at(monkeypatch, ZERO_NS + 500_000_000)  # first bytes seen at 0.5 s
    p.line(ZERO_NS)
    at(monkeypatch, ZERO_NS + 2_500_000_000)
    # 4 MB in the 2 s since the first bytes were seen: 2 MB/s, 6 MB left: 3 s
    assert p.line(ZERO_NS) == "t =    2.5 s · 0/1 transfers done · t1 4.0/10 MB ETA 3 s"
