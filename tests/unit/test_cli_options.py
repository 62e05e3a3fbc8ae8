"""`itb`'s own options: --version (the package's, and the commit of a source checkout) and
--quiet (no progress on stderr; warnings, errors and results as ever)."""

from __future__ import annotations

import re
import subprocess
from importlib.metadata import version

from typer.testing import CliRunner

from itb import native
from itb.cli import app, common


def test_version_prints_the_package_version_and_the_commit_of_the_checkout():
    res = CliRunner().invoke(app, ["--version"])
    assert res.exit_code == 0, res.output
    head = subprocess.run(
        ["git", "-C", str(native.REPO), "rev-parse", "--short=12", "HEAD"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    assert re.fullmatch(
        rf"itb {re.escape(version('itb'))} \(git {head}(-dirty)?\)\n", res.output
    ), res.output


def test_version_without_a_checkout_is_the_package_version_alone(monkeypatch, tmp_path):
    monkeypatch.setattr(native, "REPO", tmp_path)  # an installed package: no .git
    assert common.version_text() == f"itb {version('itb')}"


def test_quiet_given_before_the_command_silences_the_progress_of_that_command_only(capsys):
    runner = CliRunner()
    assert runner.invoke(app, ["-q", "--version"]).exit_code == 0
    res = runner.invoke(app, ["-q", "cc", "list", "--json"])
    assert res.exit_code == 0, res.output
    assert common.Verbosity.quiet
    common.progress("building the testbed")
    common.say("[1/4] BU-B-cubic repetition 1/2")
    common.ticker()("t =    1.0 s · 0/1 transfers done")
    assert capsys.readouterr().err == ""
    assert runner.invoke(app, ["cc", "list", "--json"]).exit_code == 0
    assert not common.Verbosity.quiet
    common.progress("building the testbed")
    common.say("[1/4] BU-B-cubic repetition 1/2")
    err = capsys.readouterr().err
    assert "· building the testbed" in err
    assert "[1/4] BU-B-cubic repetition 1/2" in err  # as written: not read as markup
