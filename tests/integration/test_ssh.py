"""The SSH backend against real OpenSSH servers: `itb lab up` starts one sshd per network
namespace (each with its own host key), the engine drives them over real TCP.

One lab serves the module (prefix itbs); every test leaves its hosts as it found them,
which the `clean_hosts` check verifies: no process but sshd in any lab namespace, the
sysctls and qdiscs as before, no ITB directory.

Wall time: every `itb run` costs a fixed preflight, deployment and teardown over SSH, so
the tests run as few of them as they can (the two that only read a finished run share
one), each repetition is short (1 MB transfers, `_scenario`) unless the transfers must
still be in flight when the test acts, and the real-bottleneck test, which has a lab of
its own, works in the background while the tests whose checks cannot be disturbed by
the load run (`_Background`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import tomli_w

from tests.integration.conftest import (
    FLOW,
    REPO,
    calibrate_over_ssh,
    itb,
    lab_up,
    late_bursts_only,
    ssh_env,
)
from tests.integration.wakeup import wakeup_lag

DATA = Path(__file__).parent / "data"
TWO_PAIRS = DATA / "ssh-two-pairs.toml"
PREFIX = "itbs"
WATCHED = (
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_no_metrics_save",
    "net.ipv4.tcp_slow_start_after_idle",
)


SMALL_VOLUME = "1MB"
SMALL_VOLUME_BYTES = 1_000_000


def _scenario(d: Path, volume: str = SMALL_VOLUME, cc: str = "cubic") -> Path:
    """TWO_PAIRS with another volume per transfer and/or congestion control, in d."""
    text = TWO_PAIRS.read_text()
    for old, new in (('volume = "10MB"', f'volume = "{volume}"'), ('cc = "cubic"', f'cc = "{cc}"')):
        assert text.count(old) == 1, f"{TWO_PAIRS} changed: no single {old!r}"
        text = text.replace(old, new)
    path = d / f"ssh-two-pairs-{volume}-{cc}.toml"
    path.write_text(text)
    return path


def _env(state: Path) -> dict:
    return ssh_env(PREFIX, state)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    d = tmp_path_factory.mktemp("lab")
    with lab_up(d, PREFIX, 4, "198.19.21") as (inv, env, res):
        assert str(inv) in res.stdout and "[[host]]" in res.stdout  # printed
        yield {"dir": d, "inventory": inv, "env": env, "before": _host_snapshot(d / "lab")}


def _lab_namespaces(lab_dir: Path) -> list[str]:
    return [
        ns
        for ns in json.loads((lab_dir / "lab.json").read_text())["namespaces"]
        if not ns.endswith("lab-sw")
    ]


def _host_snapshot(lab_dir: Path) -> dict:
    """Per lab namespace: its processes' names, watched sysctls, root qdiscs, ITB dirs."""
    snap = {}
    for ns in _lab_namespaces(lab_dir):
        pids = subprocess.run(
            ["ip", "netns", "pids", ns], capture_output=True, text=True
        ).stdout.split()
        comms = sorted(c for p in pids if (c := _comm(int(p))) is not None)
        sysctls = subprocess.run(
            ["ip", "netns", "exec", ns, "sysctl", "-n", *WATCHED], capture_output=True, text=True
        ).stdout.split("\n")
        qdiscs = subprocess.run(
            ["ip", "-n", ns, "-o", "link", "show"], capture_output=True, text=True
        ).stdout
        tc = subprocess.run(
            ["tc", "-n", ns, "qdisc", "show"], capture_output=True, text=True
        ).stdout
        name = ns.split("lab-")[1]
        itb_dirs = sorted(p.name for p in (lab_dir / name / "fs").glob("*"))
        snap[ns] = {
            "procs": comms,
            "sysctls": sysctls,
            "links": len(qdiscs.splitlines()),
            "qdiscs": sorted(line.split()[1] for line in tc.splitlines()),
            "itb_dirs": itb_dirs,
        }
    return snap


def assert_hosts_as_found(lab: dict) -> None:
    now = _host_snapshot(lab["dir"] / "lab")
    assert now == lab["before"]
    for ns, s in now.items():
        assert s["procs"] == ["sshd"], f"{ns}: {s['procs']}"
        assert s["itb_dirs"] == []


