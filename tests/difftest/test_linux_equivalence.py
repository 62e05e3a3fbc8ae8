"""ITB's eBPF congestion controls behave exactly as Linux's own tcp_<name>.c: the
differential test (itb.cc.difftest) runs both through every script in lockstep and
compares cwnd, ssthresh, the window counter and the recovery state after each event.
Linux's source (Debian's linux-source package) is the oracle; without it these tests
fail with the reason, they do not skip. HZ matters only to the jiffies-based BIC and
H-TCP, which also run at 1000 and 100."""

from __future__ import annotations

import os
import re
import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from itb.cc import difftest, oracle

RUNS = [(name, 250) for name in difftest.ALGORITHMS] + [
    (name, hz) for hz in (1000, 100) for name in ("bic", "htcp")
]
SCRIPT_NAMES = (
    "growth-1ms",
    "growth-20ms",
    "growth-200ms",
    "loss-1e-2-20ms",
    "loss-1e-3-20ms",
    "loss-1e-4-20ms",
    "loss-1e-3-1ms",
    "loss-1e-4-200ms",
    "rto",
    "spurious-undo",
    "paced-half-window",
    "idle-restart",
    "app-limited",
)
# Vegas grows by one segment per RTT on the growth scripts' queue-free path, the same rule
# at every window: 2 → 10 000 is 300 M events (a minute of CPU, most of this file's time),
# so here its growth ends at 2 500 (6 M events; jiffies and sequence numbers still wrap
# in the 20 and 200 ms scripts). `itb cc verify vegas` runs them to 10 000.
SHORTER = {"vegas": 2500}


def scripts_of(name: str) -> list[str]:
    to = SHORTER.get(name)
    return [f"{s}:to={to}" if to and s.startswith("growth-") else s for s in SCRIPT_NAMES]


@pytest.fixture(scope="module")
def the_oracle() -> oracle.Oracle:
    if shutil.which("gcc") is None:
        pytest.fail("gcc is needed to build the differential test (apt-get install gcc)")
    try:
        return oracle.prepare()
    except oracle.OracleError as e:
        pytest.fail(f"the oracle cannot be installed here: {e}")


@pytest.fixture(scope="module")
def results(the_oracle) -> dict[tuple[str, int], Future]:
    """Every (algorithm, HZ) built and run, as many at once as there are cores."""
    pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2)

    def one(name: str, hz: int):
        return difftest.run(difftest.build(name, hz, the_oracle), scripts_of(name))

    futures = {key: pool.submit(one, *key) for key in RUNS}
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.parametrize("name,hz", RUNS, ids=[f"{n}-hz{h}" for n, h in RUNS])
def test_identical_to_linux_on_every_script(results, name, hz):
    got = results[(name, hz)].result()
    assert [r.script for r in got] == scripts_of(name)
    bad = [r.summary for r in got if not r.ok]
    assert not bad, "\n".join(bad)
    for r in got:  # each script reached what it is there for, on both sides
        assert r.detail["events"] > 1000 and r.detail["cong_avoid"] > 100, r.summary


def test_highspeed_table_is_linuxs(the_oracle):
    text = (difftest.BPF_SOURCES / "highspeed_table.h").read_text()
    windows = [
        int(x)
        for x in re.search(r"hs_window\[HS_ROWS\] = \{([^}]*)\}", text)
        .group(1)
        .replace("\n", "")
        .split(",")
        if x.strip()
    ]
    decrease = [
        int(x)
        for x in re.search(r"hs_decrease\[HS_ROWS\] = \{([^}]*)\}", text)
        .group(1)
        .replace("\n", "")
        .split(",")
        if x.strip()
    ]
    assert list(zip(windows, decrease)) == difftest.linux_highspeed_table(the_oracle)


def _mutant(tmp_path: Path, name: str, old: str, new: str) -> Path:
    src = (difftest.BPF_SOURCES / f"{name}.bpf.c").read_text()
    assert old in src, f"{name}.bpf.c no longer has {old!r}"
    path = tmp_path / f"{name}.bpf.c"
    path.write_text(src.replace(old, new, 1))
    return path


def test_a_wrong_constant_is_caught_and_named(the_oracle, tmp_path):
    src = _mutant(
        tmp_path, "scalable", "#define SCALABLE_AI_CNT  100U", "#define SCALABLE_AI_CNT  101U"
    )
    binary = difftest.build("scalable", 250, the_oracle, itb_source=src, out_dir=tmp_path)
    [r] = difftest.run(binary, ["growth-20ms"])
    assert not r.ok and r.detail["differs"] in ("cwnd", "cwnd_cnt")
    assert r.detail["linux"] != r.detail["itb"]
    assert "ACK of segment" in r.detail["what"] and r.algorithm == "scalable"
    assert re.match(
        r"scalable \(HZ 250\), script growth-20ms: \w+ differs after event \d+ "
        r"\(t=[\d.]+ s: ACK",
        r.summary,
    )


def test_growth_while_not_cwnd_limited_is_caught(the_oracle, tmp_path):
    # the fault the rewrite fixed: a window that grows while pacing holds the flow back
    src = _mutant(tmp_path, "htcp", "\tif (!itb_cwnd_limited(sk))\n\t\treturn;\n", "")
    binary = difftest.build("htcp", 250, the_oracle, itb_source=src, out_dir=tmp_path)
    [paced, lossy] = difftest.run(binary, ["paced-half-window", "loss-1e-3-20ms"])
    assert not paced.ok and paced.detail["differs"] in ("cwnd", "cwnd_cnt")
    assert lossy.ok  # always cwnd-limited: the same either way
