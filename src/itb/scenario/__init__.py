"""Scenario layer: scenario files (TOML) → a validated, resolved `Scenario`, in two
halves: the testbed (`itb.scenario.testbed`: the network, a `Topology`) and the
experiment on it (`itb.scenario.experiment`: dated events, an `Experiment`); units and
command-line values are shared (`units`, `options`), the whole file is `scenario`.

from itb.scenario import load_testbed
topo = load_testbed("scenarios/examples/dumbbell.toml", {"rate": "100Mbit"})
"""

from itb.scenario.scenario import load_testbed
from itb.scenario.testbed.load import OVERRIDES, testbed_from_dict
from itb.scenario.testbed.model import Direction, Endpoint, Link, Loss, Node, PairDelay, Topology
from itb.scenario.units import (
    RATE_MAX,
    RATE_MIN,
    BufferSpec,
    UnitError,
    format_duration,
    format_rate,
    format_size,
    parse_buffer,
    parse_duration,
    parse_loss,
    parse_rate,
    parse_size,
)

__all__ = [
    "OVERRIDES",
    "RATE_MAX",
    "RATE_MIN",
    "BufferSpec",
    "Direction",
    "Endpoint",
    "Link",
    "Loss",
    "Node",
    "PairDelay",
    "Topology",
    "UnitError",
    "format_duration",
    "format_rate",
    "format_size",
    "load_testbed",
    "parse_buffer",
    "parse_duration",
    "parse_loss",
    "parse_rate",
    "parse_size",
    "testbed_from_dict",
]
