"""`itb serve --execute`: committed plans run on the local testbed as their dates come,
over HTTP as a client meets it. Requests that share the access link finish before their
deadlines, within a few RTTs of their plans; a request cancelled while its transfer runs
stops (interrupted); SIGTERM stops what runs, records it and tears the testbed down.
(The acceptance figures, the paper's example and 20 requests at 100 ms, are
bench/service_execute.py's.)"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from .test_engine import no_namespaces_left
from .wakeup import wakeup_lag

ITB = Path(sys.executable).parent / "itb"
RTT_S = 0.020  # the default testbed's


def emulator_lag_ms(isolated: Path, rid: str) -> float:
    """The longest the link emulators released a packet late (their per-ms log, read
    while the testbed is up) over request rid's job: an emulator short of CPU (make test
    runs the simulation jobs on the same 2 cores) delays the last bytes by that much."""
    from itb.emulation import monitor

    jobs = isolated / "s.db.runs" / "jobs"
    job = next(j for j in jobs.iterdir() if json.loads((j / "job.json").read_text())["name"] == rid)
    res = json.loads((job / "result.json").read_text())
    lo, hi = res["zero_ns"], res["end_ns"]
    lags = [
        row.max_lag_us
        for d in (isolated / "state").rglob("emulators/*")
        for direction in ("ab", "ba")
        for row in monitor.direction_log(d, direction)
        if lo <= row.t_ns <= hi
    ]
    return max(lags, default=0.0) / 1e3


def wait(pred, timeout_s: float, what: str):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        got = pred()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_committed_plans_run_on_the_testbed_and_stop_with_the_service(engine_env, isolated):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    argv = [str(ITB), "serve", "--db", str(isolated / "s.db"), "--link", "access=900Mbit",
            "--port", str(port), "--execute", "default"]  # fmt: skip
    log = open(isolated / "serve.log", "w+")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=engine_env)
    c = httpx.Client(base_url=url, timeout=10)

    def up():
        assert proc.poll() is None, (isolated / "serve.log").read_text()
        try:
            return c.get("/v1/links").status_code == 200
        except httpx.HTTPError:
            return False

    def run_of(rid):
        return c.get(f"/v1/requests/{rid}").json()["run"]

    try:
        wait(up, 90, "the service (the testbed built)")
        now = time.time()

        def submit(rid, volume, deadline_in, max_rate="1Gbit", release=None):
            body = {"id": rid, "link": "access", "volume": volume, "release": release or now,
                    "deadline": now + deadline_in, "max_rate": max_rate}  # fmt: skip
            a = c.post("/v1/requests", json=body).json()
            assert a["state"] == "held", a
            assert c.post(f"/v1/requests/{rid}/commit").json()["state"] == "committed"
            return a

        # a and b share the link, 300 MB each at 877.5 Mbit/s (900 · (1 − 2.5 %)): long
        # enough (2.7 s) for the pacing's 2.5 % headroom to win back most of what the
        # receiver's opening window costs (100 MB ended 3.6-3.9 RTT late at 20 ms, at the
        # guard's edge); b is released when a's guard ends (4 RTT after its plan), so that
        # a's last bytes do not overflow the one-BDP queue under b's first ones (when they
        # did, b once ended 4 RTT late); c, 100 Mbit/s for 40 s, is cancelled as it runs
        plans = {"a": submit("a", "300MB", 20)}
        plans["b"] = submit("b", "300MB", 20, release=plans["a"]["finish"] + 4 * RTT_S)
        submit("c", "500MB", 60, max_rate="100Mbit")
        assert plans["b"]["start"] >= plans["a"]["finish"] + 4 * RTT_S - 1e-6
        for rid in ("a", "b"):
            with wakeup_lag() as lag:
                run = wait(lambda rid=rid: (r := run_of(rid)) and r["state"] != "launched" and r,
                           40, f"{rid}'s transfer")  # fmt: skip
            assert run["state"] == "done" and run["met"] and run["bytes"] == 300_000_000, run
            # its last byte arrives within the guard (4 RTT) of the plan's finish, plus the
            # longest this machine was late waking a sleeper or the emulator was late
            # releasing a packet meanwhile (tests run alongside)
            late_s = run["finish"] - plans[rid]["finish"]
            grant_ms = max(lag.max_ms, emulator_lag_ms(isolated, rid))
            assert -RTT_S < late_s < 4 * RTT_S + grant_ms / 1e3, (run, lag.max_ms, grant_ms)
        wait(lambda: (r := run_of("c")) and r["state"] == "launched", 20, "c's launch")
        time.sleep(2)
        assert c.delete("/v1/requests/c").json()["state"] == "cancelled"
        run = wait(lambda: (r := run_of("c")) and r["state"] != "launched" and r, 15, "c's stop")
        assert run["state"] == "interrupted" and run["reason"] == "cancelled by its client"
        assert run["met"] is False
        # d runs when the service stops: it is recorded interrupted, the testbed removed
        submit("d", "500MB", 60, max_rate="100Mbit")
        wait(lambda: (r := run_of("d")) and r["state"] == "launched", 20, "d's launch")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 143  # SIGTERM: 128 + 15 (docs/exit-codes.md)
        assert no_namespaces_left()
        from itb.service.store import Store

        d = Store(isolated / "s.db").get("d").run
        assert d.state == "interrupted" and d.reason == "the session was closed", d
        jobs = sorted((isolated / "s.db.runs" / "jobs").iterdir())
        assert len(jobs) == 4 and all((j / "result.json").exists() for j in jobs)
    finally:
        c.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
