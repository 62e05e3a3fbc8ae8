"""A cell's bottleneck is read from its own run (no link name is assumed): its metrics'
context when analysed, else the one emulated link of its resolved topology."""

from __future__ import annotations

import json
from pathlib import Path

from itb.analysis.cells import bottleneck_link
from itb.scenario import load_testbed
from itb.scenario.scenario import load_scenario
from itb.sweep.index import IndexCell

ROOT = Path(__file__).resolve().parents[2]


def resolved(tmp_path: Path, topology) -> IndexCell:
    run = tmp_path / "runs" / "cell-1"
    run.mkdir(parents=True)
    exp = load_scenario(ROOT / "scenarios" / "nxe" / "fair-share-4x50M.toml").experiment
    (run / "scenario.resolved.json").write_text(
        json.dumps(
            {
                "topology": json.loads(topology.canonical_json()),
                "experiment": json.loads(exp.canonical_json()),
            }
        )
    )
    return IndexCell(name="cell-1", run="runs/cell-1")


def test_the_dumbbells_one_emulated_link_is_the_bottleneck(tmp_path):
    topo = load_scenario(ROOT / "scenarios" / "nxe" / "fair-share-4x50M.toml").topology
    assert [lk.name for lk in topo.links if lk.emulated] == ["rl-rr"]
    assert bottleneck_link(tmp_path, resolved(tmp_path, topo)) == "rl-rr"


def test_a_topology_with_several_emulated_links_and_no_metrics_says_none(tmp_path):
    topo = load_testbed(ROOT / "scenarios" / "examples" / "chain.toml")
    emulated = [lk.name for lk in topo.links if lk.emulated]
    assert len(emulated) > 1, emulated
    assert bottleneck_link(tmp_path, resolved(tmp_path, topo)) is None


def test_a_cell_not_run_yet_has_no_bottleneck(tmp_path):
    assert bottleneck_link(tmp_path, IndexCell(name="none", run="runs/none")) is None