def _inventory_variant(lab: dict, tmp_path: Path, host_index: int = 1, **changes) -> Path:
    """The lab's inventory with [ssh] fields or one host's (`host_<field>`; the host at
    host_index: 1 is h1, which plays l1; 3 is h3, r1) changed."""
    import tomllib

    data = tomllib.loads(lab["inventory"].read_text())
    for k, v in changes.items():
        if k.startswith("host_"):
            data["host"][host_index][k[5:]] = v
        else:
            data["ssh"][k] = v
    path = tmp_path / "inventory.toml"
    path.write_text(tomli_w.dumps(data))
    return path


def _run(lab, tmp_path, *args, scenario=TWO_PAIRS, inventory=None, timeout=300):
    return itb(
        "run",
        str(scenario),
        "--inventory",
        str(inventory or lab["inventory"]),
        "--out",
        str(tmp_path / "run"),
        *args,
        env=lab["env"],
        timeout=timeout,
    )


def _meta(tmp_path) -> dict:
    return json.loads((tmp_path / "run" / "meta.json").read_text())


class _Background:
    """A test's work run in a thread of its own, so that its wall time overlaps other
    tests'; the test then waits for it and re-raises whatever it raised (a failed
    assertion, a skip). Only for work on a lab of its own (prefix, control network,
    namespaces), overlapping only tests whose checks do not depend on the machine being
    otherwise idle (refusals, messages, exit codes, what is left on the hosts): the
    timing checks (dispatch skew, calibration verdicts) never run beside it."""

    def __init__(self, work, *args):
        self.error: BaseException | None = None
        self.thread = threading.Thread(
            target=self._run, args=(work, *args), name=work.__name__
        )  # not a daemon: it ends itself
        self.thread.start()

    def _run(self, work, *args) -> None:
        try:
            work(*args)
        except BaseException as e:  # noqa: BLE001 -- handed to the test
            self.error = e

    def wait(self) -> None:
        self.thread.join()

    def result(self) -> None:
        self.wait()
        if self.error is not None:
            raise self.error


_STARTED: list[_Background] = []
REAL_BOTTLENECK_TEST = "test_a_real_bottleneck_is_measured_not_configured"


@pytest.fixture(scope="module")
def real_bottleneck(request, tmp_path_factory):
    """The real-bottleneck test's work (its own lab, ~45 s), started by the first test
    that asks for it, if that test is selected at all; None otherwise."""
    if not any(
        getattr(i, "originalname", i.name) == REAL_BOTTLENECK_TEST for i in request.session.items
    ):
        yield None
        return
    job = _Background(_real_bottleneck, tmp_path_factory.mktemp("real_bottleneck"))
    _STARTED.append(job)
    try:
        yield job
    finally:
        job.wait()  # its lab is down before the module ends, pass or fail


@pytest.fixture(autouse=True)
def _alone_unless_overlapping(request):
    """A test that does not ask for `real_bottleneck` runs only once that is over."""
    if "real_bottleneck" not in request.fixturenames:
        for job in _STARTED:
            job.wait()


@pytest.mark.usefixtures("real_bottleneck")  # overlaps it (see _Background)
def test_an_unknown_host_key_is_refused_and_nothing_changes(lab, tmp_path):
    (tmp_path / "empty_known_hosts").write_text("")
    inv = _inventory_variant(lab, tmp_path, known_hosts=str(tmp_path / "empty_known_hosts"))
    res = _run(lab, tmp_path, inventory=inv)
    assert res.returncode == 4
    assert "host key is not accepted" in res.stderr and "itb inventory trust" in res.stderr
    assert_hosts_as_found(lab)
    # accepting explicitly (--yes: every key) makes the same inventory usable
    res = itb("inventory", "trust", str(inv), "--yes", env=lab["env"])
    assert res.returncode == 0 and "5 key(s) added" in res.stdout
    res = itb("inventory", "check", str(inv), env=lab["env"])
    assert res.returncode == 0, res.stderr


