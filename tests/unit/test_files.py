"""Files ITB reads on a user's word: regular files of at most their kind's limit, refused
at once otherwise (file named, exit 2), and ITB_PREFIX: a plain name, never a path."""

from __future__ import annotations

import os
import resource
import time

import pytest

from itb import files
from itb.emulation import naming
from itb.errors import ScenarioError


def refused(path, kind="profile", field="(file)") -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        files.read_text(path, kind, field)
    assert info.value.exit_code == 2 and info.value.file == str(path)
    assert info.value.field == field
    return info.value


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_an_endless_device_is_refused_before_one_byte_is_read(device):
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.monotonic()
    e = refused(device, "model", "--model")
    assert time.monotonic() - t0 < 0.1
    assert e.reason == "is a character device, not a model file (ITB reads only regular files)"
    # ru_maxrss is in KiB: nothing near a buffer of the device's bytes was allocated
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before < 10_000


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "p.csv"
    os.mkfifo(fifo)
    assert refused(fifo).reason.startswith("is a FIFO (named pipe), not a profile file")


def test_a_directory_and_a_missing_file_say_so(tmp_path):
    assert refused(tmp_path).reason.startswith("is a directory, not a profile file")
    assert refused(tmp_path / "nope.csv").reason == "no such file"


def test_a_file_one_byte_over_the_limit_is_refused_and_one_at_the_limit_is_read(
    tmp_path, monkeypatch
):
    monkeypatch.setitem(files.LIMITS, "profile", 10)
    (tmp_path / "ok.csv").write_bytes(b"0123456789")
    assert files.read_text(tmp_path / "ok.csv", "profile") == "0123456789"
    (tmp_path / "big.csv").write_bytes(b"0123456789A")
    assert refused(tmp_path / "big.csv").reason == "11 bytes: a profile file has at most 10 bytes"


def test_a_file_that_is_not_utf8_names_the_byte(tmp_path):
    (tmp_path / "b.csv").write_bytes(b"t_s,\xff")
    assert refused(tmp_path / "b.csv").reason == "not UTF-8 text (byte 4)"


def test_check_refuses_what_read_would_without_reading():
    with pytest.raises(ScenarioError, match="character device"):
        files.check("/dev/zero", "model", "--model")


def test_every_kind_has_a_limit_of_at_least_one_mebibyte():
    assert set(files.LIMITS) == {"scenario", "inventory", "profile", "model", "results"}
    assert min(files.LIMITS.values()) >= files.MiB


@pytest.mark.parametrize("value", ["", "..", ".", "a/b", "a b", "x" * 33, "é"])
def test_a_prefix_that_is_not_a_plain_name_is_refused(monkeypatch, value):
    monkeypatch.setenv("ITB_PREFIX", value)
    with pytest.raises(ScenarioError) as info:
        naming.prefix()
    assert info.value.field == "ITB_PREFIX" and info.value.exit_code == 2


@pytest.mark.parametrize("value", ["itb", "itbt", "a-b_C9", "x" * 32])
def test_a_plain_prefix_is_accepted(monkeypatch, value):
    monkeypatch.setenv("ITB_PREFIX", value)
    assert naming.prefix() == value
