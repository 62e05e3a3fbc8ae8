"""Impossible congestion windows in a sender's tcp_info series, and the transfers they spoil.

A window is impossible when it exceeds 2^24 segments (24 GB at 1448 bytes): no sender can
fill it, because the socket buffers cap the data in flight at 2^31 bytes (1.5 M
segments), and a congestion control that grows only while the window limits the flow
(the kernel's rule) stays within twice what was in flight. ITB's own constant-window
`nocc` holds 2^20. The kernel's "no threshold yet" ssthresh (2^31 - 1) is logged by
`flow` as empty and is not a fault. A transfer whose sender ever reports an impossible
cwnd or ssthresh on any stream is corrupt: its completion time is not used (it counts as
failed, with the reason), and `corrupt_window` says why it was left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

IMPOSSIBLE_WINDOW = 1 << 24  # segments


@dataclass(frozen=True)
class WindowFault:
    repetition: int
    transfer: str
    stream: int
    t_s: float  # after the transfer's first byte
    field: str  # "cwnd" | "ssthresh"
    value: int  # segments

    def reason(self) -> str:
        return (
            f"corrupt window: {self.field} {self.value} segments (over 2^24) at "
            f"{self.t_s:.3f} s on stream {self.stream} of the sender's tcp_info; "
            "completion time not used"
        )


def find_faults(samples: pd.DataFrame, starts_ns: dict[tuple[int, str], int]) -> list[WindowFault]:
    """The first impossible window of every transfer that has one. `starts_ns` maps
    (repetition, transfer) to its first byte; samples are the long-format table."""
    if samples.empty or "series" not in samples:
        return []
    ti = samples[samples["series"] == "tcp_info"]
    out = []
    for field in ("cwnd", "ssthresh"):
        if field not in ti:
            continue
        bad = ti[pd.to_numeric(ti[field], errors="coerce") > IMPOSSIBLE_WINDOW]
        for (rep, tr), rows in bad.sort_values("t_ns").groupby(["repetition", "transfer"]):
            first = rows.iloc[0]
            start = starts_ns.get((int(rep), str(tr)))
            t_s = (int(first["t_ns"]) - start) / 1e9 if start is not None else np.nan
            out.append(
                WindowFault(int(rep), str(tr), int(first["stream"]), t_s, field, int(first[field]))
            )
    earliest: dict[tuple[int, str], WindowFault] = {}
    for f in sorted(out, key=lambda f: f.t_s if np.isfinite(f.t_s) else np.inf):
        earliest.setdefault((f.repetition, f.transfer), f)
    return list(earliest.values())


def mark_corrupt(transfers: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """transfers with `corrupt_window` (the reason, or None); a corrupt transfer is not ok
    and has no completion time, its reason first in `error`."""
    tr = transfers.copy()
    tr["corrupt_window"] = pd.Series([None] * len(tr), index=tr.index, dtype="object")
    if tr.empty:
        return tr
    starts = {
        (int(r), str(t)): int(s)
        for r, t, s in zip(tr["repetition"], tr["transfer"], tr["start_ns"])
        if pd.notna(s)
    }
    for f in find_faults(samples, starts):
        hit = (tr["repetition"] == f.repetition) & (tr["transfer"] == f.transfer)
        for i in tr.index[hit]:
            prior = tr.at[i, "error"]
            tr.at[i, "corrupt_window"] = f.reason()
            tr.at[i, "error"] = f.reason() + (
                f"; {prior}" if isinstance(prior, str) and prior else ""
            )
            tr.at[i, "ok"] = False
            tr.at[i, "completion_s"] = np.nan
    return tr
