"""The `itb` command: the only place that prints for people and chooses exit codes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from itb.errors import ItbError

app = typer.Typer(
    help="ITB: benchmark transport protocols by how long transfers take, how predictable "
    "that time is and how fairly a path is shared, on emulated long-distance networks.",
    no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
    rich_markup_mode="markdown")
testbed_app = typer.Typer(
    help="Build, inspect and remove the local emulated WAN (eWAN): hosts are network "
    "namespaces, the bottleneck runs through ITB's user-space link emulator.",
    no_args_is_help=True, rich_markup_mode="markdown")
app.add_typer(testbed_app, name="testbed")
study_app = typer.Typer(
    help="Studies: sweeps with their own analysis and report.", no_args_is_help=True,
    rich_markup_mode="markdown")
app.add_typer(study_app, name="study")
cc_app = typer.Typer(
    help="Congestion controls by canonical name (reno, cubic, bbr, bic, highspeed, htcp, "
    "scalable, vegas, nocc): the kernel's when it has them, else ITB's eBPF ones. "
    "Runs load what they need themselves; see docs/cc.md.", no_args_is_help=True,
    rich_markup_mode="markdown")
app.add_typer(cc_app, name="cc")

# Wide when not a terminal (logs, CI): tables stay readable instead of wrapping at 80.
out = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, width=None if sys.stderr.isatty() else 160)

FILE_ARG = typer.Argument(None, help="Testbed/scenario TOML file (default: the built-in "
                          "dumbbell). See docs/scenario.md.", show_default=False)
PAIRS = typer.Option(None, "--pairs", help="Dumbbell: number of host pairs.")
RATE = typer.Option(None, "--rate", help="Bottleneck capacity C, e.g. 1Gbit, 100Mbit, unlimited.")
ACCESS = typer.Option(None, "--access-rate", help="Access-link capacity C_a of each host.")
RTT = typer.Option(None, "--rtt", help="Base RTT across the bottleneck, e.g. 20ms.")
LOSS = typer.Option(None, "--loss", help="Random loss on the bottleneck, e.g. 1%.")
BUFFER = typer.Option(None, "--buffer", help="Bottleneck queue: 1bdp, 100pkt, 2MB.")
MTU = typer.Option(None, "--mtu", help="MTU of every link: 1500 or 9000.")


def _overrides(pairs, rate, access_rate, rtt, loss, buffer, mtu) -> dict:
    given = {"pairs": pairs, "rate": rate, "access_rate": access_rate, "rtt": rtt,
             "loss": loss, "buffer": buffer, "mtu": mtu}
    return {k: v for k, v in given.items() if v is not None}


def _load(file: Optional[Path], overrides: dict):
    from itb.scenario import load_testbed

    return load_testbed(file, overrides)


def _progress(msg: str) -> None:
    err.print(f"[dim]· {msg}[/dim]")


@testbed_app.command("up")
def testbed_up(file: Optional[Path] = FILE_ARG, pairs: Optional[int] = PAIRS,
               rate: Optional[str] = RATE, access_rate: Optional[str] = ACCESS,
               rtt: Optional[str] = RTT, loss: Optional[str] = LOSS,
               buffer: Optional[str] = BUFFER, mtu: Optional[int] = MTU) -> None:
    """Build the testbed: namespaces, veth links, addresses, routes, shaping, emulators."""
    from itb.backends import local

    topo = _load(file, _overrides(pairs, rate, access_rate, rtt, loss, buffer, mtu))
    state = local.up(topo, _progress)
    st = local.status(state)
    out.print(f"testbed [bold]{topo.name}[/bold] up: {len(st['hosts'])} hosts, "
              f"{len(st['links'])} links, hash {topo.content_hash()[:12]}")
    _print_status(st)


@testbed_app.command("status")
def testbed_status(as_json: bool = typer.Option(False, "--json", help="Machine-readable "
                   "(format in docs/testbed.md).")) -> None:
    """Show the hosts (namespace, addresses, role, side) and links of the running testbed."""
    from itb.backends import local

    st = local.status(local.require_state())
    if as_json:
        out.print_json(json.dumps(st))
    else:
        _print_status(st)


@testbed_app.command("down")
def testbed_down() -> None:
    """Stop the emulators and remove every namespace of the testbed."""
    from itb.backends import local

    stats = local.down(_progress)
    for link, s in stats.items():
        late = sum(s.get(d, {}).get("late_packets", 0) for d in ("ab", "ba"))
        out.print(f"emulator {link}: peak RSS {s.get('peak_rss_bytes', 0) / 2**20:.1f} MiB, "
                  f"late packets {late}")
    out.print("testbed down")


@testbed_app.command("plan")
def testbed_plan(file: Optional[Path] = FILE_ARG, pairs: Optional[int] = PAIRS,
                 rate: Optional[str] = RATE, access_rate: Optional[str] = ACCESS,
                 rtt: Optional[str] = RTT, loss: Optional[str] = LOSS,
                 buffer: Optional[str] = BUFFER, mtu: Optional[int] = MTU) -> None:
    """Print, per node, every command `up` would run (nothing is executed)."""
    from itb.emulation.plan import build_plan

    topo = _load(file, _overrides(pairs, rate, access_rate, rtt, loss, buffer, mtu))
    plan = build_plan(topo)
    print(f"# testbed {topo.name} ({topo.kind}), hash {topo.content_hash()}")
    for node, steps in plan.by_node().items():
        print(f"\n## node {node} (netns {steps[0].ns})")
        for step in steps:
            print(" ".join(_quote(a) for a in step.argv()))
            if hasattr(step, "config"):
                print(f"# {step.config_path}:")
                for line in json.dumps(step.config, indent=1).splitlines():
                    print(f"#   {line}")


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


@app.command("clean")
def clean() -> None:
    """Remove everything ITB created on this machine (namespaces, emulators, state).
    Safe to run any time, also after the tool was killed."""
    from itb.backends import local

    from itb import cc

    removed = local.clean(_progress)
    unregistered = cc.clean(progress=_progress)
    parts = ([f"removed {len(removed)} namespace(s)"] if removed else []) + \
        ([f"unregistered {', '.join(unregistered)}"] if unregistered else [])
    out.print(f"clean: {'; '.join(parts)}" if parts else "clean: nothing to remove")


@cc_app.command("list")
def cc_list(as_json: bool = typer.Option(False, "--json", help="Machine-readable: a list of "
                                         "{name, kernel_name, source, usable, note}.")) -> None:
    """Every congestion control ITB knows: the name the kernel knows it by, where it comes
    from (built-in, module, ours = ITB's eBPF) and whether a socket can select it now."""
    from itb import cc

    rows = cc.status()
    if as_json:
        print(json.dumps([r.to_json() for r in rows], indent=2))
        return
    t = Table(title="congestion controls")
    for col in ("name", "kernel name", "source", "usable now", "note"):
        t.add_column(col)
    for r in rows:
        t.add_row(r.name, r.kernel_name or "", r.source or "", "yes" if r.usable else "no", r.note)
    out.print(t)


@cc_app.command("load")
def cc_load(names: list[str] = typer.Argument(..., help="Canonical names, e.g. bic htcp."),
            ours: bool = typer.Option(False, "--ours", help="Register ITB's eBPF "
                                      "implementation even where the kernel has its own.")) -> None:
    """Make congestion controls selectable now: the kernel's (modprobe) when it has one,
    else ITB's eBPF implementation, registered as itb_NAME. Stays until `itb cc unload`
    or `itb clean`."""
    from itb import cc

    for r in cc.ensure(names, prefer="ours" if ours else "kernel", progress=_progress):
        state = "loaded" if r.loaded_now else "already there"
        out.print(f"{r.name}: {r.kernel_name} ({r.source}, {state})")


@cc_app.command("unload")
def cc_unload(names: Optional[list[str]] = typer.Argument(None, help="Canonical names; "
                                                          "none: every one of ITB's.")) -> None:
    """Unregister ITB's eBPF congestion controls (the kernel's own are left alone)."""
    from itb import cc

    gone = cc.unload(names) if names else cc.clean(progress=_progress)
    out.print(f"unregistered {', '.join(gone)}" if gone else "nothing of ITB's was registered")


@cc_app.command("verify")
def cc_verify(names: Optional[list[str]] = typer.Argument(None, help="Among bic highspeed "
                                                          "htcp scalable vegas; none: all five."),
              hz: list[int] = typer.Option([250], "--hz", help="Kernel tick rates to test "
                                           "(100, 250 or 1000; BIC and H-TCP depend on it)."),
              scripts: Optional[list[str]] = typer.Option(None, "--script", help="Only these "
                                                          "scripts (default: all).")) -> None:
    """Check that ITB's eBPF congestion controls behave exactly as Linux's own
    `net/ipv4/tcp_NAME.c`: both run through scripted events (growth, losses, timeouts,
    undo, pacing, idle restart) in lockstep; the first event after which cwnd or ssthresh
    differ is named. Needs gcc and Debian's linux-source package (the oracle; `make setup`
    installs it). Exit 1 if any script differs. See docs/cc.md."""
    from itb.cc import difftest, oracle
    from itb.errors import ScenarioError

    for name in names or ():
        if name not in difftest.ALGORITHMS:
            raise ScenarioError(None, "NAME", f"{name!r} has no eBPF implementation to verify; "
                                              f"one of {', '.join(difftest.ALGORITHMS)}")
    for h in hz:
        if h not in difftest.SUPPORTED_HZ:
            raise ScenarioError(None, "--hz", f"{h}: the test's jiffies conversions cover HZ "
                                              f"{', '.join(map(str, difftest.SUPPORTED_HZ))}")
    the_oracle = oracle.prepare()
    out.print(f"oracle: Linux {the_oracle.version} ({the_oracle.tarball})")
    failed = 0
    for name in names or difftest.ALGORITHMS:
        for h in hz:
            _progress(f"building and running {name} at HZ {h}")
            for r in difftest.run(difftest.build(name, h, the_oracle), scripts):
                failed += not r.ok
                out.print(("[green]same[/green] " if r.ok else "[red]DIFFERS[/red] ") + r.summary,
                          highlight=False)
    if failed:
        err.print(f"{failed} script(s) differ from Linux")
        raise typer.Exit(1)


@app.command("calibrate")
def calibrate(file: Optional[Path] = FILE_ARG,
              json_out: Optional[Path] = typer.Option(None, "--json", help="Write the full "
                                                      "calibration (checks, inventory) here."),
              tcp_seconds: float = typer.Option(10.0, help="Duration of the bulk TCP test."),
              udp_seconds: float = typer.Option(5.0, help="Duration of the UDP rate test."),
              loss_packets: int = typer.Option(1_000_000, help="Datagrams in the loss test "
                                               "(when loss is configured)."),
              cc: str = typer.Option("cubic", help="Congestion control of the bulk TCP "
                                     "flow (Linux's default is the reference; BBR's "
                                     "PROBE_RTT dips are not the emulator's)."),
              pairs: Optional[int] = PAIRS, rate: Optional[str] = RATE,
              access_rate: Optional[str] = ACCESS, rtt: Optional[str] = RTT,
              loss: Optional[str] = LOSS, buffer: Optional[str] = BUFFER,
              mtu: Optional[int] = MTU) -> None:
    """Build the testbed, measure it against its configuration, tear it down.

    Idle RTT and RTT under load, bottleneck rate with one TCP flow and with UDP at
    1.2 × the rate, loss, host inventory, and whether the emulator kept up. Exits 1 when a
    check is off.
    """
    from itb.calibration.run import Options
    from itb.calibration.run import calibrate as run_calibration

    topo = _load(file, _overrides(pairs, rate, access_rate, rtt, loss, buffer, mtu))
    cal = run_calibration(topo, Options(tcp_seconds, udp_seconds, loss_packets=loss_packets, cc=cc),
                          _progress)
    _print_calibration(cal)
    if json_out:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(cal.to_json(), indent=1))
        out.print(f"calibration written to {json_out}")
    if not cal.ok:
        raise typer.Exit(1)


