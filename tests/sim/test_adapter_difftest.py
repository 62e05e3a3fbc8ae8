"""The simulator's adapter against Linux, event for event (`itb cc verify`'s last part):
each of Linux's algorithms that itb-sim runs, called through the translation between
ns-3's state and Linux's tcp_sock (native/sim/linux_state.h), gives the same window,
threshold, window counter and state after every event as the algorithm called directly,
on a script with growth and recoveries; and a translation that forgets what Linux's stack
does at a reduction is caught."""

from __future__ import annotations

import shutil

import pytest

from itb.cc import difftest, oracle
from itb.cli.cc import ADAPTER_SCRIPT


@pytest.fixture(scope="module")
def the_oracle():
    try:
        return oracle.prepare()
    except oracle.OracleError as e:
        pytest.skip(str(e))


@pytest.mark.parametrize("name", difftest.ADAPTED)
def test_linux_through_the_adapter_is_linux_called_directly(the_oracle, name, tmp_path):
    binary = difftest.build(name, 250, the_oracle, out_dir=tmp_path, adapter=True)
    (r,) = difftest.run(binary, [ADAPTER_SCRIPT])
    assert r.ok, r.summary
    assert r.detail["recoveries"] > 0  # the reductions' translation was exercised


def test_a_translation_that_keeps_the_window_counter_through_a_reduction_is_caught(
    the_oracle, tmp_path, monkeypatch
):
    broken = tmp_path / "sim"
    shutil.copytree(difftest.SIM_SOURCES, broken)
    h = broken / "linux_state.h"
    h.write_text(h.read_text().replace("tp->snd_cwnd_cnt = 0;", ""))
    monkeypatch.setattr(difftest, "SIM_SOURCES", broken)
    binary = difftest.build("cubic", 250, the_oracle, out_dir=tmp_path / "bin", adapter=True)
    (r,) = difftest.run(binary, [ADAPTER_SCRIPT])
    assert not r.ok and r.detail["differs"] == "cwnd_cnt", r.summary
