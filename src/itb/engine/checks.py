"""The checks of a run around its testbed: preflight before anything is built (programs,
source files, the emulator's CPU headroom from the last calibration), socket buffers
against the paths' BDP once the testbed is deployed, and a quick calibration of the
idle RTT of every source/destination pair of the timeline.
"""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from itb import native
from itb.backends import facts as inv
from itb.backends.testbed import Hosts
from itb.calibration import probes
from itb.calibration.record import read_calibration
from itb.cc import pace
from itb.engine import pacing
from itb.errors import PreflightError
from itb.rundir.records import RunDirError
from itb.scenario.scenario import Scenario
from itb.scenario.testbed.pathspec import path_spec


def preflight(sc: Scenario, tb: Hosts) -> list[str]:
    """What can be checked of the scenario on a testbed of hosts before anything is
    built; returns warnings (the testbed's own checks are its `select`)."""
    preflight_programs(sc, local_commands=tb.same_machine)
    # the last `itb calibrate` measured this machine's emulator
    return cpu_headroom_warnings(sc) if tb.same_machine else []


def preflight_programs(sc: Scenario, local_commands: bool = True) -> None:
    """ITB's programs and the scenario's inputs (its commands' programs when they run on
    this machine; paced commands only here)."""
    native.binary("flow")
    for e in sc.experiment.events:
        if e.kind == "command" and local_commands and shutil.which(e.argv[0]) is None:
            raise PreflightError(f"command {e.id}: program {e.argv[0]!r} not found on this machine")
        if e.kind == "command" and e.paced:
            pacing.cgroup_for(e.id)  # a cgroup v2 hierarchy
            native.binary("itb-incgroup")
            pace.require_object()
        if e.kind == "transfer" and e.source_file:
            path = Path(e.source_file)
            if not path.is_file() or path.stat().st_size < e.volume:
                raise PreflightError(
                    f"transfer {e.id}: source_file {path} is missing or "
                    f"smaller than the volume ({e.volume} bytes)"
                )


def cpu_headroom_warnings(
    sc: Scenario, calibration: Path = Path("runs/calibration.json")
) -> list[str]:
    """The emulator's CPU per bit/s from the last `itb calibrate`, scaled to this testbed."""
    rates = [lk.forward.rate_bps for lk in sc.topology.links if lk.emulated and lk.forward.rate_bps]
    if not rates:
        return []
    try:
        cal = read_calibration(calibration)
    except FileNotFoundError:
        cal = None
    except RunDirError as e:
        return [f"the last calibration cannot be read ({e}): run `itb calibrate` again"]
    pct = None if cal is None else cal.emulator.cpu_pct_during_tcp
    cal_rate = None if cal is None else cal.path.rate_bps
    if pct is None or not cal_rate:
        return [
            "no calibration found (runs/calibration.json): run `itb calibrate` to check "
            "that the emulator keeps up on this machine"
        ]
    need = pct * max(rates) / cal_rate
    if need > 90:
        return [
            f"the emulator may lack CPU: about {need:.0f} % of a core at "
            f"{max(rates) / 1e9:g} Gbit/s (calibration: {pct:.0f} % at {cal_rate / 1e9:g} Gbit/s)"
        ]
    return []


def deployment_check(sc: Scenario, host_of) -> dict:
    """Socket buffers vs the largest BDP among the timeline's paths, read back per host."""
    topo = sc.topology
    bdp = max((path_spec(topo, s, d).bdp_bytes or 0 for s, d in sc.experiment.pairs()), default=0)
    names = [h.name for h in topo.hosts()]
    with ThreadPoolExecutor(max_workers=max(1, min(16, len(names)))) as ex:  # SSH: ~0.1 s a read
        read = list(
            ex.map(
                lambda n: inv.sysctls(host_of(n), ("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem")), names
            )
        )
    out = {}
    for name, vals in zip(names, read):
        out[name] = vals
        for k, v in vals.items():
            mx = inv.tcp_buffer_max(v)
            if bdp and mx is not None and mx < bdp:
                raise PreflightError(f"{name}: {k} max {mx} is below the path BDP {bdp}")
    return {"bdp_bytes": bdp, "hosts": out}


def quick_calibration(sc: Scenario, tb: Hosts) -> dict:
    """Idle RTT of every source/destination pair of the timeline vs its configuration
    (on the testbed's topology: the addresses the hosts really have)."""
    topo, host_of = tb.topology, tb.host
    out: dict = {"pairs": [], "inventory": None}
    pairs = sc.experiment.pairs()

    def idle_rtts(pair: tuple[str, str]) -> list[float]:
        src, addr = host_of(pair[0]), topo.address(pair[1])
        probes.ping(src, addr, 2, 0.05)  # neighbour resolution
        return probes.ping(src, addr, 20, 0.01)

    # the pairs side by side (a few ICMP packets of each every 10 ms: no load on a path;
    # one after the other they took 0.2 s each, 5 s for a class of 28 sources)
    with ThreadPoolExecutor(max_workers=max(1, min(16, len(pairs)))) as ex:
        measured = list(ex.map(idle_rtts, pairs[:32]))
    for (s, d), rtts in zip(pairs[:32], measured, strict=True):
        spec = path_spec(topo, s, d)
        med = probes.median(rtts)
        out["pairs"].append(
            {
                "src": s,
                "dst": d,
                "rtt_configured_ms": spec.rtt_us / 1000,
                "rtt_measured_ms": med,
                "rate_bps": spec.rate_bps,
                "error_pct": (
                    100 * (med - spec.rtt_us / 1000) / (spec.rtt_us / 1000) if spec.rtt_us else None
                ),
            }
        )
    if pairs:
        s, d = pairs[0]
        out["inventory"] = inv.inventory(host_of(s), [], tb.ifname(s), tb.same_machine)
    return out