def _print_status(st: dict) -> None:
    t = Table(title=f"hosts of {st['name']}")
    for col in ("name", "netns", "role", "side", "ipv4", "ipv6"):
        t.add_column(col)
    for h in st["hosts"] + st["routers"]:
        t.add_row(*(str(h[c] or "") for c in ("name", "netns", "role", "side", "ipv4", "ipv6")))
    out.print(t)
    lt = Table(title="links")
    for col in ("name", "kind", "a → b", "rate →", "delay →", "rate ←", "delay ←", "emulator"):
        lt.add_column(col)
    from itb.scenario.units import format_rate

    for lk in st["links"]:
        f, r = lk["forward"], lk["reverse"]
        em = lk.get("emulator")
        lt.add_row(lk["name"], lk["kind"], f"{lk['a']['node']} → {lk['b']['node']}",
                   format_rate(f["rate_bps"]), f"{f['delay_us'] / 1000:g} ms",
                   format_rate(r["rate_bps"]), f"{r['delay_us'] / 1000:g} ms",
                   "" if not lk["emulated"] else
                   ("running" if em and em["alive"] else "NOT RUNNING"))
    out.print(lt)


def _print_calibration(cal) -> None:
    p = cal.path
    out.print(f"calibration of [bold]{cal.testbed['name']}[/bold] "
              f"({p['src']} → {p['dst']}, RTT {p['rtt_ms']:g} ms)")
    t = Table()
    for col in ("quantity", "configured", "measured", "unit", "verdict", "detail"):
        t.add_column(col)
    for c in cal.checks:
        style = {"ok": "green", "info": "dim"}.get(c.verdict, "red")
        t.add_row(c.quantity, _num(c.configured), _num(c.measured), c.unit,
                  f"[{style}]{c.verdict}[/{style}]", c.detail)
    out.print(t)
    inv = cal.inventory
    if inv:
        cpu = inv["cpu"]
        out.print(f"host: {cpu['model']}, {cpu['cores']} cores, kernel {cpu['kernel']}; "
                  f"MTU {inv.get('mtu')}; offloads {inv.get('offloads')}")
    if "cpu_pct_during_tcp" in cal.emulator:
        out.print(f"emulator CPU during the TCP test: {cal.emulator['cpu_pct_during_tcp']:.0f} % "
                  "of one core")
    for w in cal.warnings:
        out.print(f"[yellow]warning:[/yellow] {w}")
    out.print("[green]all checks ok[/green]" if cal.ok else "[red]some checks are off[/red]")


