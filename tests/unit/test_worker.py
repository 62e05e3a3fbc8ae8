"""The node worker on this machine (no namespace): dispatch at a date, ready, exit, stop."""

from __future__ import annotations

import io
import json
import os
import threading
import time

from itb.backends.hostside.worker import READY_LINE_MAX, Output, ReadyLine, Worker, copy_stream
from tests.integration.wakeup import wakeup_lag


def events_of(buf: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in buf.getvalue().splitlines()]


def wait_for(buf, pred, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [e for e in events_of(buf) if pred(e)]
        if found:
            return found[0]
        time.sleep(0.01)
    raise AssertionError(f"no such event in {events_of(buf)}")


def test_spawn_at_a_date_reports_dispatch_ready_and_exit(tmp_path):
    buf = io.StringIO()
    w = Worker(buf)
    at = time.monotonic_ns() + 200_000_000
    # how late this process's sleeps woke meanwhile (make test runs the unit tests at nice
    # 19 beside the integration tests: a dispatch 172 ms late was the machine's, once)
    with wakeup_lag() as lag:
        w.handle(
            {
                "op": "spawn",
                "id": "a",
                "at_ns": at,
                "ready": True,
                "argv": ["sh", "-c", "echo ready; echo oops >&2; exit 3"],
                "stdout": str(tmp_path / "a.out"),
                "stderr": str(tmp_path / "a.err"),
            }
        )
        d = wait_for(buf, lambda e: e["ev"] == "dispatched")
    late_ns = d["t_ns"] - at
    assert d["at_ns"] == at and 0 <= late_ns < 50_000_000 + lag.max_ms * 1e6, (late_ns, lag)
    wait_for(buf, lambda e: e["ev"] == "ready")
    x = wait_for(buf, lambda e: e["ev"] == "exited")
    assert x["rc"] == 3 and x["stderr_tail"] == "oops"
    assert (tmp_path / "a.out").read_text() == "ready\n"


def test_stop_kills_children_and_cancels_pending_spawns(tmp_path):
    buf = io.StringIO()
    w = Worker(buf)
    now = time.monotonic_ns()
    common = {"stdout": str(tmp_path / "o"), "stderr": str(tmp_path / "e")}
    w.handle({"op": "spawn", "id": "long", "at_ns": now, "argv": ["sleep", "30"], **common})
    # "later" is due in a minute: it is still pending when stopped, however slow the machine
    w.handle(
        {"op": "spawn", "id": "later", "at_ns": now + 60_000_000_000, "argv": ["true"], **common}
    )
    wait_for(buf, lambda e: e["ev"] == "dispatched" and e["id"] == "long")
    w.handle({"op": "stop"})
    x = wait_for(buf, lambda e: e["ev"] == "exited" and e["id"] == "long")
    assert x["rc"] == -15  # SIGTERM
    wait_for(buf, lambda e: e["ev"] == "cancelled" and e["id"] == "later", timeout=3)
    assert not [e for e in events_of(buf) if e["ev"] == "dispatched" and e["id"] == "later"]


def test_cancel_stops_one_child_and_one_pending_spawn_and_leaves_the_others(tmp_path):
    buf = io.StringIO()
    w = Worker(buf)
    now = time.monotonic_ns()
    common = {"stdout": str(tmp_path / "o"), "stderr": str(tmp_path / "e")}
    # "later" is due in a minute: still pending when cancelled, however slow the machine
    # (at 0.3 s, a loaded CI machine dispatched it before the cancel arrived)
    for ident, at in (("run", now), ("other", now), ("later", now + 60_000_000_000)):
        w.handle({"op": "spawn", "id": ident, "at_ns": at, "argv": ["sleep", "30"], **common})
    wait_for(buf, lambda e: e["ev"] == "dispatched" and e["id"] == "other")
    wait_for(buf, lambda e: e["ev"] == "dispatched" and e["id"] == "run")
    w.handle({"op": "cancel", "id": "run"})
    w.handle({"op": "cancel", "id": "later"})
    assert wait_for(buf, lambda e: e["ev"] == "exited" and e["id"] == "run")["rc"] == -15
    # cancelled at once, not at its date a minute from now
    wait_for(buf, lambda e: e["ev"] == "cancelled" and e["id"] == "later", timeout=3)
    ended = [e["id"] for e in events_of(buf) if e["ev"] in ("exited", "cancelled")]
    assert sorted(ended) == ["later", "run"]  # "other" still runs
    w.stop_all(grace_s=0.0)


def test_write_reaches_the_child_stdin(tmp_path):
    buf = io.StringIO()
    w = Worker(buf)
    w.handle(
        {
            "op": "spawn",
            "id": "cat",
            "at_ns": 0,
            "stdin": True,
            "argv": ["head", "-n", "1"],
            "stdout": str(tmp_path / "o"),
            "stderr": str(tmp_path / "e"),
        }
    )
    wait_for(buf, lambda e: e["ev"] == "dispatched")
    w.handle({"op": "write", "id": "cat", "data": '{"rate_bps": 1000}\n'})
    wait_for(buf, lambda e: e["ev"] == "exited")
    assert (tmp_path / "o").read_text() == '{"rate_bps": 1000}\n'


# --- bounded output: what a child writes reaches its files up to its limit ------------


def feed(chunks: list[bytes]) -> int:
    """A pipe whose writer (a thread) writes the chunks, then closes it; its read end."""
    r, w = os.pipe()

    def write():
        with os.fdopen(w, "wb") as f:
            for c in chunks:
                f.write(c)

    threading.Thread(target=write, daemon=True).start()
    return r


def test_a_flood_past_the_limit_keeps_exactly_the_limit_and_counts_the_rest(tmp_path):
    # 3 MiB + 5 bytes through the pipe, a limit of 1 MiB: 1 048 576 bytes kept,
    # 3 145 733 − 1 048 576 = 2 097 157 dropped, the drop said once
    output, drops = Output(1_048_576), []
    fd = feed([b"y\n" * 524_288] * 3 + [b"tail\n"])
    copy_stream(fd, str(tmp_path / "o"), "stdout", output, None, lambda: None, drops.append)
    assert (tmp_path / "o").stat().st_size == 1_048_576
    assert output.dropped_counts() == {"stdout": 2_097_157, "stderr": 0}
    assert drops == [None]


def test_stdout_and_stderr_share_one_budget(tmp_path):
    # 70 000 bytes of stdout, then 50 000 of stderr, 100 000 allowed: stdout kept whole,
    # stderr 30 000 kept and 20 000 dropped
    output = Output(100_000)
    copy_stream(
        feed([b"o" * 70_000]),
        str(tmp_path / "o"),
        "stdout",
        output,
        None,
        lambda: None,
        lambda why: None,
    )
    copy_stream(
        feed([b"e" * 50_000]),
        str(tmp_path / "e"),
        "stderr",
        output,
        None,
        lambda: None,
        lambda why: None,
    )
    assert (tmp_path / "o").stat().st_size == 70_000 and (tmp_path / "e").stat().st_size == 30_000
    assert output.dropped_counts() == {"stdout": 0, "stderr": 20_000}


def test_without_a_limit_everything_is_kept(tmp_path):
    output = Output(None)
    copy_stream(
        feed([b"z" * 200_000]),
        str(tmp_path / "o"),
        "stdout",
        output,
        None,
        lambda: None,
        lambda why: None,
    )
    assert (tmp_path / "o").stat().st_size == 200_000 and output.dropped_counts()["stdout"] == 0


def test_the_ready_line_is_found_across_chunks_and_after_the_limit(tmp_path):
    # the ready line arrives split over two chunks, after the 10-byte limit was reached:
    # it is still seen (the ready check reads what is dropped too), and only once
    seen = []
    fd = feed([b"starting up\nrea", b"dy\nready\nmore"])
    output = Output(10)
    copy_stream(
        fd,
        str(tmp_path / "o"),
        "stdout",
        output,
        ReadyLine(),
        lambda: seen.append(1),
        lambda why: None,
    )
    assert seen == [1]
    assert (tmp_path / "o").read_bytes() == b"starting u"


def test_a_line_without_newline_is_not_held_in_memory():
    # 8 MiB without a newline: the ready check holds at most READY_LINE_MAX bytes of it,
    # and that line cannot be the ready line; the next line can
    r = ReadyLine()
    for _ in range(128):
        assert not r.feed(b"x" * 65_536)
        assert len(r.line) <= READY_LINE_MAX
    assert not r.feed(b"ready")  # the end of the 8 MiB line: not a ready line
    assert r.feed(b"\nready\n") and r.seen


def test_ready_match_finds_the_text_in_a_line():
    r = ReadyLine('"ready"')
    assert not r.feed(b'{"event": "start"}\n')
    assert r.feed(b'{"event": "ready", "t_ns": 5}\n')


def test_a_limited_child_is_bounded_reported_and_its_stderr_tail_kept(tmp_path):
    # stdout: "ready\n" + 300 000 bytes; then stderr: 300 000 bytes + "boom\n"; limit
    # 100 000. The child writes stderr only once its stdout is written, and a pipe holds
    # 64 KiB: stdout took the whole budget. Dropped: stdout 300 006 − 100 000 = 200 006,
    # stderr 300 005.
    buf = io.StringIO()
    w = Worker(buf)
    w.handle(
        {
            "op": "spawn",
            "id": "f",
            "at_ns": 0,
            "ready": True,
            "output_limit_bytes": 100_000,
            "argv": [
                "sh",
                "-c",
                ("echo ready; yes | head -c 300000; (yes | head -c 300000; echo boom) >&2; exit 2"),
            ],
            "stdout": str(tmp_path / "f.out"),
            "stderr": str(tmp_path / "f.err"),
        }
    )
    wait_for(buf, lambda e: e["ev"] == "ready")
    x = wait_for(buf, lambda e: e["ev"] == "exited")
    assert x["rc"] == 2 and x["stderr_tail"].splitlines()[-1] == "boom"
    assert x["dropped_bytes"] == {"stdout": 200_006, "stderr": 300_005}
    assert (tmp_path / "f.out").stat().st_size == 100_000
    assert (tmp_path / "f.err").stat().st_size == 0
    cut = [(e["stream"], e["limit_bytes"]) for e in events_of(buf) if e["ev"] == "truncated"]
    assert sorted(cut) == [("stderr", 100_000), ("stdout", 100_000)]


def test_an_unwritable_output_file_is_drained_and_said(tmp_path):
    # the file cannot be opened (its directory does not exist): the child is not
    # blocked, its 200 000 bytes are dropped and the reason given
    output, drops = Output(1_000_000), []
    copy_stream(
        feed([b"q" * 200_000]),
        str(tmp_path / "missing" / "o"),
        "stdout",
        output,
        None,
        lambda: None,
        drops.append,
    )
    assert output.dropped_counts()["stdout"] == 200_000
    assert len(drops) == 1 and "No such file or directory" in drops[0]
