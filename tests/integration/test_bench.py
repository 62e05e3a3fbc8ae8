"""`itb bench` end to end on a small sweep: Ctrl-C, then the same command resumes without
redoing a finished run; the report opens in headless Chromium with every figure."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

from itb.report.browser import check_page

from .conftest import itb
from .test_engine import no_namespaces_left

# short runs (one PA round trip of 1 MB, sources started 0.1 s apart): what is tested is
# the sweep around them (Ctrl-C, resume, table, report); flow's own tests run longer
# ping-pongs
ARGS = [
    "bench",
    "--app",
    "BU,PA",
    "--class",
    "B",
    "--cc",
    "reno",
    "--repeat",
    "1",
    "--capacity",
    "50Mbit",
    "--transfer-time",
    "2",
    "--pa-messages",
    "1",
    "--spacing",
    "0.1",
]


def test_bench_resumes_after_ctrl_c_and_its_report_renders(engine_env, isolated):
    out = isolated / "bench"
    args = [*ARGS, "--out", str(out)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "itb.cli", *args],
        env=engine_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 240
        started = []
        while time.monotonic() < deadline:
            started = sorted(out.glob("cells/*/rep-001/events.json"))
            if len(started) == 2:
                break
            time.sleep(0.1)
        assert len(started) == 2, "the second run never started"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "run the same command again to resume" in err
    state = json.loads((out / "bench.json").read_text())
    assert state["status"] == "incomplete"
    first = out / "cells" / state["order"][0][0] / "rep-001" / "result.json"
    assert json.loads(first.read_text())["status"] == "ok"
    stamp = first.stat().st_mtime_ns
    assert no_namespaces_left()

    res = itb(*args, env=engine_env, timeout=400)
    assert res.returncode == 0, res.stderr + res.stdout
    assert "1 of 2 runs already done" in res.stderr
    assert first.stat().st_mtime_ns == stamp  # the finished run was not redone
    state = json.loads((out / "bench.json").read_text())
    assert state["status"] == "complete"
    table = json.loads((out / "table.json").read_text())
    rows = {r["app"]: r for r in table["rows"]}
    assert rows["BU"]["transfers"] == 8 and rows["PA"]["transfers"] == 1
    assert rows["BU"]["scale_factor"] == 200 and rows["BU"]["t_mean"] > 1.9
    assert "report:" in res.stdout and no_namespaces_left()

    page = check_page(out / "report" / "report.html")
    assert page.console == []
    assert page.figures and page.figures >= 2 and page.broken == 0
    for name in ("tmean-by-protocol", "completion-times"):
        assert (out / "report" / f"{name}.png").stat().st_size > 0
        assert (out / "report" / f"{name}.svg").stat().st_size > 0


def test_a_sequence_stops_at_its_budget_says_so_and_itb_report_rebuilds_its_table(
    engine_env, isolated
):
    # BU B with reno and cubic (2 cells): repetitions until decided, at most 3, within a
    # 15 s budget: the budget ends before the first look (3 repetitions of 2 cells)
    out = isolated / "seq"
    args = [*ARGS[:6], "reno,cubic", *ARGS[7:], "--out", str(out)]
    args[args.index("--repeat") : args.index("--repeat") + 2] = ["--max-repeat", "3"]
    args[args.index("BU,PA")] = "BU"
    res = itb(*args, "--budget", "15s", env=engine_env, timeout=400)
    assert res.returncode == 0, res.stderr + res.stdout
    assert "the budget of 0.25 min has ended" in res.stderr
    index = json.loads((out / "bench.json").read_text())
    assert index["args"]["design"] == "sequential" and index["args"]["repeat"] == 3
    assert index["stopped_by"] == "budget"
    [c] = json.loads((out / "table.json").read_text())["comparisons"]
    assert c["tested"] == "cubic" and c["reference"] == "reno"
    if c["verdict"] == "inconclusive":  # (a 2 s transfer alone may be decided at once)
        assert c["stopped_by"] == "budget" and "the budget stopped" in res.stdout
    # the verdicts come first, then the table
    assert res.stdout.index("Which protocol is faster") < res.stdout.index("ITB benchmark (")
    before = (out / "table.csv").read_bytes()
    again = itb("report", str(out), env=engine_env, timeout=300)
    assert again.returncode == 0, again.stderr + again.stdout
    assert (out / "table.csv").read_bytes() == before  # rebuilt from the raw logs, the same
    assert "Which protocol is faster" in again.stdout and no_namespaces_left()