@app.command("run")
def run_cmd(file: Path = typer.Argument(..., help="Scenario TOML: a testbed plus [experiment] "
                                        "and a timeline of events. See docs/scenario.md."),
            repeat: Optional[int] = typer.Option(None, "--repeat", min=1,
                                                 help="Repetitions (default: the scenario's)."),
            out_dir: Optional[Path] = typer.Option(None, "--out", help="Run directory "
                                                   "(default: runs/<name>-<date>)."),
            seed: Optional[int] = typer.Option(None, "--seed", help="Seed of every random "
                                               "draw (default: the scenario's)."),
            resume: bool = typer.Option(False, "--resume", help="Continue the run in --out: "
                                        "repetitions that ended are not redone."),
            pairs: Optional[int] = PAIRS, rate: Optional[str] = RATE,
            access_rate: Optional[str] = ACCESS, rtt: Optional[str] = RTT,
            loss: Optional[str] = LOSS, buffer: Optional[str] = BUFFER,
            mtu: Optional[int] = MTU) -> None:
    """Run a scenario's timeline on the local testbed, N times, into a run directory.

    Stages (each shown and timed in meta.json): preflight, reservation (namespaces),
    deployment (socket buffers vs BDP), configuration (emulator, one worker per node),
    calibration (idle RTT per pair), execution × N, gathering, analysis (Parquet tables,
    metrics.json), archiving, cleaning. A repetition whose process fails is recorded with
    the reason and the testbed is rebuilt for the next. Ctrl-C stops cleanly and keeps
    partial results (meta.json status "incomplete"); --resume finishes them. Exit code 0
    when every repetition succeeded, 1 when some failed, 130 when interrupted.
    """
    from itb.engine import rundir
    from itb.engine.runner import RunOptions, run
    from itb.scenario.scenario import load_scenario

    if resume and out_dir is None:
        raise typer.BadParameter("--resume needs --out RUN_DIR", param_hint="--resume")
    sc = load_scenario(file, _overrides(pairs, rate, access_rate, rtt, loss, buffer, mtu))
    target = out_dir or rundir.default_run_dir(Path("runs"), sc.experiment.name)
    err.print(f"run directory: {target}")
    tick = _ticker()
    from itb.report.build import analyse_run

    result = run(sc, RunOptions(target, repeat, seed, resume, analyse=analyse_run), _progress, tick)
    tick("")
    _print_run(result)
    if result.status != "complete":
        raise typer.Exit(130)
    if any(r.get("status") != "ok" for r in result.repetitions):
        raise typer.Exit(1)


