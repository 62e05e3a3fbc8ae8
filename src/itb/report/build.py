"""`itb report RUN_DIR`: tables, metrics and figures again, from the raw logs alone."""

from __future__ import annotations

import html
import json
from pathlib import Path

from itb.analysis.summary import scenario_metrics
from itb.engine import collect, rundir
from itb.report import figures
from itb.scenario.model import Topology


def build_report(run: Path) -> Path:
    meta_path = run / "meta.json"
    resolved = run / "scenario.resolved.json"
    if not meta_path.exists() or not resolved.exists():
        raise rundir.RunDirError(f"{run}: not a run directory (meta.json and "
                                 "scenario.resolved.json are needed)")
    meta = rundir.read_json(meta_path)
    sc = rundir.read_json(resolved)
    topo = Topology.model_validate(sc["topology"])
    interval_s = sc["experiment"]["interval_us"] / 1e6
    tables = collect.build_tables(run, topo, interval_s)
    collect.write_tables(run, tables)
    metrics = scenario_metrics(tables, topo, meta.get("dispatch"))
    rundir.write_json(run / "metrics.json", metrics)
    out = run / "report"
    figs = []
    if len(tables["transfers"]):
        for r in sorted(tables["transfers"]["repetition"].unique()):
            figs.append(figures.goodput_over_time(tables, int(r), out / f"goodput-rep{r:03d}.png"))
            figs.append(figures.bottleneck_over_time(tables, int(r), metrics["context"]["link"],
                                                     out / f"bottleneck-rep{r:03d}.png"))
        figs.append(figures.completion_times(tables, out / "completion-times.png"))
    return write_html(out / "report.html", meta, metrics, [f for f in figs if f])


def write_html(path: Path, meta: dict, metrics: dict, figs: list[Path]) -> Path:
    o = metrics.get("overall") or {}
    ct = o.get("completion") or {}
    fair = metrics.get("fair_share") or {}
    disp = metrics.get("dispatch") or {}
    rows = []
    for r in metrics.get("repetitions", []):
        c = r["completion"]
        rows.append(f"<tr><td>{r['repetition']}</td><td>{c['n']}</td><td>{_f(c['t_mean'])}</td>"
                    f"<td>{_f(c['t_max'])}</td><td>{_f(r['jain'], 4)}</td>"
                    f"<td>{_f(r['efficiency'], 4)}</td><td>{_f(r['utilisation'], 4)}</td></tr>")
    lines = [
        "<!doctype html><meta charset='utf-8'>",
        f"<title>ITB run {html.escape(str(meta.get('scenario')))}</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}"
        "td,th{padding:2px 8px;text-align:right}</style>",
        f"<h1>{html.escape(str(meta.get('scenario')))}</h1>",
        f"<p>status {html.escape(str(meta.get('status')))}, {meta.get('repetitions')} repetitions, "
        f"seed {meta.get('seed')}, scenario {str(meta.get('scenario_hash'))[:12]}</p>",
        "<h2>Completion time (forward transfers)</h2>",
        f"<p>n = {ct.get('n')}, mean {_f(ct.get('t_mean'))} s, min {_f(ct.get('t_min'))} s, "
        f"max {_f(ct.get('t_max'))} s, CoV {_f(ct.get('cov'), 4)}</p>",
    ]
    if fair.get("ideal_mean_s"):
        lines.append(
            f"<p>Fair-share ideal from C: mean {_f(fair['ideal_mean_s'])} s; measured "
            f"{_f(fair['measured_mean_s'])} s, {fair['difference_pct']:+.1f} % "
            f"(ideal from C's TCP payload share: {_f(fair['payload_ideal_mean_s'])} s, "
            f"{fair['payload_difference_pct']:+.1f} %)"
            + (f"; the model ignores the {', '.join(fair['ignores'])} traffic"
               if fair.get("ignores") else "") + "</p>")
    if disp.get("events"):
        lines.append(f"<p>Dispatch error over {disp['events']} events: p50 "
                     f"{disp['p50_ms']:.3f} ms, p99 {disp['p99_ms']:.3f} ms, max "
                     f"{disp['max_ms']:.3f} ms</p>")
    lines += ["<table><tr><th>rep</th><th>n</th><th>T mean (s)</th><th>T max (s)</th>"
              "<th>Jain</th><th>efficiency</th><th>utilisation</th></tr>", *rows, "</table>"]
    lines += [f"<p><img src='{f.name}' width='800'></p>" for f in figs]
    lines.append(f"<details><summary>metrics.json</summary><pre>"
                 f"{html.escape(json.dumps(metrics.get('overall'), indent=1))}</pre></details>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))
    return path


def _f(x, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"
