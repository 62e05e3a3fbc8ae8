"""Unit parsers: valid forms, invalid forms with readable reasons, edges, round trips."""

import pytest

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

# --- rates ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("100Mbit", 100_000_000),
        ("1Gbit", 1_000_000_000),
        ("10Gbit", 10_000_000_000),
        ("2.5Gbit", 2_500_000_000),
        ("10000kbit", 10_000_000),
        ("10000000bit", 10_000_000),
        ("100mbit", 100_000_000),  # tc's spelling
        ("100Mbps", 100_000_000),  # bps = bits here
        ("1Gbps", 1_000_000_000),
        ("100Mb/s", 100_000_000),
        ("1Gb/s", 1_000_000_000),
        ("  100 Mbit ", 100_000_000),
        ("unlimited", None),
        ("Unlimited", None),
        ("0.01Gbit", 10_000_000),
    ],
)
def test_parse_rate_valid(text, bps):
    assert parse_rate(text) == bps


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("100", "no unit"),
        (100, "no unit"),
        ("-100Mbit", "negative"),
        (-5, "negative"),
        ("0Mbit", "positive"),
        ("0", "positive"),
        ("nan", "not a rate"),
        (float("nan"), "not a rate"),
        (float("inf"), "not a rate"),
        ("100MB/s", "bytes"),
        ("100MBps", "bytes"),
        ("100Tbit", "unknown rate unit"),
        ("100 furlongs", "unknown rate unit"),
        ("fast", "not a rate"),
        ("1e9bit", "unknown rate unit"),
        ("5Mbit", "10Mbit to 40Gbit"),
        ("500kbit", "10Mbit to 40Gbit"),
        ("40.5Gbit", "10Mbit to 40Gbit"),
        ("100Gbit", "10Mbit to 40Gbit"),
        (True, "expected a rate"),
        (None, "expected a rate"),
        ([1], "expected a rate"),
        ("", "not a rate"),
        (".5Gbit", "not a rate"),
    ],
)
def test_parse_rate_invalid(value, words):
    with pytest.raises(UnitError) as exc:
        parse_rate(value)
    assert words in str(exc.value)


def test_rate_range_edges_inclusive():
    assert parse_rate("10Mbit") == RATE_MIN
    assert parse_rate("40Gbit") == RATE_MAX
    with pytest.raises(UnitError):
        parse_rate("9.999999Mbit")
    assert parse_rate("1kbit", lo=None, hi=None) == 1000  # other callers may lift the range
    assert parse_rate("500kbps", lo=None) == 500_000


def test_unit_error_is_value_error():
    assert issubclass(UnitError, ValueError)


@pytest.mark.parametrize(
    ("bps", "text"),
    [
        (None, "unlimited"),
        (1_000_000_000, "1Gbit"),
        (2_500_000_000, "2.5Gbit"),
        (100_000_000, "100Mbit"),
        (10_000_000_000, "10Gbit"),
        (999_999_999, "999.999999Mbit"),
        (500_000, "500kbit"),
        (12, "12bit"),
    ],
)
def test_format_rate(bps, text):
    assert format_rate(bps) == text


@pytest.mark.parametrize(
    "bps", [RATE_MIN, RATE_MAX, 123_456_789, 1_000_000_001, 2_500_000_000, None]
)
def test_rate_round_trip(bps):
    assert parse_rate(format_rate(bps)) == bps


# --- durations -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "us"),
    [
        ("20ms", 20_000),
        ("1.5ms", 1_500),
        ("200us", 200),
        ("200µs", 200),
        ("200μs", 200),  # Greek mu
        ("0.2s", 200_000),
        ("10s", 10_000_000),
        ("0ms", 0),
        ("0s", 0),
        ("0", 0),
        (0, 0),
        ("0.0005ms", 0),  # rounded to whole microseconds (half to even)
        ("0.0015ms", 2),
        (" 20 ms ", 20_000),
    ],
)
def test_parse_duration_valid(text, us):
    assert parse_duration(text) == us


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("20", "no unit"),
        (20, "no unit"),
        (0.5, "no unit"),
        ("-1ms", "negative"),
        ("20min", "unknown duration unit"),
        ("20ns", "unknown duration unit"),
        ("20 ms ms", "not a duration"),
        ("ms", "not a duration"),
        (False, "expected a duration"),
        ("nan ms", "not a duration"),
    ],
)
def test_parse_duration_invalid(value, words):
    with pytest.raises(UnitError) as exc:
        parse_duration(value)
    assert words in str(exc.value)


@pytest.mark.parametrize(
    ("us", "text"),
    [
        (0, "0ms"),
        (1, "1us"),
        (200, "200us"),
        (1_500, "1.5ms"),
        (20_000, "20ms"),
        (1_500_000, "1.5s"),
        (10_000_000, "10s"),
    ],
)
def test_format_duration(us, text):
    assert format_duration(us) == text


@pytest.mark.parametrize(
    "us", [0, 1, 999, 1_000, 1_001, 20_000, 123_456, 999_999, 1_000_000, 10_000_000, 12_345_678]
)
def test_duration_round_trip(us):
    assert parse_duration(format_duration(us)) == us