@pytest.mark.usefixtures("real_bottleneck")  # overlaps it (see _Background)
@pytest.mark.parametrize("case", ["key", "unreachable", "cc", "address"])
def test_preflight_refusals_name_host_field_and_reason(lab, tmp_path, case):
    scenario = TWO_PAIRS
    if case == "key":
        inv = _inventory_variant(lab, tmp_path, key=str(tmp_path / "no-such-key"))
        want = ["field key", "no-such-key", "no such file"]
    elif case == "unreachable":
        inv = _inventory_variant(lab, tmp_path, host_port=2222)
        want = ["host h1", "field address", "cannot connect"]
    elif case == "address":
        inv = _inventory_variant(lab, tmp_path, host_data_addr="198.19.0.77/24")
        want = [
            "host h1: field data_addr: 198.19.0.77/24 is not an address of eth1",
            "add_address = true",
        ]
    else:  # the kernel lacks vegas, and the inventory forbids ITB's eBPF on h1
        inv = _inventory_variant(lab, tmp_path, host_ebpf=False)
        scenario = tmp_path / "vegas.toml"
        scenario.write_text(TWO_PAIRS.read_text().replace('cc = "cubic"', 'cc = "vegas"'))
        want = [
            "host h1: congestion control vegas is not available in its kernel",
            "field ebpf: false",
        ]
    res = _run(lab, tmp_path, scenario=scenario, inventory=inv)
    assert res.returncode == 4, res.stdout + res.stderr
    for w in want:
        assert w in res.stderr, res.stderr
    assert_hosts_as_found(lab)


@pytest.fixture
def unprivileged_user():
    """A throw-away account without sudo rights (removed afterwards)."""
    name = "itb-nosudo"
    subprocess.run(["userdel", name], capture_output=True)
    # "*": no password, but not a locked account (sshd without PAM refuses "!")
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/bin/sh", "--password", "*", name],
        check=True,
    )
    try:
        yield name
    finally:
        subprocess.run(["userdel", name], capture_output=True)


@pytest.mark.usefixtures("real_bottleneck")  # overlaps it (see _Background)
def test_a_user_without_sudo_is_refused(lab, tmp_path, unprivileged_user):
    inv = _inventory_variant(lab, tmp_path, user=unprivileged_user)
    res = _run(lab, tmp_path, inventory=inv)
    assert res.returncode == 4, res.stdout + res.stderr
    assert "field user" in res.stderr and "cannot use sudo" in res.stderr
    assert_hosts_as_found(lab)


def _session_sshd(lab_dir: Path, host: str) -> list[int]:
    """The sshd processes of one lab host but its listener: its open sessions."""
    state = json.loads((lab_dir / "lab.json").read_text())
    listener = next(s["pid"] for s in state["sshd"] if s["host"] == host)
    ns = f"{PREFIX}lab-{host}"
    pids = subprocess.run(
        ["ip", "netns", "pids", ns], capture_output=True, text=True
    ).stdout.split()
    return [int(p) for p in pids if int(p) != listener and _comm(int(p)) == "sshd"]


def _comm(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:  # it ended meanwhile
        return None


@contextmanager
def _running(lab, tmp_path, reps: int, stage: str, scenario: Path = TWO_PAIRS):
    """A run in the background, yielded once it reached `stage`; killed if still alive
    when the block ends."""
    proc = _start_run(lab, tmp_path, reps, scenario)
    try:
        _wait_for(proc, stage)
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()


def _start_run(lab, tmp_path, reps: int, scenario: Path = TWO_PAIRS):
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "itb.cli",
            "run",
            str(scenario),
            "--inventory",
            str(lab["inventory"]),
            "--out",
            str(tmp_path / "run"),
            "--repeat",
            str(reps),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=lab["env"],
    )


def _wait_for(proc, text: str, timeout: float = 120) -> str:
    seen = ""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            break
        seen += line
        if text in line:
            return seen
    raise AssertionError(f"{text!r} not seen: {seen[-2000:]}")


@pytest.mark.usefixtures("real_bottleneck")  # overlaps it (see _Background)
def test_after_sigkill_of_the_engine_clean_inventory_restores_every_host(lab, tmp_path):
    with _running(lab, tmp_path, 1, "execution 1/1") as proc:
        time.sleep(1.0)
        changed = _host_snapshot(lab["dir"] / "lab")
        assert changed != lab["before"]  # sysctls, qdiscs, ITB's directories: in use
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    res = itb("clean", "--inventory", str(lab["inventory"]), env=lab["env"])
    assert res.returncode == 0, res.stderr
    assert "restored 5 host(s)" in res.stdout
    assert_hosts_as_found(lab)
    res = itb("clean", "--inventory", str(lab["inventory"]), env=lab["env"])
    assert res.returncode == 0 and "nothing of ITB" in res.stdout


