"""Raw logs of a run directory → tidy tables (Parquet), from the directory alone.

transfers.parquet: one row per transfer (and ping-pong, UDP stream) and repetition.
samples.parquet: goodput (receiver) and tcp_info (sender) time series, long format.
bottleneck.parquet: the link emulator's per-interval counters, per direction.
Column meanings: docs/run-directory.md (and itb.analysis.tables).
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from itb import rundir
from itb.analysis.window import mark_corrupt
from itb.emulation import monitor
from itb.rundir.flow_summary import FlowSummary
from itb.rundir.records import (
    EmulatorConfig,
    RepResult,
    ResultView,
    model_of,
    read_events,
    read_record,
)
from itb.scenario.experiment import profile as profiles
from itb.scenario.testbed.model import Topology
from itb.scenario.testbed.paths import path_links
from itb.scenario.testbed.pathspec import path_spec

TCPINFO_COLUMNS = (
    "cwnd",
    "ssthresh",
    "rtt_us",
    "total_retrans",
    "pacing_rate_bps",
    "delivery_rate_bps",
)
# Bytes the link emulator counts per frame besides the IP packet: the Ethernet header
# (no preamble, no FCS; docs/linkem.md).
ETHERNET_HEADER_BYTES = 14


def _summary(path: Path, model=FlowSummary) -> dict | None:
    """A program's JSON summary (or the emulator's configuration) as written, once
    checked against its model; None when there is none or a stopped program left it
    cut short (not JSON). One of the wrong shape: `RunDirError` naming file and field."""
    try:
        data = json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    except (UnicodeDecodeError, OSError) as e:
        raise rundir.RunDirError(f"{path}: cannot be read ({e}); the file is damaged") from None
    model_of(path, data, model)
    return data


def _csv(path: Path) -> pd.DataFrame | None:
    try:
        return pd.read_csv(path)
    except (FileNotFoundError, pd.errors.EmptyDataError):
        return None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as e:
        raise rundir.RunDirError(f"{path}: not a readable CSV log ({str(e)[:200]})") from None


@contextmanager
def _reading(path: Path):
    """A log whose columns do not hold what its program writes: `RunDirError` naming it."""
    try:
        yield
    except (KeyError, ValueError, TypeError) as e:
        raise rundir.RunDirError(
            f"{path}: its columns are not those its program writes "
            f"({type(e).__name__}: {str(e)[:200]})"
        ) from None


def access_rate_bps(topo: Topology, src: str, dst: str) -> int | None:
    links = path_links(topo, src, dst)
    if not links:
        return None
    first = links[0]
    return (first.forward if first.a.node == src else first.reverse).rate_bps


def _capped(link_bps: int | None, pacing_bps: int | None) -> int | None:
    """A paced source's capacity is its pacing cap when that is below its access link."""
    if not pacing_bps or (link_bps and link_bps < pacing_bps):
        return link_bps
    return pacing_bps


def sent_columns(send: dict) -> dict:
    """What the sender put on the wire, from its summary's `sent` block (tcp_info totals
    over its streams, docs/flow.md): payload bytes sent and retransmitted, segments, and
    wire_bytes = payload + IP/TCP headers + an Ethernet header per segment, as the link
    emulator counts frames. NaN when the summary has no such block (UDP, an older flow
    binary, a kernel before 4.19, a sender that left no summary)."""
    sent = send.get("sent")
    keys = ("bytes", "retrans_bytes", "segments", "header_bytes")
    if not isinstance(sent, dict) or any(not isinstance(sent.get(k), int) for k in keys):
        return {
            "bytes_sent": np.nan,
            "bytes_retrans": np.nan,
            "segs_out": np.nan,
            "wire_bytes": np.nan,
        }
    return {
        "bytes_sent": sent["bytes"],
        "bytes_retrans": sent["retrans_bytes"],
        "segs_out": sent["segments"],
        "wire_bytes": (
            sent["bytes"] + sent["header_bytes"] + ETHERNET_HEADER_BYTES * sent["segments"]
        ),
    }


