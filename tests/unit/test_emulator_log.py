"""The emulator's rotated log as the engine reads it: only the files a window needs, in
order, read again when linkem rotates meanwhile, consumed segments deleted, rows
rotated away reported rather than silently missing."""

from __future__ import annotations

import pytest

from itb.emulation import monitor

HEADER = ",".join(monitor.FIELDS) + "\n"


def rows(t0: int, n: int) -> str:
    return "".join(f"{t},100,1,0,0,0,0,0,0\n" for t in range(t0, t0 + n))


def write_log(d, segments: list[tuple[int, int]], live: tuple[int, int] | None):
    """Closed segments 1.. then the live file, each (first t, row count)."""
    for i, (t0, n) in enumerate(segments, start=1):
        (d / f"linkem-ab.{i:06d}.csv").write_text(HEADER + rows(t0, n))
    if live is not None:
        (d / "linkem-ab.csv").write_text(HEADER + rows(*live))


def test_files_in_order_live_last_and_foreign_names_ignored(tmp_path):
    write_log(tmp_path, [(0, 10)] * 11, (110, 5))
    (tmp_path / "linkem-ab.old.csv").write_text("not a segment")
    (tmp_path / "linkem-ba.000001.csv").write_text(HEADER)
    names = [p.name for p in monitor.log_files(tmp_path, "ab")]
    assert names[:3] == ["linkem-ab.000001.csv", "linkem-ab.000002.csv", "linkem-ab.000003.csv"]
    assert names[-2:] == ["linkem-ab.000011.csv", "linkem-ab.csv"]
    assert len(names) == 12


def test_a_window_spanning_segments_is_whole_and_reads_only_what_it_needs(tmp_path, monkeypatch):
    write_log(tmp_path, [(0, 100), (100, 100), (200, 100)], (300, 50))
    read = []
    real = monitor.pd.read_csv
    monkeypatch.setattr(monitor.pd, "read_csv", lambda p: read.append(p.name) or real(p))
    df = monitor.read_window(tmp_path, "ab", 150, 260)
    assert read == ["linkem-ab.000002.csv", "linkem-ab.000003.csv"]
    assert df["t_ns"].tolist() == list(range(150, 300))
    read.clear()
    df = monitor.read_window(tmp_path, "ab", 290, 320)
    assert read == ["linkem-ab.000003.csv", "linkem-ab.csv"]
    assert df["t_ns"].tolist() == list(range(290, 350))


def test_rows_rotated_away_are_reported(tmp_path):
    write_log(tmp_path, [(100, 100)], (200, 10))
    with pytest.raises(monitor.LogGone, match="before 100"):
        monitor.read_window(tmp_path, "ab", 50, 150)
    assert len(monitor.read_window(tmp_path, "ab", 100, 150)) == 100  # the live file starts later


def test_a_rotation_during_the_read_is_read_again(tmp_path, monkeypatch):
    write_log(tmp_path, [(0, 100)], (100, 20))
    real = monitor.pd.read_csv
    rotated = []

    def read_then_rotate(p):
        df = real(p)
        if not rotated:  # linkem closes the live file as the first read ends
            rotated.append(1)
            (tmp_path / "linkem-ab.csv").rename(tmp_path / "linkem-ab.000002.csv")
            (tmp_path / "linkem-ab.csv").write_text(HEADER + rows(120, 10))
        return df

    monkeypatch.setattr(monitor.pd, "read_csv", read_then_rotate)
    df = monitor.read_window(tmp_path, "ab", 50, 125)
    assert df["t_ns"].tolist() == list(range(50, 130))


def test_consumed_segments_are_deleted_the_live_file_never(tmp_path):
    write_log(tmp_path, [(0, 100), (100, 100), (200, 100)], (300, 10))
    monitor.drop_consumed(tmp_path, "ab", 250)
    assert [p.name for p in monitor.log_files(tmp_path, "ab")] == [
        "linkem-ab.000003.csv",
        "linkem-ab.csv",
    ]
    monitor.drop_consumed(tmp_path, "ab", 10_000)
    assert [p.name for p in monitor.log_files(tmp_path, "ab")] == ["linkem-ab.csv"]


def test_calibration_reads_every_row_kept(tmp_path):
    write_log(tmp_path, [(0, 3), (3, 3)], (6, 2))
    assert [r.t_ns for r in monitor.direction_log(tmp_path, "ab")] == list(range(8))


def test_calibration_reads_only_the_files_of_its_window(tmp_path):
    write_log(tmp_path, [(0, 100), (100, 100)], (200, 100))
    (tmp_path / "linkem-ab.000001.csv").write_text("damaged: must not be read")
    rows = monitor.between(monitor.direction_log(tmp_path, "ab", 150, 250), 150, 250)
    assert [r.t_ns for r in rows] == list(range(150, 250))
