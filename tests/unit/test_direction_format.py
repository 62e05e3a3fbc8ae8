"""A link direction, as ITB's Python writes it for linkem (its configuration and its
runtime updates) and for itb-sim, held to the one schema both read
(native/linkem/direction-format.json; linkem's side: native/linkem/tests/
direction_format.rs; itb-sim's: tests/sim/test_sim_direction_format.py). A field renamed
in the schema fails here."""

from __future__ import annotations

import json

import jsonschema
import pytest

from itb.backends.sim.config import link_record
from itb.emulation import linkem
from itb.engine.execute import set_command
from itb.scenario.experiment.events import SetLink
from itb.scenario.testbed.model import Direction, Loss

SCHEMA = json.loads(linkem.DIRECTION_FORMAT.read_text())


def validator(definition: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{definition}"} | SCHEMA)


def properties(definition: str) -> set[str]:
    return set(SCHEMA["$defs"][definition]["properties"])


DIRECTIONS = [
    Direction(),  # unlimited, no delay, no queue limit
    Direction(rate_bps=100_000_000, delay_us=10_000, queue_bytes=250_000),
    Direction(
        rate_bps=1_000_000_000,
        delay_us=100,
        queue_packets=100,
        loss=Loss(model="gilbert_elliott", p=0.01, r=0.5, loss_good=0.0, loss_bad=0.2),
    ),
]


def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("d", DIRECTIONS)
def test_a_direction_as_written_for_linkem_has_exactly_the_schemas_fields(d):
    doc = linkem.direction_json(d)
    validator("direction").validate(doc)
    assert set(doc) == properties("direction")
    assert set(doc["loss"]) == properties("loss")


def test_the_scenarios_direction_and_loss_are_the_schemas_fields():
    # (a field added to the model, or one renamed in the schema, is seen here)
    assert set(Direction.model_fields) == properties("direction")
    assert set(Loss.model_fields) == properties("loss")
    assert set(Loss.model_fields["model"].annotation.__args__) == set(
        SCHEMA["$defs"]["loss"]["properties"]["model"]["enum"]
    )


def test_a_runtime_update_is_one_of_the_schemas_updates():
    full = SetLink(
        id="s", at_us=0, link="rl-rr", direction="both", rate_bps=5_000_000, rate_given=True,
        delay_us=2000, loss=Loss(model="bernoulli", p=0.001),
    )  # fmt: skip
    cmd = set_command(full, "ba")
    validator("update").validate(cmd)
    assert set(cmd) == {"dir", "rate_bps", "delay_us", "loss"} <= properties("update")
    unlimited = linkem.update_json("ab", None)  # the rate lifted: null, not absent
    validator("update").validate(unlimited)
    assert unlimited == {"dir": "ab", "rate_bps": None}
    assert linkem.update_json("ab") == {"dir": "ab"}  # nothing changed


def test_a_field_the_schema_has_not_is_refused_by_it():
    bad = linkem.direction_json(DIRECTIONS[1]) | {"rate": 1}
    with pytest.raises(jsonschema.ValidationError, match="'rate' was unexpected"):
        validator("direction").validate(bad)


def test_itb_sims_links_carry_each_direction_as_the_schema_has_it():
    from tests.unit.test_sim_config import TOPO

    for lk in TOPO.links:
        kind, text = link_record(lk).split(" ", 1)
        doc = json.loads(text)
        assert kind == "link" and doc["name"] == lk.name and doc["mtu"] == lk.mtu
        for d in ("ab", "ba"):
            validator("direction").validate(doc[d])
    # the bottleneck, 1 Gbit/s and 10 ms each way, its queue one BDP: 1e9 · 0.020 / 8
    (bott,) = [json.loads(link_record(lk).split(" ", 1)[1]) for lk in TOPO.links if lk.emulated]
    assert bott["ab"] == {
        "rate_bps": 1_000_000_000, "delay_us": 10_000, "queue_bytes": 2_500_000,
        "queue_packets": None,
        "loss": {"model": "none", "p": 0.0, "r": 1.0, "loss_good": 0.0, "loss_bad": 1.0},
    }  # fmt: skip
