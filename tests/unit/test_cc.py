"""Choosing congestion controls: the kernel's first, else ours; what was loaded is what
gets unloaded; a refused program is reported by its verifier line. No kernel needed:
the host is a fake that answers like bpftool and modprobe."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from itb import cc
from itb.backends.host import Completed
from itb.cc import ebpf, kernel, manage
from itb.errors import CommandFailed, PreflightError
from itb.scenario.experiment.algorithms import ALGORITHMS

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"


class FakeKernel:
    """Answers bpftool and modprobe argv lists, and tracks what is registered."""

    name = "local"

    def __init__(self, available=("reno", "cubic", "bbr"), modules=(), refuse=()):
        self.available = list(available)
        self.modules, self.refuse, self.calls = set(modules), set(refuse), []
        self.registered: dict[str, int] = {}

    def run(self, argv, *, check=True, timeout=60, input=None):
        argv = [str(a) for a in argv]
        self.calls.append(argv)
        rc, out, err = 0, "", ""
        if argv[:2] == ["modprobe", "-n"]:
            rc = 0 if argv[-1] in self.modules else 1
        elif argv[0] == "modprobe":
            self.available.append(argv[-1].removeprefix("tcp_"))
        elif argv[1:] == ["-j", "struct_ops", "show"]:
            out = json.dumps(
                [
                    {"id": i, "name": n, "kernel_struct_ops": "tcp_congestion_ops"}
                    for n, i in self.registered.items()
                ]
            )
        elif argv[1:3] == ["struct_ops", "register"]:
            name = "itb_" + Path(argv[3]).name.removesuffix(".bpf.o")
            if name in self.refuse:
                rc, err = 255, (DATA / "verifier_refusal.txt").read_text()
            else:
                self.registered[name] = len(self.registered) + 1
                self.available.append(name)
                out = f"Registered tcp_congestion_ops {name} id 1\n"
        elif argv[1:4] == ["struct_ops", "unregister", "name"]:
            self.registered.pop(argv[4])
            self.available.remove(argv[4])
        if check and rc:
            raise CommandFailed(self.name, argv, rc, err)
        return Completed(argv, rc, out, err)


@pytest.fixture
def fake(monkeypatch, tmp_path):
    k = FakeKernel()
    monkeypatch.setattr(kernel, "available", lambda: list(k.available))
    monkeypatch.setattr(kernel, "loaded_modules", lambda: set())
    objs = tmp_path / "bpf"
    objs.mkdir()
    for name, alg in ALGORITHMS.items():
        if alg.ours:
            (objs / f"{name}.bpf.o").write_bytes(b"\x7fELF")
    monkeypatch.setenv("ITB_BPF_DIR", str(objs))
    monkeypatch.setenv("ITB_CC_DIR", str(tmp_path / "holders"))
    monkeypatch.setattr(ebpf, "KERNEL_BTF", tmp_path)  # exists
    return k


def test_every_algorithm_of_ours_has_a_source_that_names_its_publication():
    for name, alg in ALGORITHMS.items():
        if not alg.ours:
            continue
        head = (REPO / "bpf" / f"{name}.bpf.c").read_text()[:3000]
        assert f'.name = "{alg.ours_name}"' in (REPO / "bpf" / f"{name}.bpf.c").read_text()
        if name != "nocc":
            surname = (
                alg.reference.split(",")[0].split()[-1]
                if "RFC" not in alg.reference
                else alg.reference
            )
            assert surname in head, f"{name}: header does not cite {alg.reference}"
            assert re.search(r"[Dd]iffer", head), f"{name}: header does not say how it differs"


def test_the_kernels_own_implementation_is_preferred(fake):
    fake.available.append("htcp")
    (r,) = cc.ensure(["htcp"], host=fake)
    assert (r.kernel_name, r.source, r.loaded_now) == ("htcp", "built-in", False)
    assert not any("register" in c for c in fake.calls)


def test_a_kernel_module_is_loaded_before_ours(fake):
    fake.modules.add("tcp_bic")
    (r,) = cc.ensure(["bic"], host=fake)
    assert (r.kernel_name, r.source, r.loaded_now) == ("bic", "module", True)
    assert ["modprobe", "tcp_bic"] in fake.calls


def test_ours_is_registered_and_released_when_the_kernel_lacks_it(fake):
    done = cc.ensure(["reno", "scalable", "nocc"], host=fake)
    assert [(r.kernel_name, r.source, r.loaded_now) for r in done] == [
        ("reno", "built-in", False),
        ("itb_scalable", "ours", True),
        ("itb_nocc", "ours", True),
    ]
    assert cc.release(done, host=fake) == ["itb_scalable", "itb_nocc"]
    assert fake.registered == {}


def test_ours_already_registered_is_used_and_left_registered(fake):
    cc.ensure(["vegas"], host=fake)
    (r,) = cc.ensure(["vegas"], host=fake)
    assert r.loaded_now is False
    assert cc.release([r], host=fake) == [] and "itb_vegas" in fake.registered


def test_a_refused_program_names_the_algorithm_and_the_verifier_line(fake):
    fake.refuse.add("itb_htcp")
    with pytest.raises(cc.CcLoadError) as e:
        cc.ensure(["scalable", "htcp"], host=fake)
    assert str(e.value) == (
        "congestion control 'htcp' could not be loaded: verifier: no write "
        "support to tcp_sock at off 1672 (program bad_ssthresh)"
    )
    assert fake.registered == {}  # scalable, loaded first, was undone


def test_missing_btf_or_object_is_a_clear_refusal(fake, monkeypatch, tmp_path):
    (tmp_path / "bpf" / "bic.bpf.o").unlink()
    with pytest.raises(cc.CcLoadError, match=r"'bic'.*bic.bpf.o is not built: run `make bpf`"):
        cc.ensure(["bic"], host=fake)
    monkeypatch.setattr(ebpf, "KERNEL_BTF", tmp_path / "nothing")
    with pytest.raises(cc.CcLoadError, match=r"'highspeed'.*no BTF"):
        cc.ensure(["highspeed"], host=fake)


def test_unknown_names_and_kernel_ones_are_refused_by_unload(fake):
    with pytest.raises(PreflightError, match="unknown congestion control 'newreno'"):
        cc.ensure(["newreno"], host=fake)
    with pytest.raises(PreflightError, match="'cubic' is the kernel's"):
        cc.unload(["cubic"], host=fake)


def _held_by_a_dead_process(tmp_path, kernel_name):
    """What a SIGKILLed run leaves: a holder record whose process is gone."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    (tmp_path / "holders" / f"{kernel_name}.json").write_text(
        json.dumps(
            {
                "registered_by_run": True,
                "holders": [{"pid": dead.pid, "start": 1, "count": 1, "prefix": "x"}],
            }
        )
    )


