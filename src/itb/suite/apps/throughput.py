"""TU, the throughput application: one transfer at full speed, with the host's default
socket buffers or tuned ones."""

from __future__ import annotations

from itb.suite import windows
from itb.suite.apps.parts import Cell, Generated, duration, experiment, rate, secs, testbed
from itb.suite.scaling import ClassScale

UNTUNED_RMEM, UNTUNED_WMEM = "4096 131072 6291456", "4096 16384 4194304"  # Linux defaults


def tu(cell: Cell, cs: ClassScale, seed: int, spacing_s: float) -> Generated:
    """TU: one pair, one transfer at full speed, with the host's default socket buffers
    (Linux's tcp_rmem / tcp_wmem defaults) or tuned ones (≥ 2 BDP, ITB's testbed)."""
    c = cell.cls
    volume = int(cs.capacity_bps / 8 * cs.transfer_time_s)
    start = 1.0 if cell.variant == "default" else 0.0
    dur = duration(cs.transfer_time_s * 4, start, cs.rtt_ms)  # untuned buffers are slow
    doc = testbed(cell, cs, 1) | {"experiment": experiment(cell, dur)}
    doc["transfer"] = [
        {
            "id": "tu",
            "src": "l1",
            "dst": "r1",
            "at": secs(start),
            "volume": f"{volume}B",
            "cc": cell.cc,
        }
    ]
    if cell.variant == "default":
        doc["command"] = [
            {
                "id": f"untune-{h}",
                "host": h,
                "at": "0s",
                "argv": [
                    "sysctl",
                    "-q",
                    "-w",
                    f"net.ipv4.tcp_rmem={UNTUNED_RMEM}",
                    f"net.ipv4.tcp_wmem={UNTUNED_WMEM}",
                ],
            }
            for h in ("l1", "r1")
        ]
    return Generated(
        doc,
        {
            "forward": f"one transfer of {volume} B at full speed over C = "
            f"{rate(cs.capacity_bps)}/s",
            "reverse": "none",
            "tuning": (
                "Linux default socket buffers (tcp_rmem "
                + UNTUNED_RMEM
                + ", tcp_wmem "
                + UNTUNED_WMEM
                + ")"
            )
            if cell.variant == "default"
            else "tuned socket buffers (tcp_rmem / tcp_wmem max ≥ 2 × BDP)",
            "notes": ["txqueuelen is not varied"],
        },
        window=windows.of_source(
            c,
            cs,
            testbed_rate_bps=cs.capacity_bps,
            documents_rate_bps=cs.capacity_bps * cs.factor,
            load=1.0,
        ),
    )
