"""A `[[command]]` that floods its output leaves at most its `output_limit` on disk,
keeps running to its end, and the run says its output was truncated.

CI floods for 4 s; the issue's measurement floods for 60 s, the same test with
ITB_TEST_FLOOD_S=60 (about 67 s).
"""

from __future__ import annotations

import json
import os
import time

from .conftest import itb

FLOOD = """
[testbed]
name = "command-output"
[dumbbell]
pairs = 1
[bottleneck]
rate = "100Mbit"
rtt = "20ms"

[experiment]
duration = "{duration}s"

[[command]]
id = "flood"
host = "l1"
argv = ["sh", "-c", "echo flooding >&2; timeout {flood} yes; exit 0"]
output_limit = "1MiB"
"""
LIMIT = 1_048_576
FLOOD_S = int(os.environ.get("ITB_TEST_FLOOD_S", "4"))


def test_a_yes_command_flooding_leaves_at_most_its_limit_and_the_run_says_so(engine_env, isolated):
    sc = isolated / "flood.toml"
    sc.write_text(FLOOD.format(duration=FLOOD_S + 4, flood=FLOOD_S))
    run = isolated / "run"
    t0 = time.monotonic()
    res = itb("run", str(sc), "--out", str(run), env=engine_env, timeout=300)
    wall = time.monotonic() - t0
    assert res.returncode == 0, res.stderr + res.stdout
    node = run / "rep-001" / "nodes" / "l1"
    sizes = {p.name: p.stat().st_size for p in node.glob("flood.*")}
    # yes writes far more than 1 MiB in 60 s: stdout and stderr together hold exactly it
    assert set(sizes) == {"flood.command.out", "flood.command.err"}
    assert sum(sizes.values()) == LIMIT, sizes
    result = json.loads((run / "rep-001" / "result.json").read_text())
    assert result["status"] == "ok", result["reason"]
    proc = result["procs"]["flood.command"]
    assert (
        proc["rc"] == 0 and proc["exited_ns"] - proc["dispatched_ns"] >= FLOOD_S * 1e9
    )  # not stopped
    (cut,) = [t for t in result["truncated"] if t["stream"] == "stdout"]
    assert cut["process"] == "flood.command" and cut["limit_bytes"] == LIMIT
    assert cut["dropped_bytes"] > 10 * LIMIT, cut  # read to its end and dropped
    assert any(
        "flood.command on l1: its stdout reached its output limit" in w for w in result["warnings"]
    )
    assert (
        "repetition 1: the output of flood.command on l1 was truncated at its output limit of 1 MiB"
    ) in res.stdout, res.stdout
    print(
        f"on disk {sizes} = {sum(sizes.values())} bytes, limit {LIMIT}; dropped "
        f"{cut['dropped_bytes']} bytes of stdout; `itb run` took {wall:.1f} s"
    )
