"""Measurement probes run between two hosts of a testbed (ping, iperf3)."""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import time
from dataclasses import dataclass

from itb.backends.host import Host
from itb.errors import BackendError

_PING_TIME = re.compile(r"time=([0-9.]+) ms")
IPERF_MAX_OMIT_S = 60  # iperf3 refuses a longer --omit ("bogus value")


def parse_ping(text: str) -> list[float]:
    """RTT samples in ms from `ping` output."""
    return [float(m) for m in _PING_TIME.findall(text)]


def ping(src: Host, dst_addr: str, count: int, interval_s: float = 0.02) -> list[float]:
    res = src.run(
        ["ping", "-n", "-c", str(count), "-i", str(interval_s), dst_addr],
        check=False,
        timeout=count * interval_s + 30,
    )
    samples = parse_ping(res.stdout)
    if not samples:
        raise BackendError(f"ping {dst_addr} from {src.name} got no reply: {res.stdout[-300:]}")
    return samples


class BackgroundPing:
    """Ping running while something else loads the path (RTT under load)."""

    def __init__(self, src: Host, dst_addr: str, interval_s: float = 0.05):
        self.proc = src.spawn(
            ["ping", "-n", "-i", str(interval_s), dst_addr],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def stop(self) -> list[float]:
        self.proc.terminate()
        out, _ = self.proc.communicate(timeout=10)
        return parse_ping(out.decode())


@dataclass
class Iperf:
    """One iperf3 test: server on dst (one-off), client on src, JSON results of both ends."""

    src: Host
    dst: Host
    dst_addr: str
    port: int = 5201

    def run(
        self,
        extra: list[str],
        duration_s: float | None,
        omit_s: int = 0,
        expected_s: float | None = None,
    ) -> dict:
        """duration_s None: the test ends by a count in `extra` (-k / -n), taking about
        expected_s seconds. iperf3 omits at most IPERF_MAX_OMIT_S: a longer ramp (30
        RTTs of a 2 s path) runs that much longer, and the received figures
        (`end.sum_received`) are taken from the server's reports after the ramp."""
        late = max(0, omit_s - IPERF_MAX_OMIT_S) if duration_s is not None else 0
        omit_s -= late
        server = self.dst.spawn(
            ["iperf3", "-s", "-1", "-J", "-p", str(self.port)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            self._wait_listening()
            length = [] if duration_s is None else ["-t", str(duration_s + late)]
            client = self.src.run(
                [
                    "iperf3",
                    "-c",
                    self.dst_addr,
                    "-p",
                    str(self.port),
                    "-J",
                    *length,
                    "-O",
                    str(omit_s),
                    "-i",
                    "0.1",
                    *extra,
                ],
                check=False,
                timeout=(duration_s or expected_s or 0) * 2 + omit_s + late + 60,
            )
            try:  # the server ends with its one test; after a failed client, at once
                out, _ = server.communicate(timeout=30 if client.returncode == 0 else 1)
            except subprocess.TimeoutExpired:
                server.kill()
                out, _ = server.communicate()
                if client.returncode == 0:
                    raise BackendError(
                        "iperf3's server did not end within 30 s of its client"
                    ) from None
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
        try:
            result = json.loads(client.stdout)
            result["server_output_json"] = json.loads(out.decode() or "{}")
        except json.JSONDecodeError as e:
            raise BackendError(
                f"iperf3 gave no JSON: {client.stderr or client.stdout}"[:500]
            ) from e
        if "error" in result:
            raise BackendError(f"iperf3: {result['error']}")
        if late:
            result["end"]["sum_received"] = received_after(result["server_output_json"], late)
        return result

    def _wait_listening(self, timeout_s: float = 5.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            res = self.dst.run(["ss", "-Hltn", f"sport = :{self.port}"], check=False)
            if res.stdout.strip():
                return
            time.sleep(0.02)
        raise BackendError(f"iperf3 server on {self.dst.name} did not start listening")


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def received_after(server: dict, from_s: float) -> dict:
    """bytes, seconds and bits_per_second the iperf3 server received in its reports
    that start `from_s` or later after the omitted ones (its clock restarts there)."""
    kept = [
        i["sum"]
        for i in server.get("intervals", [])
        if not i["sum"].get("omitted") and i["sum"]["start"] >= from_s - 1e-6
    ]
    n, t = sum(x["bytes"] for x in kept), sum(x["seconds"] for x in kept)
    if t <= 0:
        raise BackendError(f"iperf3's server reported nothing after the first {from_s:g} s")
    return {"bytes": n, "seconds": t, "bits_per_second": n * 8 / t}
