"""The report of `itb study profile stage0`: the endpoints' CPU against the input rate
(RR-6874 figure 4), GridFTP from memory and disk, parallel streams."""

from __future__ import annotations

from pathlib import Path

from itb.draw.page import figures, study_report
from itb.draw.plot import plt, save_figure
from itb.draw.pursuit import SINGLE, spread_line
from itb.study.profile_stage0.args import Stage0Args
from itb.study.profile_stage0.cells import Stage0Cell
from itb.study.profile_stage0.results import Stage0Results
from itb.sweep.index import SweepIndex


def cpu_figure(res: Stage0Results, path: Path) -> Path | None:
    """Sender's and receiver's CPU (% of a core) against the input rate (RR-6874 fig. 4)."""
    groups = list(dict.fromkeys((p.mechanism, p.rtt_ms) for p in res.cpu))
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for k, (mech, rtt) in enumerate(groups):
        pts = sorted(
            (p for p in res.cpu if (p.mechanism, p.rtt_ms) == (mech, rtt)),
            key=lambda p: p.input_bps,
        )
        x = [p.input_bps / 1e6 for p in pts]
        spread_line(
            ax, x, [p.send_cpu_pct for p in pts], f"C{k}", f"{mech}, RTT {rtt:g} ms: sender"
        )
        spread_line(ax, x, [p.recv_cpu_pct for p in pts], f"C{k}", "receiver", fmt="s--")
    ax.set_xlabel("input rate (Mbit/s)")
    ax.set_ylabel("CPU (% of one core)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    return save_figure(fig, path)


def build(out: Path, index: SweepIndex[Stage0Cell], args: Stage0Args, res: Stage0Results) -> Path:
    """<out>/report/report.html: the CPU, files and streams tables and the CPU figure."""
    return study_report(
        __package__,
        out,
        index=index,
        args=args,
        res=res,
        figs=figures(
            out,
            [
                (
                    lambda p: cpu_figure(res, p),
                    "cpu.png",
                    "CPU time of the sending (solid) and receiving (dashed) process over the transfer's time, "
                    f"against the input rate: mean with its 95 % interval ({SINGLE})",
                )
            ],
        ),
    )
