"""Constant-rate UDP source and sink for calibration, cheap enough to offer 1.2 × a
Gbit/s bottleneck on two cores: the source hands the kernel 64 KB per call with UDP GSO
(UDP_SEGMENT), which cuts it into ordinary datagrams; the sink drains with UDP_GRO.

    python -m itb.backends.hostside.udprate send ADDR PORT RATE_BPS SECONDS [PAYLOAD]
    python -m itb.backends.hostside.udprate recv PORT SECONDS

Each prints one JSON line: bytes and datagrams, start and end (monotonic ns).
"""

from __future__ import annotations

import json
import socket
import sys
import time

SOL_UDP = 17
UDP_SEGMENT = 103
UDP_GRO = 104
SEGMENTS_PER_SEND = 44  # 44 × 1472 B fits one 64 KB GSO packet
SAMPLE_NS = 100_000_000


def send(addr: str, port: int, rate_bps: float, seconds: float, payload: int = 1472) -> dict:
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_DGRAM)
    sock.setsockopt(SOL_UDP, UDP_SEGMENT, payload)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    chunk = bytes(payload * SEGMENTS_PER_SEND)
    sent = datagrams = 0
    start = time.monotonic_ns()
    end = start + int(seconds * 1e9)
    while (now := time.monotonic_ns()) < end:
        due = rate_bps / 8 * (now - start) / 1e9  # bytes of payload due by now
        if sent + len(chunk) > due:
            time.sleep(max(0.0, (sent + len(chunk) - due) * 8 / rate_bps))
            continue
        try:
            sent += sock.sendto(chunk, (addr, port))
            datagrams += SEGMENTS_PER_SEND
        except BlockingIOError:
            time.sleep(0.0001)
    return {"bytes": sent, "datagrams": datagrams, "start_ns": start, "end_ns": time.monotonic_ns()}


def recv(port: int, seconds: float) -> dict:
    sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    sock.setsockopt(SOL_UDP, UDP_GRO, 1)
    sock.bind(("::", port))
    sock.settimeout(0.2)
    buf = bytearray(1 << 16)
    total = 0
    samples = []  # (monotonic ns, payload bytes so far) every ≥ 100 ms: rates over any window
    end = time.monotonic_ns() + int(seconds * 1e9)
    next_sample = 0
    while (now := time.monotonic_ns()) < end:
        if now >= next_sample:
            samples.append((now, total))
            next_sample = now + SAMPLE_NS
        try:
            total += sock.recv_into(buf)
        except TimeoutError:
            continue
    samples.append((time.monotonic_ns(), total))
    return {"bytes": total, "samples": samples}


def rate_between(samples: list[list[int]], t0_ns: int, t1_ns: int) -> float | None:
    """Payload rate (bit/s) between the first sample ≥ t0 and the last ≤ t1."""
    inside = [s for s in samples if t0_ns <= s[0] <= t1_ns]
    if len(inside) < 2 or inside[-1][0] == inside[0][0]:
        return None
    (ta, ba), (tb, bb) = inside[0], inside[-1]
    return (bb - ba) * 8e9 / (tb - ta)


def main(argv: list[str]) -> int:
    if argv[:1] == ["send"] and len(argv) in (5, 6):
        res = send(
            argv[1], int(argv[2]), float(argv[3]), float(argv[4]), *(int(a) for a in argv[5:])
        )
    elif argv[:1] == ["recv"] and len(argv) == 3:
        res = recv(int(argv[1]), float(argv[2]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    print(json.dumps(res), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