@app.command("report")
def report_cmd(run_dir: Path = typer.Argument(..., help="A run directory written by `itb run`."),
               ) -> None:
    """Recompute the tables, metrics and figures of an archived run from its raw logs."""
    from itb.report.build import build_report

    path = build_report(run_dir)
    out.print(f"report written to {path}")


QUICK = {"apps": "BU,PA", "classes": "B,F", "ccs": "cubic,reno,bbr", "repeat": 2,
         "transfer_time": 6.0}


@app.command("bench")
def bench_cmd(
        apps: Optional[str] = typer.Option(None, "--app", help="Applications, comma-separated: "
                                           "TU, WM, PP, BU, PA. [default: BU,PA]"),
        classes: Optional[str] = typer.Option(None, "--class", help="Classes: letters and "
                                              "ranges, e.g. A-L, B,F, A-D,K. [default: A-L]"),
        ccs: Optional[str] = typer.Option(None, "--cc", help="Congestion controls, "
                                          "comma-separated. [default: cubic,reno,bbr]"),
        repeat: Optional[int] = typer.Option(None, "--repeat", min=1, max=100,
                                             help="Repetitions of every cell. [default: 3]"),
        quick: bool = typer.Option(False, "--quick", help="A few minutes: BU and PA on "
                                   "classes B and F, cubic/reno/bbr, 2 repetitions, 6 s "
                                   "transfers. Options given explicitly win."),
        out_dir: Optional[Path] = typer.Option(None, "--out", help="Benchmark directory "
                                               "(default: runs/bench-<hash of the arguments>, "
                                               "so the same command resumes)."),
        scale: Optional[float] = typer.Option(None, "--scale", help="One scale factor for "
                                              "every class: C = K × 1 Gbit/s ÷ factor. "
                                              "[default: from the calibration]"),
        capacity: Optional[str] = typer.Option(None, "--capacity", help="Scale each class to "
                                               "this bottleneck C instead of the calibrated "
                                               "one, e.g. 500Mbit."),
        transfer_time: Optional[float] = typer.Option(None, "--transfer-time", help="Seconds "
                                                      "one BU transfer takes alone at C_a (the "
                                                      "documents: 240 = 30 GB at 1 Gbit/s). "
                                                      "[default: 240]"),
        spacing: float = typer.Option(1.0, "--spacing", min=0, help="Start spacing of bulk "
                                      "transfers in seconds (0 = synchronised)."),
        seed: int = typer.Option(1, "--seed", min=0, help="Seed of the run order and of "
                                 "every random draw.")) -> None:
    """Run the ITB benchmark: application × class × protocol, repeated, then print the
    table and write the report.

    Each cell (e.g. `BU-F-cubic`) is a generated scenario run by the engine
    (docs/benchmark.md). Classes are scaled to this testbed: K, RTT, C_g, R and the number
    of sources are kept, C, C_a and volumes divided by one factor per class, taken from
    the last `itb calibrate` (or --scale / --capacity). Repetition r of every cell runs
    before repetition r+1 of any, in a seeded random order. Ctrl-C stops cleanly; the
    same command resumes without redoing finished runs. Exit code 0 when every run
    succeeded, 1 when some failed, 130 when interrupted, 2 for bad arguments.
    """
    from itb.bench.apps import check_app
    from itb.bench.classes import parse_classes
    from itb.bench.scaling import make_scale
    from itb.bench.benchmark import BenchArgs, default_out, run_bench

    q = QUICK if quick else {}
    app_list = [check_app(a) for a in _csv_opt(apps or q.get("apps") or "BU,PA", "--app",
                                               upper=True)]
    cc_list = _ccs(ccs or q.get("ccs") or "cubic,reno,bbr")
    cap = _capacity(capacity)
    sc = make_scale(factor=scale, capacity_bps=cap,
                    transfer_time_s=transfer_time or q.get("transfer_time") or 240.0)
    args = BenchArgs(tuple(app_list), tuple(parse_classes(classes or q.get("classes") or "A-L")),
                     tuple(cc_list), repeat or q.get("repeat") or 3, seed, spacing, sc)
    target = out_dir or default_out(args)
    err.print(f"benchmark directory: {target}")
    tick = _ticker()
    result = run_bench(args, target, say=lambda m: err.print(m, highlight=False), tick=tick)
    tick("")
    _print_bench(result)
    if result.status != "complete":
        err.print("interrupted: run the same command again to resume")
        raise typer.Exit(130)
    if any(r["failed"] or r["failed_repetitions"] for r in result.rows):
        raise typer.Exit(1)


