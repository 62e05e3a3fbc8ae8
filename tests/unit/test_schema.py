"""Invalid testbed files: each gives a ScenarioError naming the file, the field and why."""

import pytest

import itb.scenario as scenario
from itb.errors import ScenarioError
from itb.scenario import load_testbed

SRC = "bad.toml"

STAR = {
    "testbed": {"topology": "star"},
    "star": {"spoke": [{"hosts": ["a1"]}, {"hosts": ["b1"]}]},
}
CHAIN = {
    "testbed": {"topology": "chain"},
    "chain": {"routers": 2, "host": [{"name": "a", "router": 0}, {"name": "b", "router": 1}]},
}


def with_(base: dict, **sections) -> dict:
    """A copy of `base` with sections replaced or added."""
    return {**base, **sections}


def error(data: dict) -> ScenarioError:
    with pytest.raises(ScenarioError) as exc:
        scenario.testbed_from_dict(data, SRC)  # imported via the module: pytest collects test*
    e = exc.value
    assert str(e).startswith(f"{SRC}: {e.field}: ")
    assert e.exit_code == 2
    return e


# (data, field, words in the reason) — the brief's list first, then more
CASES = [
    (
        {"bottleneck": {"rate": "1Gbit", "colour": "red"}},
        "bottleneck.colour",
        "unknown field 'colour'",
    ),
    ({"testbed": {"nmae": "x"}}, "testbed.nmae", "unknown field 'nmae'"),
    ({"extra": {}}, "extra", "unknown field 'extra'"),
    ({"bottleneck": {"rate": "-1Gbit"}}, "bottleneck.rate", "negative"),
    ({"bottleneck": {"rate": "100"}}, "bottleneck.rate", "no unit"),
    ({"bottleneck": {"rate": 100}}, "bottleneck.rate", "no unit"),
    ({"bottleneck": {"rtt": "11s"}}, "bottleneck.rtt", "10 s"),
    (
        {"pair_rtt": {"distribution": "fixed", "values": ["20ms", "12s"]}},
        "pair_rtt.values[1]",
        "10 s",
    ),
    ({"bottleneck": {"buffer": "1000B"}}, "bottleneck.buffer", "below one MTU"),
    (
        {"bottleneck": {"buffer": "2000B"}, "testbed": {"mtu": 9000}},
        "bottleneck.buffer",
        "below one MTU (9000 B)",
    ),
    (
        {"bottleneck": {"rate": "10Mbit", "rtt": "1ms", "buffer": "1bdp"}},
        "bottleneck.buffer",
        "below one MTU",
    ),
    ({"bottleneck": {"buffer_reverse": "0pkt"}}, "bottleneck.buffer_reverse", "below one packet"),
    ({"testbed": {"topology": "ring"}}, "testbed.topology", "allowed: dumbbell, chain, star"),
    ({"testbed": {"mtu": 1400}}, "testbed.mtu", "allowed: 1500, 9000"),
    ({"testbed": {"ack_every_segment": "yes"}}, "testbed.ack_every_segment", "boolean"),
    ({"testbed": {"families": []}}, "testbed.families", "at least one"),
    ({"testbed": {"families": ["ipv4", "ipx"]}}, "testbed.families", "'ipx'"),
    ({"testbed": {"families": ["ipv4", "ipv4"]}}, "testbed.families", "twice"),
    (
        {"bottleneck": {"delay_forward": "1001ms", "delay_reverse": "10ms"}},
        "bottleneck.delay_forward",
        "1 s",
    ),
    ({"bottleneck": {"rtt": "2002ms"}}, "bottleneck.rtt", "at most 1 s"),
    ({"bottleneck": {"loss": "101%"}}, "bottleneck.loss", "100%"),
    ({"bottleneck": {"loss": 1.5}}, "bottleneck.loss", "at most 1.0"),
    ({"bottleneck": {"rtt": "20ms", "delay_forward": "10ms"}}, "bottleneck.rtt", "not both"),
    ({"bottleneck": {"delay_forward": "10ms"}}, "bottleneck.delay_reverse", "give both"),
    ({"bottleneck": {"rate": "5Mbit"}}, "bottleneck.rate", "10Mbit to 40Gbit"),
    ({"bottleneck": {"rate": "100MB/s"}}, "bottleneck.rate", "bytes"),
    (
        {"bottleneck": {"loss": {"model": "gilbert-elliott", "p": 0.01}}},
        "bottleneck.loss",
        "needs r",
    ),
    (
        {"bottleneck": {"loss": {"model": "gilbert-elliott", "p": 0.01, "r": 1.2}}},
        "bottleneck.loss.r",
        "at most",
    ),
    (
        {"bottleneck": {"loss": {"model": "gilbert-elliott", "p": 0.1, "r": 0.1, "x": 1}}},
        "bottleneck.loss.x",
        "unknown field",
    ),
    (
        {"bottleneck": {"loss": {"model": "markov"}}},
        "bottleneck.loss.model",
        "unsupported loss model",
    ),
    (
        {"bottleneck": {"loss": {"model": "bernoulli", "p": 0.1, "r": 0.5}}},
        "bottleneck.loss",
        "takes no r",
    ),
    ({"dumbbell": {"pairs": 0}}, "dumbbell.pairs", "between 1 and 100"),
    ({"dumbbell": {"pairs": "2"}}, "dumbbell.pairs", "whole number"),
    ({"dumbbell": {"access_rate": "1Tbit"}}, "dumbbell.access_rate", "unknown rate unit"),
    ({"bottleneck": "fast"}, "bottleneck", "expected a table"),
    ({"testbed": {"name": "has space"}}, "testbed.name", "not a valid testbed name"),
    (
        {"pair_rtt": {"distribution": "gauss"}},
        "pair_rtt.distribution",
        "allowed: fixed, multimodal",
    ),
    ({"pair_rtt": {"distribution": "exponential"}}, "pair_rtt.mean", "needs mean"),
    (
        {"pair_rtt": {"distribution": "exponential", "mean": "50ms", "modes": ["1ms"]}},
        "pair_rtt.modes",
        "does not apply",
    ),
    (
        {"pair_rtt": {"distribution": "fixed", "values": ["20ms"]}},
        "pair_rtt.values",
        "1 values for 2 pairs",
    ),
    (
        {"pair_rtt": {"distribution": "multimodal", "modes": ["20ms"], "weights": [1, 2]}},
        "pair_rtt.weights",
        "one per mode",
    ),
    (
        {"pair_rtt": {"distribution": "multimodal", "modes": ["20ms", "5ms"], "weights": [0, 0]}},
        "pair_rtt.weights",
        "not all zero",
    ),
    ({"pair_rtt": {"distribution": "poisson", "mean": "0ms"}}, "pair_rtt.mean", "positive"),
    ({"pair_rtt": {"seed": 1}}, "pair_rtt.distribution", "required"),
    # chain / star
    (
        with_(
            CHAIN,
            chain={"routers": 2, "host": [{"name": "a", "router": 0}, {"name": "a", "router": 1}]},
        ),
        "chain.host[1].name",
        "duplicate node name 'a'",
    ),
    (
        with_(
            CHAIN,
            chain={"routers": 2, "host": [{"name": "c0", "router": 0}, {"name": "b", "router": 1}]},
        ),
        "chain.host[0].name",
        "duplicate node name 'c0'",
    ),
    (
        with_(STAR, star={"spoke": [{"hosts": ["a1", "x"]}, {"hosts": ["x"]}]}),
        "star.spoke[1].hosts[0]",
        "duplicate node name 'x'",
    ),
    (
        with_(STAR, star={"spoke": [{"hosts": ["hub"]}, {"hosts": ["b"]}]}),
        "star.spoke[0].hosts[0]",
        "duplicate node name 'hub'",
    ),
    (
        with_(
            CHAIN,
            chain={
                "routers": 2,
                "host": [{"name": "Alice", "router": 0}, {"name": "b", "router": 1}],
            },
        ),
        "chain.host[0].name",
        "not a valid node name",
    ),
    (
        with_(
            CHAIN,
            chain={
                "routers": 2,
                "host": [{"name": "elevenchars", "router": 0}, {"name": "b", "router": 1}],
            },
        ),
        "chain.host[0].name",
        "1 to 10 characters",
    ),
    (
        with_(
            CHAIN,
            chain={"routers": 2, "host": [{"name": "a", "router": 5}, {"name": "b", "router": 1}]},
        ),
        "chain.host[0].router",
        "routers are 0 to 1",
    ),
    (with_(CHAIN, chain={"routers": 1, "host": []}), "chain.routers", "between 2 and 64"),
    (
        with_(CHAIN, chain={"routers": 3, "link": [{}], "host": CHAIN["chain"]["host"]}),
        "chain.link",
        "give 2",
    ),
    (with_(CHAIN, chain={"host": [{"name": "a", "router": 0}]}), "chain.host", "at least two"),
    (
        with_(
            CHAIN,
            chain={
                "link": [{"rtt": "20ms", "delay_reverse": "1ms"}],
                "host": CHAIN["chain"]["host"],
            },
        ),
        "chain.link[0].rtt",
        "not both",
    ),
    (with_(CHAIN, bottleneck={"rate": "1Gbit"}), "bottleneck", "applies to topology = 'dumbbell'"),
    ({"testbed": {"topology": "chain"}}, "chain", "needs a [chain] section"),
    (with_(STAR, star={"spoke": [{"hosts": ["a"]}]}), "star.spoke", "at least two"),
    (
        with_(STAR, star={"spoke": [{"hosts": []}, {"hosts": ["b"]}]}),
        "star.spoke[0].hosts",
        "at least one host",
    ),
    (
        with_(STAR, star={"spoke": [{"hosts": ["a"], "side": "up"}, {"hosts": ["b"]}]}),
        "star.spoke[0].side",
        "allowed: left, right",
    ),
    (
        with_(STAR, star={"spoke": [{"hosts": ["a"], "buffer": "1kB"}, {"hosts": ["b"]}]}),
        "star.spoke[0].buffer",
        "below one MTU",
    ),
    (with_(STAR, dumbbell={"pairs": 3}), "dumbbell", "applies to topology = 'dumbbell'"),
]