def cpu_columns(send: dict, recv: dict) -> dict:
    """CPU seconds (user + system, getrusage of the process) the sender and the receiver
    used, from their summaries' `cpu` block; NaN without one."""
    out: dict[str, float] = {}
    for col, summary in (("send_cpu_s", send), ("recv_cpu_s", recv)):
        cpu = summary.get("cpu")
        if isinstance(cpu, dict) and all(
            isinstance(cpu.get(k), (int, float)) for k in ("user_s", "system_s")
        ):
            out[col] = cpu["user_s"] + cpu["system_s"]
        else:
            out[col] = np.nan
    return out


def _whole_lines(df: pd.DataFrame | None) -> pd.DataFrame | None:
    """Without a last line cut short by a stopped process (its last field is empty)."""
    if df is None or not len(df.columns):
        return df
    return df.dropna(subset=[df.columns[-1]])


def clock_offsets(result: ResultView | None) -> dict[str, int]:
    """Node → its clock minus the engine's, as measured before the repetition (SSH hosts;
    a local namespace shares the engine's clock: 0). Programs date their logs on their
    own host's clock; subtracting the offset puts every date on the engine's."""
    if result is None:
        return {}
    return {node: c.offset_ns or 0 for node, c in result.clock.items()}


def _on_engine_clock(t, node: str, offsets: dict[str, int]):
    return None if t is None else t - offsets.get(node, 0)


def transfer_rows(run: Path, repetition: int, topo: Topology, events: list[dict]) -> list[dict]:
    rd = rundir.rep_dir(run, repetition)
    result = read_record(rd / "result.json", ResultView)
    offsets = clock_offsets(result)
    rows = []
    for e in events:
        if e["kind"] not in ("transfer", "pingpong", "udp"):
            continue
        role_r, role_s = ("udp-recv", "udp-send") if e["kind"] == "udp" else ("recv", "send")
        recv = _summary(rd / "nodes" / e["dst"] / f"{e['id']}.{role_r}.json") or {}
        send = _summary(rd / "nodes" / e["src"] / f"{e['id']}.{role_s}.json") or {}
        if e["kind"] == "transfer":
            expected = e["volume"]
        elif e["kind"] == "pingpong":
            expected = e["size"] * e["count"]
        else:
            expected = send.get("bytes")
        got = recv.get("bytes")
        start = _on_engine_clock(send.get("start_ns"), e["src"], offsets)
        end = _on_engine_clock(recv.get("last_byte_ns"), e["dst"], offsets)
        ok = bool(
            recv.get("ok")
            and send.get("ok")
            and got is not None
            and (e["kind"] == "udp" or got == expected)
        )  # UDP may lose datagrams
        if e["kind"] == "pingpong":
            # the last echo back at the sender ends a ping-pong
            end = _on_engine_clock(send.get("end_ns"), e["src"], offsets)
        complete = ok and start is not None and end is not None and e["kind"] != "udp"
        error = recv.get("error") or send.get("error")
        if not recv and not send:
            error = result.reason or "no logs"
        elif e["kind"] != "udp" and got is not None and got != expected and not error:
            error = f"received {got} of {expected} bytes"
        if e.get("wait") is False and not ok:
            error = "stopped once the awaited events were done (wait = false)"
        spec = path_spec(topo, e["src"], e["dst"])
        link_bps = access_rate_bps(topo, e["src"], e["dst"])
        rows.append(
            {
                "repetition": repetition,
                "transfer": e["id"],
                "kind": "background"
                if e.get("direction") == "background" and e["kind"] == "transfer"
                else e["kind"],
                "direction": e.get("direction", "background"),
                "src": e["src"],
                "dst": e["dst"],
                "cc": e.get("cc", "udp"),
                "cc_in_use": send.get("cc_in_use"),  # what the kernel said the socket ran
                "streams": e.get("streams", 1),
                "bytes_expected": expected,
                "bytes": got,
                "start_ns": start,
                "end_ns": end,
                "completion_s": (end - start) / 1e9 if complete else np.nan,
                "ok": ok,
                "error": error,
                "access_rate_bps": _capped(link_bps, e.get("rate_bps")),
                # the two limits apart: a link's rate is on the wire, a pacing cap on payload
                "access_link_bps": link_bps if link_bps else np.nan,
                "pacing_cap_bps": (e.get("rate_bps") or np.nan)
                if e["kind"] != "udp" and e.get("enforce") != "tbf"  # (tbf: the link's rate)
                else np.nan,
                "rtt_s": spec.rtt_us / 1e6,
                "rep_start_ns": result.zero_ns,
                "at_s": e["at_us"] / 1e6,
            }
            | sent_columns(send)
            | cpu_columns(send, recv)
            | profile_columns(e, complete, end, start)
        )
    return rows


