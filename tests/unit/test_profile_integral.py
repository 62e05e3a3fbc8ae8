"""A profile's integral is computed the same way in Python (itb.scenario.experiment.profile.Profile:
ITB's ideal completion times) and in the sender (native/flow/src/profile.rs: its
pacing and application cap), to the nanosecond and the byte; random profiles are
evaluated on both sides (`flow profile-eval`)."""

from __future__ import annotations

import json
import random
import subprocess

import pytest

from itb import native
from itb.errors import PreflightError
from itb.scenario.experiment.profile import Profile, time_to_send_us


def test_one_byte_past_a_step_takes_the_next_steps_rate():
    # 1 Mbit/s for 1 ms (125 bytes), then 8 Mbit/s: the 126th byte's 8 bits take 1 µs
    p = Profile(((0, 1_000_000), (1_000, 8_000_000)))
    assert p.when_allowed_ns(125) == 1_000_000
    assert p.when_allowed_ns(126) == 1_001_000
    assert p.bytes_by_ns(2_000_000) == 125 + 1_000  # 1 ms more at 8 Mbit/s: 1000 bytes
    assert time_to_send_us(p.steps, 126) == 1_001.0


def test_a_partial_nanosecond_is_rounded_up_as_the_sender_waits_for_it():
    # 3 bit/s: one byte (8 bits) needs 8/3 s = 2 666 666 666.67 ns → the next whole ns
    assert Profile(((0, 3),)).when_allowed_ns(1) == 2_666_666_667


def test_the_flow_argument_is_the_steps_in_microseconds_and_bits_per_second():
    assert (
        Profile(((0, 100_000_000), (10_000_000, 600_000_000))).flow_arg()
        == "0:100000000,10000000:600000000"
    )


def random_profile(rng: random.Random) -> Profile:
    n = rng.randint(1, 12)
    dates = [0] + sorted(rng.sample(range(1, 60_000_000), n - 1))
    return Profile(tuple((t, rng.randint(1_000, 10_000_000_000)) for t in dates))


def test_python_and_the_sender_integrate_random_profiles_identically():
    try:
        flow = native.binary("flow")
    except PreflightError:
        pytest.fail("flow is not built: make native")
    rng = random.Random(20261126)
    for _ in range(40):
        p = random_profile(rng)
        total = p.bytes_by_ns(70_000_000_000)
        volumes = sorted(
            {0, 1, total // 3, total // 2, total} | {rng.randint(1, total) for _ in range(5)}
        )
        dates = sorted(
            {
                0,
                1,
                999,
                *(t * 1000 for t, _ in p.steps),
                *(rng.randint(0, 70_000_000_000) for _ in range(5)),
            }
        )
        out = subprocess.run(
            [
                str(flow),
                "profile-eval",
                "--profile",
                p.flow_arg(),
                "--bytes",
                ",".join(map(str, volumes)),
                "--at-ns",
                ",".join(map(str, dates)),
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout
        rust = json.loads(out)
        assert rust["when_allowed_ns"] == [p.when_allowed_ns(v) for v in volumes], p
        assert rust["bytes_by"] == [p.bytes_by_ns(t) for t in dates], p