@pytest.mark.parametrize(("data", "field", "words"), CASES, ids=[c[1] + ":" + c[2] for c in CASES])
def test_invalid(data, field, words):
    e = error(data)
    assert e.file == SRC
    assert e.field == field
    assert words in e.reason


def test_unknown_field_lists_the_allowed_ones():
    e = error({"bottleneck": {"bandwidth": "1Gbit"}})
    assert "allowed here: rate," in e.reason


def test_error_from_a_file_names_the_file(tmp_path):
    path = tmp_path / "wan.toml"
    path.write_text('[bottleneck]\nrate = "100"\n')
    with pytest.raises(ScenarioError) as exc:
        load_testbed(path)
    assert exc.value.file == str(path)
    assert (
        str(exc.value) == f"{path}: bottleneck.rate: '100' has no unit; write a rate like '100Mbit'"
    )


def test_toml_syntax_error(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("[bottleneck\nrate = 1\n")
    with pytest.raises(ScenarioError) as exc:
        load_testbed(path)
    assert exc.value.file == str(path)
    assert "not valid TOML" in exc.value.reason


def test_missing_file(tmp_path):
    with pytest.raises(ScenarioError) as exc:
        load_testbed(tmp_path / "nope.toml")
    assert exc.value.reason == "no such file"


def test_no_pydantic_text_leaks():
    e = error({"dumbbell": {"pairs": [1]}})
    assert "pydantic" not in str(e) and "errors.pydantic.dev" not in str(e)
    assert e.field == "dumbbell.pairs"


@pytest.mark.parametrize(
    ("overrides", "option", "words"),
    [
        ({"rate": "100"}, "--rate", "no unit"),
        ({"rate": "50Gbit"}, "--rate", "10Mbit to 40Gbit"),
        ({"access_rate": "fast"}, "--access-rate", "not a rate"),
        ({"rtt": "11s"}, "--rtt", "10 s"),
        ({"loss": "200%"}, "--loss", "100%"),
        ({"buffer": "10B"}, "--buffer", "below one MTU"),
        ({"mtu": 1400}, "--mtu", "allowed: 1500, 9000"),
        ({"mtu": "1400"}, "--mtu", "allowed: 1500, 9000"),
        ({"pairs": 0}, "--pairs", "between 1 and 100"),
        ({"pairs": "many"}, "--pairs", "whole number"),
        ({"colour": "red"}, "--colour", "unknown override"),
    ],
)
def test_bad_override_names_the_option(overrides, option, words):
    with pytest.raises(ScenarioError) as exc:
        load_testbed(None, overrides)
    e = exc.value
    assert (e.file, e.field) == ("<command line>", option)
    assert words in e.reason
    assert str(e).startswith(f"<command line>: {option}: ")


def test_bad_override_with_a_file(tmp_path):
    path = tmp_path / "d.toml"
    path.write_text('[bottleneck]\nrate = "100Mbit"\nrtt = "10ms"\n')
    with pytest.raises(ScenarioError) as exc:
        load_testbed(path, {"rate": "1Tbit"})
    assert (exc.value.file, exc.value.field) == ("<command line>", "--rate")


@pytest.mark.parametrize("key", ["pairs", "rate", "rtt"])
def test_dumbbell_override_on_chain_is_an_error(tmp_path, key):
    path = tmp_path / "chain.toml"
    path.write_text(
        '[testbed]\ntopology = "chain"\n[chain]\nrouters = 2\n'
        '[[chain.host]]\nname = "a"\nrouter = 0\n[[chain.host]]\nname = "b"\nrouter = 1\n'
    )
    with pytest.raises(ScenarioError) as exc:
        load_testbed(path, {key: "4" if key == "pairs" else "20ms" if key == "rtt" else "1Gbit"})
    assert exc.value.field == "--" + key
    assert "dumbbell only" in exc.value.reason


def test_a_2_s_rtt_is_one_second_each_way():
    """RR-6244's classes D, H and L stretch the RTT to 2 s when windows are preserved."""
    topo = scenario.testbed_from_dict({"bottleneck": {"rtt": "2s"}})
    [link] = [lk for lk in topo.links if lk.emulated]
    assert (link.forward.delay_us, link.reverse.delay_us) == (1_000_000, 1_000_000)