def test_clean_unregisters_only_ours_that_nobody_holds(fake, tmp_path):
    held = cc.ensure(["bic", "highspeed"], host=fake)
    fake.registered["someone_elses"] = 99
    kept = cc.clean(host=fake)  # this process, alive, holds both: another prefix's run
    assert kept.unregistered == [] and set(kept.kept) == {"itb_bic", "itb_highspeed"}
    assert f"PID {os.getpid()}" in kept.kept["itb_bic"]
    _held_by_a_dead_process(tmp_path, "itb_bic")
    _held_by_a_dead_process(tmp_path, "itb_highspeed")
    assert cc.clean(host=fake).unregistered == ["itb_bic", "itb_highspeed"]
    assert list(fake.registered) == ["someone_elses"]
    assert cc.release(held, host=fake) == []  # already gone: nothing to do


def test_the_last_run_to_let_go_unregisters(fake):
    first = cc.ensure(["scalable"], host=fake)  # registers it
    second = cc.ensure(["scalable"], host=fake)  # another run (same process here) uses it
    assert cc.release(first, host=fake) == [] and "itb_scalable" in fake.registered
    with pytest.raises(PreflightError, match="in use by PID"):
        cc.unload(["scalable"], host=fake)
    assert cc.release(second, host=fake) == ["itb_scalable"]
    assert fake.registered == {}


def test_status_says_where_each_comes_from_and_whether_usable(fake):
    fake.modules.add("tcp_htcp")
    cc.ensure(["scalable"], host=fake)
    rows = {s.name: s for s in manage.status(host=fake)}
    assert (rows["cubic"].source, rows["cubic"].usable) == ("built-in", True)
    assert (rows["htcp"].source, rows["htcp"].usable) == ("module", False)
    assert (rows["scalable"].kernel_name, rows["scalable"].usable) == ("itb_scalable", True)
    assert (rows["bic"].source, rows["bic"].usable) == ("ours", False)
    assert set(rows) == set(ALGORITHMS)


def test_first_failure_line_without_a_verifier_log():
    assert (
        ebpf.first_failure_line(
            "libbpf: failed to find BTF for struct tcp_congestion_ops\n"
            "Error: failed to open object\n"
        )
        == "libbpf: failed to find BTF for struct tcp_congestion_ops"
    )
    assert ebpf.first_failure_line("") == "bpftool failed without a message"