@pytest.mark.skipif(
    not (REPO / ".venv-enoslib" / "bin" / "python").exists(),
    reason="EnOSlib's environment not built (make enoslib)",
)
@pytest.mark.usefixtures("real_bottleneck")  # overlaps it (see _Background)
def test_enoslib_static_provider_reserves_runs_and_releases(lab, tmp_path):
    inv = lab["dir"] / "lab" / "enoslib-static.toml"
    res = _run(lab, tmp_path, inventory=inv, scenario=_scenario(tmp_path))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "reserving through EnOSlib (static)" in res.stderr
    assert "releasing the EnOSlib (static) reservation" in res.stderr
    meta = _meta(tmp_path)
    assert meta["inventory"]["provider"] == "static" and meta["status"] == "complete"
    assert set(meta["inventory"]["placement"].values()) == {"h1", "h2", "h3", "h4"}
    assert_hosts_as_found(lab)


def _real_bottleneck(tmp_path: Path) -> None:
    """The work of test_a_real_bottleneck_is_measured_not_configured."""
    if not Path("/usr/sbin/sshd").exists() or not FLOW.exists():
        pytest.skip("needs openssh-server and the native programs")
    # a prefix of its own: the module's lab (prefix itbs) is up meanwhile
    env = {**_env(tmp_path / "state"), "ITB_PREFIX": "itbr"}
    d = tmp_path / "lab"
    res = itb(
        "lab",
        "up",
        "--hosts",
        "4",
        "--dir",
        str(d),
        "--control-net",
        "198.19.22",
        "--no-emulator",
        env=env,
    )
    assert res.returncode == 0, res.stderr
    assert 'role = "emulator"' not in (d / "inventory.toml").read_text()
    try:
        cal = calibrate_over_ssh(TWO_PAIRS, d / "inventory.toml", env, tmp_path / "cal.json", "1")
        assert "real network" in cal["testbed"]["bottleneck"]
        rtt = next(c for c in cal["checks"] if c["quantity"].startswith("idle RTT"))
        assert rtt["ok"] is None and rtt["configured"] is None and rtt["measured"] < 5  # ms, not 20
        assert "the scenario says 20" in rtt["detail"]
        res = itb(
            "run",
            str(_scenario(tmp_path)),
            "--inventory",
            str(d / "inventory.toml"),
            "--out",
            str(tmp_path / "run"),
            env=env,
            timeout=300,
        )
        assert res.returncode == 0, res.stdout + res.stderr
        meta = json.loads((tmp_path / "run" / "meta.json").read_text())
        assert any("real network" in w for w in meta["warnings"])
        assert meta["inventory"]["emulator"] is None
    finally:
        res = itb("lab", "down", "--dir", str(d), env=env)
        assert res.returncode == 0


def test_a_real_bottleneck_is_measured_not_configured(real_bottleneck, tmp_path):
    """A lab whose sides are joined directly (no emulator host): the path is the real
    network; a run says so, the calibration reports its figures without judging them
    against the scenario's. (`_real_bottleneck`, started in the background by the tests
    before this one.)"""
    if real_bottleneck is None:  # not started: cannot happen when this test is selected
        _real_bottleneck(tmp_path)
    else:
        real_bottleneck.result()


def test_a_run_over_ssh_moves_exact_volumes_with_submillisecond_skew(lab, tmp_path):
    with wakeup_lag() as lag:
        res = _run(lab, tmp_path, "--repeat", "2", scenario=_scenario(tmp_path))
    assert res.returncode == 0, res.stdout + res.stderr
    meta = _meta(tmp_path)
    assert meta["backend"] == "ssh" and meta["status"] == "complete"
    assert set(meta["inventory"]["placement"].values()) == {"h1", "h2", "h3", "h4"}
    assert (
        meta["hosts"]["em"]["role"] == "emulator" and meta["hosts"]["h1"]["nic"]["ifname"] == "eth1"
    )
    import pandas as pd

    tr = pd.read_parquet(tmp_path / "run" / "transfers.parquet")
    assert len(tr) == 4 and tr["ok"].all()
    assert (tr["bytes"] == tr["bytes_expected"]).all()
    assert (tr["bytes"] == SMALL_VOLUME_BYTES).all()
    skew = meta["dispatch"]["start_skew"]
    # under 1 ms, plus how late this machine woke a sleeper meanwhile (99th percentile:
    # the unit and simulation tests run alongside on the same cores)
    lag_ms = lag.quantile_ms(0.99)
    assert skew["events"] == 4 and skew["p99_ms"] < 1.0 + lag_ms, (skew, lag_ms)
    for r in (1, 2):
        res_json = json.loads((tmp_path / "run" / f"rep-{r:03d}" / "result.json").read_text())
        for node, c in res_json["clock"].items():
            assert not c["same_clock"] and c["samples"] == 16, node
            assert abs(c["offset_ns"]) <= c["uncertainty_ns"]  # one machine: true offset 0
    bott = pd.read_parquet(tmp_path / "run" / "bottleneck.parquet")
    assert len(bott) > 0  # the emulator host's 1 ms log came back
    assert_hosts_as_found(lab)