# --- sizes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "nbytes"),
    [
        ("3GB", 3_000_000_000),
        ("50MB", 50_000_000),
        ("1500B", 1500),
        ("1.5kB", 1500),
        ("1.5KB", 1500),
        ("64KiB", 65_536),
        ("1GiB", 1_073_741_824),
        ("2MiB", 2_097_152),
        ("0B", 0),
        ("0", 0),
        ("1TB", 10**12),
    ],
)
def test_parse_size_valid(text, nbytes):
    assert parse_size(text) == nbytes


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("1500", "no unit"),
        (1500, "no unit"),
        ("50Mb", "capital B"),
        ("50mb", "capital B"),
        ("64kib", "capital B"),
        ("-1MB", "negative"),
        ("50 parsecs", "unknown size unit"),
        ("big", "not a size"),
    ],
)
def test_parse_size_invalid(value, words):
    with pytest.raises(UnitError) as exc:
        parse_size(value)
    assert words in str(exc.value)


@pytest.mark.parametrize(
    "nbytes", [0, 1, 999, 1500, 65_536, 2_500_000, 1_073_741_824, 3_000_000_000]
)
def test_size_round_trip(nbytes):
    assert parse_size(format_size(nbytes)) == nbytes


def test_format_size():
    assert format_size(2_500_000) == "2.5MB"
    assert format_size(1500) == "1.5kB"
    assert format_size(999) == "999B"


# --- loss ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "p"),
    [
        ("1%", 0.01),
        ("0.5%", 0.005),
        ("0%", 0.0),
        ("100%", 1.0),
        (0.01, 0.01),
        (0, 0.0),
        (0.0, 0.0),
        (1.0, 1.0),
    ],
)
def test_parse_loss_valid(value, p):
    assert parse_loss(value) == pytest.approx(p)


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("101%", "at most 100%"),
        (1.5, "at most 1.0"),
        (1, "ambiguous"),
        (5, "ambiguous"),
        ("-1%", "negative"),
        (-0.1, "negative"),
        ("0.01", "not a percentage"),
        ("1 percent", "not a percentage"),
        (float("nan"), "not a probability"),
        (True, "expected a percentage"),
    ],
)
def test_parse_loss_invalid(value, words):
    with pytest.raises(UnitError) as exc:
        parse_loss(value)
    assert words in str(exc.value)


# --- buffers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("2MB", BufferSpec("bytes", 2_000_000)),
        ("1500000B", BufferSpec("bytes", 1_500_000)),
        ("64KiB", BufferSpec("bytes", 65_536)),
        ("100pkt", BufferSpec("packets", 100)),
        ("100p", BufferSpec("packets", 100)),
        ("100 packets", BufferSpec("packets", 100)),
        ("1bdp", BufferSpec("bdp", 1.0)),
        ("0.5bdp", BufferSpec("bdp", 0.5)),
        ("2BDP", BufferSpec("bdp", 2.0)),
    ],
)
def test_parse_buffer_valid(text, spec):
    assert parse_buffer(text) == spec


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (100, "no unit"),
        ("100", "no unit"),
        ("1.5pkt", "whole number"),
        ("-1bdp", "negative"),
        ("lots", "packets ('100pkt')"),
        ("5Mb", "capital B"),
    ],
)
def test_parse_buffer_invalid(value, words):
    with pytest.raises(UnitError) as exc:
        parse_buffer(value)
    assert words in str(exc.value)


def test_buffer_bdp_resolution():
    # 1 Gbit/s × 20 ms = 2.5 MB
    assert parse_buffer("1bdp").resolve(1_000_000_000, 20_000, 1500) == (2_500_000, None)
    assert parse_buffer("0.5bdp").resolve(1_000_000_000, 20_000, 1500) == (1_250_000, None)
    assert parse_buffer("1bdp").resolve(None, 20_000, 1500) == (None, None)  # unlimited link
    assert parse_buffer("100pkt").resolve(10_000_000, 1_000, 1500) == (None, 100)
    assert parse_buffer("1500B").resolve(10_000_000, 1_000, 1500) == (1500, None)


@pytest.mark.parametrize(
    ("text", "rate", "rtt", "mtu"),
    [
        ("1000B", 10**9, 20_000, 1500),
        ("8000B", 10**9, 20_000, 9000),  # fine at 1500, not with jumbo frames
        ("1bdp", 10**7, 1_000, 1500),  # 10 Mbit/s × 1 ms = 1250 B
        ("0pkt", 10**9, 1, 1500),
    ],
)
def test_buffer_below_mtu(text, rate, rtt, mtu):
    with pytest.raises(UnitError) as exc:
        parse_buffer(text).resolve(rate, rtt, mtu)
    assert "below one" in str(exc.value)


def test_buffer_str_round_trip():
    for text in ("2MB", "100pkt", "0.5bdp", "1bdp"):
        spec = parse_buffer(text)
        assert parse_buffer(str(spec)) == spec