@study_app.command("predictability")
def study_predictability(
        ccs: str = typer.Option("cubic,reno", "--cc", help="Congestion controls, comma-separated."),
        c_g: str = typer.Option("0.5,1,1.25,1.5,1.75,2", "--cg", help="Congestion levels C_g "
                                "(forward sources' capacity over C)."),
        reverse: str = typer.Option("0", "--reverse", help="Reverse-traffic levels R, e.g. "
                                    "0,0.7,0.9,1.1,sym (sym: as many reverse as forward sources)."),
        spacing: float = typer.Option(1.0, "--spacing", min=0, help="Start spacing of the "
                                      "spaced case (s); 0 s is always compared with it."),
        sync_cg: float = typer.Option(2.0, "--sync-cg", help="C_g at which synchronised "
                                      "and spaced starts are compared."),
        fit: str = typer.Option("1,2", "--fit", help="C_g range of the linear fits: LO,HI."),
        rtt: str = typer.Option("20ms", "--rtt", help="RTT of every path."),
        repeat: int = typer.Option(3, "--repeat", min=1, max=100, help="Repetitions per point."),
        transfer_time: float = typer.Option(15.0, "--transfer-time", help="Seconds one "
                                            "transfer takes alone at C_a (sets the volume)."),
        scale: Optional[float] = typer.Option(None, "--scale", help="Scale factor: C = 10 Gbit/s "
                                              "÷ factor. [default: from the calibration]"),
        capacity: Optional[str] = typer.Option(None, "--capacity", help="Bottleneck C, e.g. "
                                               "500Mbit, instead of the calibrated one."),
        out_dir: Optional[Path] = typer.Option(None, "--out", help="Study directory (default: "
                                               "runs/predictability-<hash of the arguments>)."),
        seed: int = typer.Option(1, "--seed", min=0, help="Seed of the run order.")) -> None:
    """How predictable are transfer times? Sweep C_g, R and start spacing per protocol.

    Every point is a BU cell (K = 10: the report's 1 Gbit/s nodes on a 10 Gbit/s
    bottleneck, scaled to this testbed). Fits T_mean = a·C_g + b per protocol and
    reverse level (correlation, R²), plots CoV against C_g and R, gives the margins over
    T_mean covering 68 % and 95 % of completions and σ_T for synchronised vs spaced
    starts. Resumable like `itb bench` (docs/predictability.md).
    """
    from itb.bench.scaling import make_scale
    from itb.errors import ScenarioError
    from itb.scenario.units import parse_duration
    from itb.study.predictability import StudyArgs, default_out, parse_levels, run_study

    cc_list = _ccs(ccs)
    lo_hi = parse_levels(fit, "--fit")
    if len(lo_hi) != 2 or lo_hi[0] >= lo_hi[1]:
        raise ScenarioError(None, "--fit", "give two increasing levels, e.g. 1,2")
    try:
        rtt_ms = parse_duration(rtt) / 1000
    except ValueError as e:
        raise ScenarioError(None, "--rtt", str(e))
    a = StudyArgs(tuple(cc_list), parse_levels(c_g, "--cg"), parse_levels(reverse, "--reverse", True),
                  spacing, sync_cg, (lo_hi[0], lo_hi[1]), rtt_ms, repeat, seed,
                  make_scale(factor=scale, capacity_bps=_capacity(capacity),
                             transfer_time_s=transfer_time))
    res = _run_study(run_study, a, out_dir or default_out(a))
    t = Table(title=f"T_mean = a·C_g + b ({res.status})")
    for col in ("protocol", "reverse", "C_g range", "a (s)", "b (s)", "r", "R²", "points"):
        t.add_column(col)
    for f in res.fits:
        t.add_row(f["cc"], str(f["reverse"]), "–".join(f"{x:g}" for x in f["c_g_range"]),
                  _num(f["a"]), _num(f["b"]), _num(f["r"]), _num(f["r2"]), str(f["n"]))
    out.print(t)
    for s in res.spacing:
        out.print(f"{s['cc']} at C_g {s['c_g']:g}: σ_T {_num(s['sigma_t_sync'])} s synchronised vs "
                  f"{_num(s['sigma_t_spaced'])} s with {s['spacing_s']:g} s spacing")
    _study_done(res)