def test_killing_a_hosts_sshd_fails_only_that_repetition(lab, tmp_path):
    # three repetitions: the one before and the one after the failed one must stay ok;
    # short ones (1 MB: ~2 s left of the second when its host's sessions are killed)
    with _running(lab, tmp_path, 3, "execution 2/3", _scenario(tmp_path)) as proc:
        time.sleep(0.5)
        victims = _session_sshd(lab["dir"] / "lab", "h3")
        assert victims
        for p in victims:
            os.kill(p, signal.SIGKILL)
        out, _ = proc.communicate(timeout=300)
    meta = _meta(tmp_path)
    assert meta.get("repetition_status") == ["ok", "failed", "ok"], out
    rep2 = json.loads((tmp_path / "run" / "rep-002" / "result.json").read_text())
    assert "host h3" in rep2["reason"] and rep2["environment"]
    assert proc.returncode == 1
    assert_hosts_as_found(lab)


def test_calibrate_measures_the_ssh_testbed_against_its_configuration(lab, tmp_path):
    cal = calibrate_over_ssh(TWO_PAIRS, lab["inventory"], lab["env"], tmp_path / "cal.json")
    assert cal["ok"] or late_bursts_only(cal), cal["checks"]
    assert cal["testbed"]["placement"] == {"l1": "h1", "r1": "h3"}
    checks = {c["quantity"]: c for c in cal["checks"]}
    assert checks["idle RTT (median of 100 pings)"]["ok"]
    tcp = checks["TCP goodput, 1 flow"]  # the path's rate: the 50 Mbit/s access link
    assert tcp["ok"] and tcp["configured"] == 50 and tcp["measured"] > 45
    # the emulator's departures at the rate, or short by what its own lateness explains
    # (as above: seen on a fresh-clone make test with the simulation tests alongside)
    departures = checks["UDP at 1.2 × rate: emulator departures"]
    assert departures["ok"] or late_bursts_only(cal), departures
    assert cal["emulator"]["stats"]["ab"]["tx_segments"] > 0  # linkem's own final figures
    assert cal["inventory"]["mtu"] == 1500 and cal["inventory"]["cpu"]["kernel"]
    assert_hosts_as_found(lab)


def test_sigterm_stops_cleanly_restores_the_hosts_and_the_run_resumes(lab, tmp_path):
    scenario = _scenario(tmp_path)  # short repetitions: the signal comes 0.5 s into the first
    with _running(lab, tmp_path, 2, "execution 1/2", scenario) as proc:
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 143, out
    assert _meta(tmp_path)["status"] == "incomplete"
    assert_hosts_as_found(lab)  # torn down before it exited
    res = _run(lab, tmp_path, "--repeat", "2", "--resume", scenario=scenario)
    assert res.returncode == 0, res.stdout + res.stderr
    assert _meta(tmp_path)["repetition_status"] == ["ok", "ok"]
    assert_hosts_as_found(lab)