def profile_columns(e: dict, complete: bool, end, start) -> dict:
    """For a transfer that follows a rate profile: the completion time of a sender that
    keeps it exactly (`profile_s`, payload at each step's rate from the transfer's start)
    and the lateness, measured minus that (RR-6874's lateness, here against the profile
    itself; `itb profile predict` gives the calibrated model's)."""
    steps = e.get("profile")
    deadline = e.get("deadline_us")
    out = {
        "deadline_s": deadline / 1e6 if deadline else np.nan,
        # met: completed by the deadline; a transfer that did not complete missed it
        "deadline_met": (bool(complete and (end - start) / 1e3 <= deadline) if deadline else None),
    }
    if e["kind"] != "transfer" or not steps:
        return out | {"profile_s": np.nan, "lateness_s": np.nan}
    ideal = profiles.time_to_send_us(tuple(map(tuple, steps)), e["volume"]) / 1e6
    return out | {
        "profile_s": ideal,
        "lateness_s": (end - start) / 1e9 - ideal if complete else np.nan,
    }


def row_intervals(t_ns: pd.Series, interval_s: float) -> np.ndarray:
    """The time each goodput row covers. Rows end on the sampler's ticks, one interval
    apart; the last one ends at the last byte (a partial interval) and a row after missed
    ticks covers several. A row whose distance from the previous one differs from the
    interval by more than 10 % gets that distance; the others (and the first, which starts
    at the accept) the interval, so the rows still bin on it."""
    gaps = t_ns.diff().to_numpy(dtype="float64") / 1e9
    gaps[0] = interval_s
    off = np.abs(gaps - interval_s) > 0.1 * interval_s
    return np.where(off, gaps, interval_s)


def _goodput_frame(
    g: pd.DataFrame, repetition: int, transfer: str, interval_s: float
) -> pd.DataFrame:
    t_ns = g["t_ns"].astype("int64")
    span = row_intervals(t_ns, interval_s)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(span > 0, g["bytes"].astype(float) * 8 / span, np.nan)
    return pd.DataFrame(
        {
            "repetition": repetition,
            "transfer": transfer,
            "series": "goodput",
            "stream": -1,
            "t_ns": t_ns,
            "interval_s": span,
            "bytes": g["bytes"].astype(float),
            "goodput_bps": rate,
        }
    )


def _tcpinfo_frame(t: pd.DataFrame, repetition: int, transfer: str) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "repetition": repetition,
            "transfer": transfer,
            "series": "tcp_info",
            "stream": t["stream"].astype(int),
            "t_ns": t["t_ns"].astype("int64"),
            "interval_s": np.nan,
            "bytes": np.nan,
            "goodput_bps": np.nan,
        }
    )
    for col in TCPINFO_COLUMNS:
        frame[col] = pd.to_numeric(t[col], errors="coerce") if col in t else np.nan
    return frame