@study_app.command("response-function")
def study_response_function(
        ccs: str = typer.Option("reno,highspeed,scalable,bic,htcp,cubic", "--cc",
                                help="Algorithms, comma-separated (loss-based ones; vegas too)."),
        points: int = typer.Option(5, "--points", min=3, max=20, help="Loss rates per algorithm."),
        rtt: Optional[str] = typer.Option(None, "--rtt", help="RTT of the path, for every "
                                          "algorithm. [default: each algorithm's own: 20 ms; "
                                          "HighSpeed 100 ms, BIC 200 ms]"),
        rate: Optional[str] = typer.Option(None, "--rate", help="Bottleneck C: far above the "
                                           "flows, so the loss sets the rate. [default: 1.25x the "
                                           "algorithm's top planned rate, at least 1Gbit]"),
        max_rate: Optional[str] = typer.Option(None, "--max-rate", help="Highest rate the "
                                               "plan aims at (caps the window range). "
                                               "[default: 250Mbit; HighSpeed 500Mbit, BIC 1Gbit]"),
        max_measure: Optional[str] = typer.Option(None, "--max-measure", help="Longest "
                                                  "measured span of a point (it aims at 40 "
                                                  "mean loss intervals). [default: 60s; "
                                                  "HighSpeed 180s, BIC 300s]"),
        windows: Optional[str] = typer.Option(None, "--windows", help="Window range LO,HI in "
                                              "segments the loss rates aim at, for every "
                                              "algorithm. [default: each algorithm's own]"),
        repeat: int = typer.Option(1, "--repeat", min=1, max=20, help="Repetitions per point."),
        out_dir: Optional[Path] = typer.Option(None, "--out", help="Study directory (default: "
                                               "runs/response-function-<hash of the arguments>)."),
        seed: int = typer.Option(1, "--seed", min=0, help="Seed of the run order and of the "
                                 "loss draws (the i-th point of each algorithm: seed + i).")) -> None:
    """Check each congestion control against its published response function.

    One flow per point with random loss p (data direction only) at a fixed RTT on a
    link that is not the limit. The loss range of each algorithm is planned from its
    published w = c/p^d, over the windows where Linux's implementation follows that
    slope (BIC: 5000-12000 segments at 200 ms; HighSpeed: 800-3300 at 100 ms; Scalable:
    120-431 at 20 ms; see docs/cc.md). Fits log w = log c − d·log p and compares d with
    the publications (Reno 0.5, BIC 0.5, HighSpeed 0.835, Scalable 1.0; within ±0.08),
    and measures each congestion event's decrease β from the tcp_info samples against
    Linux's (within ±0.03). About 75 min with the defaults (30 points); resumable.
    """
    from itb.errors import ScenarioError
    from itb.scenario.units import parse_duration, parse_rate
    from itb.study.response import ResponseArgs, default_out, run_study

    def rate_of(text: str, option: str) -> int:
        try:
            v = parse_rate(text)
        except ValueError as e:
            raise ScenarioError(None, option, str(e))
        if not v:
            raise ScenarioError(None, option, "give a finite rate, e.g. 1Gbit")
        return v

    def seconds_of(text: str, option: str) -> float:
        try:
            v = parse_duration(text) / 1e6
        except ValueError as e:
            raise ScenarioError(None, option, str(e))
        if v <= 0:
            raise ScenarioError(None, option, "must be above 0")
        return v

    rtt_ms = seconds_of(rtt, "--rtt") * 1000 if rtt is not None else None
    measure_s = seconds_of(max_measure, "--max-measure") if max_measure is not None else None
    if measure_s is not None and measure_s < 20:
        raise ScenarioError(None, "--max-measure", "at least 20s (a point measures 20 s at least)")
    span = None
    if windows is not None:
        try:
            span = tuple(float(x) for x in windows.split(","))
        except ValueError:
            span = ()
        if len(span) != 2 or not 4 <= span[0] < span[1]:
            raise ScenarioError(None, "--windows", f"{windows!r}: give two increasing window "
                                                   "sizes in segments, e.g. 120,1000")
    a = ResponseArgs(tuple(_ccs(ccs)), points, rtt_ms,
                     rate_of(rate, "--rate") if rate is not None else None,
                     rate_of(max_rate, "--max-rate") if max_rate is not None else None,
                     repeat=repeat, seed=seed, windows=span, max_measure_s=measure_s)
    res = _run_study(run_study, a, out_dir or default_out(a))
    t = Table(title=f"response functions w = c/p^d and decreases β ({res.status})")
    for col in ("algorithm", "points", "d", "d published", "c", "c published", "R²",
                "β", "β nominal", "events"):
        t.add_column(col)
    for f in res.fits:
        d = _num(f["d"]) + (f" ± {f['d_ci95']:.2g}" if f["d_ci95"] is not None else "")
        mark = {True: " ✓", False: " ✗"}
        t.add_row(f["cc"], str(f["n"]), d + mark.get(f["d_ok"], ""), _num(f["d_published"]),
                  _num(f["c"]), _num(f["c_published"]), _num(f["r2"]),
                  _num(f["beta"]) + mark.get(f["beta_ok"], ""), _num(f["beta_nominal"]),
                  str(f["events"]))
    out.print(t)
    _study_done(res)