def _struct_ops() -> str:
    return subprocess.run(["bpftool", "struct_ops", "show"], capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def cc_and_address_run(lab, tmp_path_factory):
    """One finished run for the two tests that only read what it did and left: its
    congestion control is one the kernel lacks (highspeed: ITB's eBPF one), and h3 (r1,
    a receiver) gets an address ITB adds for the run."""
    for job in _STARTED:  # (module fixtures come before `_alone_unless_overlapping`)
        job.wait()
    d = tmp_path_factory.mktemp("cc_address")
    inv = _inventory_variant(
        lab, d, host_index=3, host_data_addr="198.19.0.77/24", host_add_address=True
    )
    before = _struct_ops()
    res = _run(lab, d, scenario=_scenario(d, cc="highspeed"), inventory=inv)
    return {"dir": d, "res": res, "struct_ops_before": before}


def test_a_cc_the_kernel_lacks_is_itbs_ebpf_registered_on_the_hosts_and_removed(
    lab, cc_and_address_run
):
    run, res = cc_and_address_run["dir"], cc_and_address_run["res"]
    assert res.returncode == 0, res.stdout + res.stderr
    meta = _meta(run)
    assert meta["congestion_controls"][0]["kernel_name"] == "itb_highspeed"
    import pandas as pd

    tr = pd.read_parquet(run / "run" / "transfers.parquet")
    assert (tr["cc_in_use"] == "itb_highspeed").all()  # what the sockets ran
    after = _struct_ops()
    assert after == cc_and_address_run["struct_ops_before"]  # unregistered by the teardown
    assert_hosts_as_found(lab)


def test_an_address_itb_adds_for_the_run_is_removed_after(lab, cc_and_address_run):
    run, res = cc_and_address_run["dir"], cc_and_address_run["res"]
    assert res.returncode == 0, res.stdout + res.stderr
    plan = json.loads((run / "run" / "rep-001" / "plan.json").read_text())
    send = next(p for p in plan if p["role"] == "send" and p["node"] == "l1")
    assert "198.19.0.77:20001" in send["argv"]  # l1 sent to the address ITB added on h3
    import pandas as pd

    assert pd.read_parquet(run / "run" / "transfers.parquet")["ok"].all()
    addrs = subprocess.run(
        ["ip", "-n", f"{PREFIX}lab-h3", "-o", "addr"], capture_output=True, text=True
    ).stdout
    assert "198.19.0.77" not in addrs and "198.19.0.3/24" in addrs
    assert_hosts_as_found(lab)


def _routes_and_offloads(lab: dict) -> dict:
    """Per lab namespace: its routes, and its data interface's TSO and GSO settings."""
    out = {}
    for ns in _lab_namespaces(lab["dir"] / "lab"):
        routes = subprocess.run(["ip", "-n", ns, "route", "show"], capture_output=True, text=True)
        feats = subprocess.run(
            ["ip", "netns", "exec", ns, "ethtool", "-k", "eth1"], capture_output=True, text=True
        ).stdout
        out[ns] = (
            sorted(routes.stdout.splitlines()),
            sorted(x for x in feats.splitlines() if "segmentation-offload:" in x),
        )
    return out


def test_the_tcp_options_of_a_testbed_hold_on_ssh_hosts_and_are_undone(lab, tmp_path):
    """ack_every_segment and open_receive_window over SSH: during the run each end host's
    routes to the others carry quickack and initrwnd and its interface sends one segment a
    packet; after it, the hosts' routes and offloads are as they were."""
    before = _routes_and_offloads(lab)
    text = TWO_PAIRS.read_text().replace('volume = "10MB"', 'volume = "1MB"')
    text = text.replace(
        'topology = "dumbbell"',
        'topology = "dumbbell"\nack_every_segment = true\nopen_receive_window = true',
    )
    text += (
        '\n[[command]]\nid = "routes"\nhost = "l1"\nat = "0s"\nargv = ["ip", "route", "show"]\n'
        '\n[[command]]\nid = "offloads"\nhost = "r2"\nat = "0s"\n'
        'argv = ["ethtool", "-k", "eth1"]\n'  # (the lab hosts' data interface)
    )
    scenario = tmp_path / "options.toml"
    scenario.write_text(text)
    res = _run(lab, tmp_path, scenario=scenario)
    assert res.returncode == 0, res.stdout + res.stderr
    rep = tmp_path / "run" / "rep-001" / "nodes"
    routes = (rep / "l1" / "routes.command.out").read_text().splitlines()
    # one host route to each of the other three end hosts, with both metrics; the buffer
    # (16 MiB at least) in 1448-byte segments: ceil(16777216 / 1448) = 11587
    host_routes = [r for r in routes if "/" not in r.split()[0] and "quickack 1" in r]
    assert len(host_routes) == 3, routes
    assert all("initrwnd 11587" in r for r in host_routes), host_routes
    offloads = (rep / "r2" / "offloads.command.out").read_text()
    assert "tcp-segmentation-offload: off" in offloads
    assert "generic-segmentation-offload: off" in offloads
    assert _routes_and_offloads(lab) == before
    assert_hosts_as_found(lab)
