"""itb-sim reads its links as JSON, each direction in the schema linkem reads
(native/linkem/direction-format.json; the Python writers' side:
tests/unit/test_direction_format.py, linkem's: native/linkem/tests/direction_format.rs):
the fields it reads are the schema's, and a field the schema has not is refused, named."""

from __future__ import annotations

import json
import subprocess

import pytest

pytest.importorskip("ns3", reason="simulation needs the ns3 package (make setup)")

from itb.backends.sim import config, driver  # noqa: E402
from itb.cc import simlinux  # noqa: E402
from itb.emulation import linkem  # noqa: E402
from tests.unit.test_sim_config import TOPO  # noqa: E402

SCHEMA = json.loads(linkem.DIRECTION_FORMAT.read_text())


def properties(definition: str) -> list[str]:
    return sorted(SCHEMA["$defs"][definition]["properties"])


def test_the_fields_itb_sim_reads_of_a_direction_are_the_schemas():
    prog = driver.program(simlinux.objects())
    res = subprocess.run([str(prog), "--direction-fields"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    assert sorted(got["direction"]) == properties("direction")
    assert sorted(got["loss"]) == properties("loss")


def test_a_direction_with_a_field_the_schema_has_not_is_refused_naming_it(tmp_path):
    prog = driver.program(simlinux.objects())
    bott = next(lk for lk in TOPO.links if lk.emulated)
    doc = json.loads(config.link_record(bott).split(" ", 1)[1])
    doc["ab"]["rate"] = doc["ab"].pop("rate_bps")  # as if renamed on one side only
    conf = tmp_path / "sim.conf"
    conf.write_text("run 0 1000000 100000 1000 1 1\nlink " + json.dumps(doc) + "\n")
    res = subprocess.run([str(prog), str(conf), str(tmp_path)], capture_output=True, text=True)
    assert res.returncode != 0
    assert f"link {bott.name} ab: unknown field rate" in res.stderr