def _run_study(run_study, args, target: Path):
    """A study's sweep with its progress on stderr; returns its result."""
    err.print(f"study directory: {target}")
    tick = _ticker()
    res = run_study(args, target, say=lambda m: err.print(m, highlight=False), tick=tick)
    tick("")
    return res


def _study_done(res) -> None:
    out.print(f"points: {res.out / 'points.csv'}")
    out.print(f"report: {res.report}")
    if res.status != "complete":
        err.print("interrupted: run the same command again to resume")
        raise typer.Exit(130)


def _ccs(text: str) -> list[str]:
    from itb.errors import ScenarioError
    from itb.scenario.timeline import KNOWN_CCS

    items = _csv_opt(text, "--cc")
    for cc in items:
        if cc not in KNOWN_CCS:
            raise ScenarioError(None, "--cc", f"unknown congestion control {cc!r}; known: "
                                              f"{', '.join(sorted(KNOWN_CCS))}")
    return items


def _capacity(text: Optional[str]) -> Optional[int]:
    from itb.errors import ScenarioError
    from itb.scenario.units import parse_rate

    if text is None:
        return None
    try:
        return parse_rate(text)
    except ValueError as e:
        raise ScenarioError(None, "--capacity", str(e))


def _csv_opt(text: str, option: str, upper: bool = False) -> list[str]:
    from itb.errors import ScenarioError

    items = [x.strip() for x in text.split(",")]
    if any(not x for x in items):
        raise ScenarioError(None, option, f"empty item in {text!r}")
    items = [x.upper() if upper else x for x in items]
    if len(set(items)) != len(items):
        raise ScenarioError(None, option, f"an item is repeated in {text!r}")
    return items