def sample_frames(
    run: Path, repetition: int, interval_s: float, events: list[dict]
) -> list[pd.DataFrame]:
    rd = rundir.rep_dir(run, repetition)
    result = rd / "result.json"
    offsets = clock_offsets(read_record(result, ResultView) if result.exists() else None)
    out = []
    for e in events:
        if e["kind"] not in ("transfer", "pingpong", "udp"):
            continue
        role_r = "udp-recv" if e["kind"] == "udp" else "recv"
        logs = [
            (
                rd / "nodes" / e["dst"] / f"{e['id']}.{role_r}.csv",
                e["dst"],
                lambda df, ident=e["id"]: _goodput_frame(df, repetition, ident, interval_s),
            )
        ]
        if e["kind"] == "transfer":
            logs.append(
                (
                    rd / "nodes" / e["src"] / f"{e['id']}.send.csv",
                    e["src"],
                    lambda df, ident=e["id"]: _tcpinfo_frame(df, repetition, ident),
                )
            )
        for path, node, frame in logs:
            df = _whole_lines(_csv(path))
            if df is not None and len(df) and "t_ns" in df:
                with _reading(path):
                    if offsets.get(node):
                        df = df.assign(t_ns=df["t_ns"].astype("int64") - offsets[node])
                    out.append(frame(df))
    return out


def bottleneck_frames(run: Path, repetition: int) -> list[pd.DataFrame]:
    out: list[pd.DataFrame] = []
    em_root = rundir.rep_dir(run, repetition) / "emulator"
    if not em_root.exists():
        return out
    for link_dir in sorted(p for p in em_root.iterdir() if p.is_dir()):
        conf = _summary(link_dir / "linkem.json", EmulatorConfig) or {}
        interval_s = conf.get("interval_us", 1000) / 1e6
        for d, name in (("ab", "forward"), ("ba", "reverse")):
            path = link_dir / f"linkem-{d}.csv"
            df = _csv(path)
            if df is None or not len(df):
                continue
            if (
                "t_ns" not in df
                or not set(df.columns) <= set(monitor.FIELDS)
                or not all(pd.api.types.is_numeric_dtype(t) for t in df.dtypes)
            ):
                raise rundir.RunDirError(
                    f"{path}: not the numeric columns linkem writes "
                    f"({', '.join(f'{c}: {t}' for c, t in df.dtypes.items())})"
                )
            # linkem stamps an interval's row with its start (docs/linkem.md); the table,
            # like the samples, stamps it with its end (docs/metrics.md)
            df["t_ns"] = df["t_ns"] + round(interval_s * 1e9)
            df.insert(0, "direction", name)
            df.insert(0, "link", link_dir.name)
            df.insert(0, "repetition", repetition)
            df.insert(4, "interval_s", interval_s)
            out.append(df)
    return out


def build_tables(run: Path, topo: Topology, interval_s: float) -> dict[str, pd.DataFrame]:
    """The three tables of every finished repetition in the run directory. One that the
    user interrupted is not a measurement (a resume runs it again): it is left out."""
    reps = sorted(
        int(p.name[4:])
        for p in run.glob("rep-[0-9][0-9][0-9]")
        if (p / "result.json").exists()
        and (p / "events.json").exists()
        and read_record(p / "result.json", RepResult).status != "interrupted"
    )
    transfers, samples, bottleneck = [], [], []
    for r in reps:
        events = read_events(rundir.rep_dir(run, r) / "events.json")
        transfers += transfer_rows(run, r, topo, events)
        samples += sample_frames(run, r, interval_s, events)
        bottleneck += bottleneck_frames(run, r)
    samples_df = pd.concat(samples, ignore_index=True) if samples else pd.DataFrame()
    tables = {
        # a transfer whose sender logged an impossible window is not used (analysis.window)
        "transfers": mark_corrupt(pd.DataFrame(transfers), samples_df),
        "samples": samples_df,
        "bottleneck": pd.concat(bottleneck, ignore_index=True) if bottleneck else pd.DataFrame(),
    }
    return tables


def write_tables(run: Path, tables: dict[str, pd.DataFrame]) -> None:
    for name, df in tables.items():
        rundir.write_table(run / f"{name}.parquet", df)
