"""A scenario's timeline: the validated sections resolved against the testbed into an
`Experiment` (the concrete events of one repetition are `background`'s).

`resolve` gives every event an id and an absolute date and fails, naming the field,
on anything that would fail at run time for a reason visible in the file (unknown host,
date beyond the end, a group of mismatched sizes, a size distribution without a finite
mean), before anything runs.
"""

from __future__ import annotations

from itb.errors import ScenarioError
from itb.scenario.experiment import files
from itb.scenario.experiment import profile as profiles
from itb.scenario.experiment.events import (
    Command,
    Experiment,
    Pingpong,
    SetLink,
    TcpBackground,
    Transfer,
    Udp,
)
from itb.scenario.experiment.sections import UDT_NATIVE, ScenarioSections
from itb.scenario.experiment.transfer_rules import (
    event_profile,
    udt_profile,
    within_deadline,
    within_path,
)
from itb.scenario.testbed.model import Topology
from itb.scenario.testbed.paths import path_rate_bps
from itb.scenario.units import format_rate

MAX_BACKGROUND_FLOWS = 10_000
MAX_EVENTS = 1_000  # timeline events after groups are expanded: the engine dates each one
FASTEST_BPS = 100_000_000_000  # no path of a testbed here carries more (an unlimited one)


def resolve(sections: ScenarioSections, topo: Topology, source: str | None) -> Experiment:
    """Check every event against the testbed and give each an id and absolute date."""
    exp = sections.experiment
    hosts = {n.name: n for n in topo.hosts()}
    links = {lk.name: lk for lk in topo.links}
    events: list = []
    ids: set[str] = set()
    rates = [d.rate_bps for lk in topo.links for d in (lk.forward, lk.reverse)]
    limited = [r for r in rates if r]
    top_rate = max(limited) if limited and len(limited) == len(rates) else FASTEST_BPS

    def fail(field: str, reason: str):
        raise ScenarioError(source, field, reason)

    def host(name: str, field: str) -> str:
        if name not in hosts:
            fail(field, f"unknown host {name!r}; hosts of this testbed: {', '.join(sorted(hosts))}")
        return name

    def date(at: int, field: str) -> int:
        if at >= exp.duration:
            fail(
                field,
                f"date {at / 1e6:g} s is not before the end of the timeline "
                f"(experiment.duration = {exp.duration / 1e6:g} s)",
            )
        return at

    def new_id(given: str | None, default: str, field: str) -> str:
        name = given or default
        if name in ids:
            fail(field, f"event id {name!r} is used twice")
        ids.add(name)
        return name

    def direction(src: str, dst: str) -> str:
        a, b = hosts[src].side, hosts[dst].side
        return "reverse" if (a, b) == ("right", "left") else "forward"

    for i, t in enumerate(sections.transfer):
        where = f"transfer[{i}]"
        srcs, dsts = t.src, t.dst
        n = max(len(srcs), len(dsts))
        for name, group in (("src", srcs), ("dst", dsts)):
            if len(group) not in (1, n):
                fail(
                    f"{where}.{name}",
                    f"a group needs as many sources as destinations "
                    f"(or one of either): {len(srcs)} vs {len(dsts)}",
                )
        spacing = exp.spacing if t.spacing is None else t.spacing
        base = t.id or f"t{i + 1}"
        if (t.source_file or t.sink_file) and (t.streams != 1 or n != 1):
            fail(f"{where}.streams", "a transfer from or to a file is one transfer of one stream")
        src_file = files.confine(
            t.source_file,
            exp.files_dir,
            source,
            f"{where}.source_file",
            sink=False,
            overwrite=False,
        )
        sink_file = files.confine(
            t.sink_file,
            exp.files_dir,
            source,
            f"{where}.sink_file",
            sink=True,
            overwrite=t.overwrite,
        )
        steps = event_profile(t, where, source)
        if t.enforce == "application" and t.rate is None and steps is None:
            fail(
                f"{where}.enforce",
                'enforce = "application" caps a rate or a profile; this transfer has neither',
            )
        if t.enforce == "tbf" and (t.rate is None or steps is not None):
            fail(
                f"{where}.enforce",
                'enforce = "tbf" keeps one rate with a token bucket on the source host: '
                "give rate, and no profile",
            )
        if t.pace_headroom and (steps is None or t.enforce != "pacing" or t.protocol != "tcp"):
            fail(
                f"{where}.pace_headroom",
                "pace_headroom is for a TCP transfer whose profile the pacing keeps",
            )
        if t.protocol == "udt":
            steps = udt_profile(t, steps, topo, where, fail)
        elif t.cc == UDT_NATIVE:
            fail(f"{where}.cc", 'cc = "udt" is UDT\'s own congestion control: add protocol = "udt"')
        for k in range(n):
            src = host(srcs[k % len(srcs)], f"{where}.src")
            dst = host(dsts[k % len(dsts)], f"{where}.dst")
            if src == dst:
                fail(f"{where}.dst", f"source and destination are the same host {src!r}")
            if steps is not None:
                within_path(
                    steps, path_rate_bps(topo, src, dst), src, dst, f"{where}.profile", fail
                )
            at = date(t.at + k * spacing, f"{where}.at" if k == 0 else f"{where}.spacing")
            events.append(
                Transfer(
                    id=new_id(None, base if n == 1 else f"{base}.{k + 1}", f"{where}.id"),
                    at_us=at,
                    src=src,
                    dst=dst,
                    volume=t.volume,
                    cc="udt" if t.protocol == "udt" else t.cc,
                    streams=t.streams,
                    rate_bps=t.rate if t.protocol == "tcp" or steps is None else None,
                    udt_control="native" if t.protocol == "udt" and steps is None else "fixed",
                    direction=t.direction or direction(src, dst),
                    source_file=src_file,
                    sink_file=sink_file,
                    wait=t.wait,
                    profile=steps,
                    enforce=t.enforce,
                    protocol=t.protocol,
                    deadline_us=t.deadline,
                    socket_buffer_bytes=t.socket_buffer,
                    pace_headroom=t.pace_headroom,
                )
            )
            if t.deadline is not None:
                within_deadline(t, steps, path_rate_bps(topo, src, dst), f"{where}.deadline", fail)
        last = t.at + (n - 1) * spacing
        if steps is not None:
            needs_us = profiles.time_to_send_us(steps, t.volume)
            if t.wait and last + needs_us > exp.duration:
                fail(
                    f"{where}.volume",
                    f"{t.volume} bytes need {needs_us / 1e6:.3g} s at the "
                    f"profile's rates: past the end of the timeline "
                    f"({exp.duration / 1e6:g} s)",
                )
            continue
        fastest = min(r for r in (t.rate, top_rate) if r)
        if t.wait and last + t.volume * 8e6 / fastest > exp.duration:  # (adverse: stopped)
            fail(
                f"{where}.volume",
                f"{t.volume} bytes cannot arrive before the end of the "
                f"timeline ({exp.duration / 1e6:g} s) even at "
                f"{fastest / 1e6:g} Mbit/s, the fastest this path allows",
            )
    for i, p in enumerate(sections.pingpong):
        where = f"pingpong[{i}]"
        src, dst = host(p.src, f"{where}.src"), host(p.dst, f"{where}.dst")
        if src == dst:
            fail(f"{where}.dst", f"source and destination are the same host {src!r}")
        events.append(
            Pingpong(
                id=new_id(p.id, f"pp{i + 1}", f"{where}.id"),
                at_us=date(p.at, f"{where}.at"),
                src=src,
                dst=dst,
                count=p.count,
                size=p.size,
                reply_size=p.reply_size if p.reply_size != p.size else None,
                cc=p.cc,
                rate_bps=p.rate,
                direction=p.direction or direction(src, dst),
            )
        )
    for i, u in enumerate(sections.udp):
        where = f"udp[{i}]"
        src, dst = host(u.src, f"{where}.src"), host(u.dst, f"{where}.dst")
        if src == dst:
            fail(f"{where}.dst", f"source and destination are the same host {src!r}")
        at = date(u.at, f"{where}.at")
        if at + u.duration > exp.duration:
            fail(f"{where}.duration", "the stream would run past the end of the timeline")
        events.append(
            Udp(
                id=new_id(u.id, f"udp{i + 1}", f"{where}.id"),
                at_us=at,
                src=src,
                dst=dst,
                rate_bps=u.rate,
                duration_us=u.duration,
                size=u.size,
                arrivals=u.arrivals,
                seed=exp.seed + i,
                wait=u.wait,
            )
        )
    background_flows = 0.0
    for i, b in enumerate(sections.tcp_background):
        where = f"tcp_background[{i}]"
        for name in b.src:
            host(name, f"{where}.src")
        for name in b.dst:
            host(name, f"{where}.dst")
        at = date(b.at, f"{where}.at")
        if at + b.duration > exp.duration:
            fail(f"{where}.duration", "the flows would start past the end of the timeline")
        sz = b.sizes
        if sz.distribution == "pareto" and (sz.shape is None or sz.shape <= 1):
            fail(f"{where}.sizes.shape", "a Pareto size distribution needs shape > 1 (finite mean)")
        if sz.distribution == "weibull" and (sz.shape is None or sz.shape <= 0):
            fail(f"{where}.sizes.shape", "a Weibull size distribution needs shape > 0")
        background_flows += b.duration / b.mean_gap
        if background_flows > MAX_BACKGROUND_FLOWS:  # over every section, not each
            expected = sum(s.duration / s.mean_gap for s in sections.tcp_background)
            fail(
                f"{where}.mean_gap",
                f"{expected:.0f} background flows expected in all, more than "
                f"{MAX_BACKGROUND_FLOWS}; use longer mean gaps",
            )
        events.append(
            TcpBackground(
                id=new_id(b.id, f"bg{i + 1}", f"{where}.id"),
                at_us=at,
                src=b.src,
                dst=b.dst,
                duration_us=b.duration,
                mean_gap_us=b.mean_gap,
                distribution=sz.distribution,
                mean_bytes=sz.mean,
                shape=sz.shape,
                cc=b.cc,
                wait=b.wait,
            )
        )
    for i, s in enumerate(sections.set):
        where = f"set[{i}]"
        link = links.get(s.link)
        if link is None or not link.emulated:
            emulated = sorted(n for n, lk in links.items() if lk.emulated)
            fail(
                f"{where}.link",
                f"unknown or not emulated link {s.link!r}; emulated links: "
                f"{', '.join(emulated) or 'none'}",
            )
        given = "rate" in s.model_fields_set
        if not (given or s.delay is not None or s.loss is not None):
            fail(where, "nothing to change: give rate, delay or loss")
        events.append(
            SetLink(
                id=new_id(s.id, f"set{i + 1}", f"{where}.id"),
                at_us=date(s.at, f"{where}.at"),
                link=s.link,
                direction=s.direction,
                rate_bps=s.rate,
                rate_given=given,
                delay_us=s.delay,
                loss=s.loss,
            )
        )
    for i, c in enumerate(sections.command):
        where = f"command[{i}]"
        name = host(c.host, f"{where}.host")
        steps = event_profile(c, where, source)
        if steps is not None and any(r == 0 for _, r in steps):
            fail(f"{where}.profile", "a command's pacer cannot pause (a rate of 0): a transfer can")
        if steps is not None:
            # where the command sends is its own business: its profile must fit the
            # fastest path out of its host
            out_bps = [path_rate_bps(topo, name, other) for other in hosts if other != name]
            out_limited_bps = [r for r in out_bps if r]
            if out_limited_bps and len(out_limited_bps) == len(out_bps):
                for k, (_at, rate) in enumerate(steps):
                    if rate > max(out_limited_bps):
                        fail(
                            f"{where}.profile[{k}]",
                            f"{format_rate(rate)} exceeds "
                            f"{format_rate(max(out_limited_bps))}, the "
                            f"fastest path out of {name}",
                        )
        if c.control_port is not None and not (steps is not None or c.cc is not None):
            fail(
                f"{where}.control_port",
                "control_port names the connection a profile or cc "
                "leaves alone; this command has neither",
            )
        events.append(
            Command(
                id=new_id(c.id, f"cmd{i + 1}", f"{where}.id"),
                at_us=date(c.at, f"{where}.at"),
                host=name,
                argv=c.argv,
                check=c.check,
                wait=c.wait,
                profile=steps,
                cc=c.cc,
                control_port=c.control_port,
                output_limit_bytes=c.output_limit,
            )
        )
    if len(events) > MAX_EVENTS:
        fail(
            "(file)",
            f"{len(events)} timeline events (groups expanded): at most "
            f"{MAX_EVENTS}; use [[tcp_background]] for many short flows",
        )
    if not events:
        fail(
            "(file)",
            "the timeline is empty: add at least one [[transfer]], [[pingpong]], "
            "[[udp]], [[tcp_background]] or [[command]]",
        )
    events.sort(key=lambda e: (e.at_us, e.id))
    if exp.start_jitter and events[-1].at_us + exp.start_jitter >= exp.duration:
        fail(
            "experiment.start_jitter",
            f"{exp.start_jitter / 1e6:g} s after the last event ({events[-1].at_us / 1e6:g} s) "
            f"reaches the timeline's end ({exp.duration / 1e6:g} s)",
        )
    return Experiment(
        name=exp.name or topo.name,
        repetitions=exp.repetitions,
        seed=exp.seed,
        duration_us=exp.duration,
        interval_us=exp.interval,
        events=tuple(events),
        start_jitter_us=exp.start_jitter,
    )