def _print_bench(result) -> None:
    from itb.report.html import pm

    t = Table(title=f"ITB benchmark ({result.status}): completion time T in s, "
                    "mean over repetitions ± 95 % interval")
    for col in ("app", "class", "protocol", "reps", "T_mean", "T_min", "T_max", "σ_T", "CoV",
                "Jain", "effic.", "util.", "scale"):
        t.add_column(col, justify="left" if col in ("app", "class", "protocol") else "right")
    for r in result.rows:
        t.add_row(r["app"] + (f"/{r['variant']}" if r["variant"] else ""), r["class"], r["cc"],
                  str(r["repetitions"]), pm(r["t_mean"], r["t_mean_ci95"]),
                  pm(r["t_min"], r["t_min_ci95"]), pm(r["t_max"], r["t_max_ci95"]),
                  pm(r["sigma_t"], r["sigma_t_ci95"]), pm(r["cov"], r["cov_ci95"], 3),
                  pm(r["jain"], None, 3), pm(r["efficiency"], None, 3),
                  pm(r["utilisation"], None, 3), f"{r['scale_factor']:g}")
    out.print(t)
    for r in result.rows:
        if r["failed"] or r["failed_repetitions"]:
            corrupt = (f", {r['corrupt']} of them with a corrupt window (not used)"
                       if r.get("corrupt") else "")
            out.print(f"[red]{r['app']} {r['class']} {r['cc']}: {r['failed_repetitions']} failed "
                      f"repetition(s), {r['failed']} failed transfer(s){corrupt}[/red] (see the "
                      "cell's run directory under cells/)")
    for c in result.comparisons:
        out.print(f"{c['app']}{'/' + c['variant'] if c['variant'] else ''} {c['class']}: "
                  f"{c['sentence']}")
    out.print(f"table: {result.out / 'table.csv'}")
    out.print(f"report: {result.report}")


def _ticker():
    """One status line that rewrites itself on a terminal; every 10th line in a log."""
    count = {"n": 0}

    def tick(line: str) -> None:
        if err.is_terminal:
            err.file.write("\r\033[K" + line[: err.width - 1])
            err.file.flush()
        elif line:
            count["n"] += 1
            if count["n"] % 10 == 1:
                err.print(f"[dim]· {line}[/dim]", highlight=False)

    return tick


def _print_run(result) -> None:
    t = Table(title=f"repetitions ({result.status})")
    for col in ("repetition", "status", "reason"):
        t.add_column(col)
    for i, r in enumerate(result.repetitions, 1):
        style = "green" if r.get("status") == "ok" else "red"
        t.add_row(str(i), f"[{style}]{r.get('status')}[/{style}]", r.get("reason") or "")
    out.print(t)
    m = result.metrics or {}
    overall = m.get("overall") or {}
    ct = overall.get("completion") or {}
    if ct.get("n"):
        out.print(f"forward transfers: {ct['n']} completed; completion time mean "
                  f"{ct['t_mean']:.2f} s (min {ct['t_min']:.2f}, max {ct['t_max']:.2f}, "
                  f"CoV {'–' if ct['cov'] is None else format(ct['cov'], '.3f')})")
    if ct.get("n_failed"):
        bad = overall.get("n_corrupt") or 0
        out.print(f"[red]forward transfers not completed: {ct['n_failed']}"
                  + (f", {bad} of them with a corrupt window (impossible cwnd or ssthresh in "
                     "the sender's tcp_info; see transfers.parquet, corrupt_window)" if bad else "")
                  + "[/red]")
    fair = m.get("fair_share")
    if fair and fair.get("ideal_mean_s"):
        out.print(f"fair-share ideal from C: mean {fair['ideal_mean_s']:.2f} s; measured "
                  f"{fair['measured_mean_s']:.2f} s ({fair['difference_pct']:+.1f} %)"
                  + (f"; the model ignores the {', '.join(fair['ignores'])} traffic"
                     if fair.get("ignores") else ""))
    disp = m.get("dispatch") or {}
    if disp.get("events"):
        out.print(f"dispatch error over {disp['events']} events: p50 {disp['p50_ms']:.3f} ms, "
                  f"p99 {disp['p99_ms']:.3f} ms, max {disp['max_ms']:.3f} ms")
    out.print(f"results in {result.run_dir}")


def _num(x) -> str:
    return "" if x is None else f"{x:.4g}"


def main() -> None:
    try:
        app()
    except ItbError as e:
        err.print(f"[red]error:[/red] {e}", highlight=False, soft_wrap=True)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()
