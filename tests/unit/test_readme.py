"""What a new user reads first: the README's two commands, its requirements and the route
without root, a sample of what `make quick` prints, the glossary of the terms the tables
use, and links that lead somewhere."""

from __future__ import annotations

import re
from pathlib import Path

from itb.study.bench.summary import QUICK_SHORTENS

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)]*)?\)")


def test_the_readme_gives_exactly_two_commands_to_type():
    shell = [body for lang, body in FENCE.findall(README) if lang in ("sh", "bash", "")]
    assert len(shell) == 1
    commands = [line.split("#")[0].strip() for line in shell[0].splitlines() if line.strip()]
    assert commands == ["make quick", "make test"]


def test_the_readme_says_what_the_machine_needs_and_what_set_up_installs():
    text = " ".join(README.split())
    for needed in ("Debian 12", "root", "BTF", "Python 3.11", "cargo", "linux-source-6.12"):
        assert needed in text, needed
    # every package `make setup` may install is named
    makefile = (REPO / "Makefile").read_text()
    packages = re.findall(r":([\w.+-]+)(?=[ \\;])", makefile.split("system-deps:")[1][:900])
    assert "linux-source-6.12" in packages and len(packages) >= 15
    for p in packages:
        assert p in text, p


def test_the_readme_gives_the_route_without_root():
    text = " ".join(README.split())
    assert "Without root" in text
    assert "`make unit`" in text and "--backend sim" in text
    assert "(docs/simulation.md)" in text


def test_the_readme_shows_the_quick_table_as_the_command_prints_it():
    (body,) = [body for lang, body in FENCE.findall(README) if lang == "text"]
    sample = " ".join(body.split())  # (rich pads the columns and wraps long lines)
    columns = "┃ app ┃ class ┃ protocol ┃ reps ┃ T_mean ┃ T_min ┃ T_max ┃ σ_T ┃ CoV ┃ J pooled ┃"
    assert columns in sample
    assert "ITB benchmark (complete): completion time T in s" in sample
    assert QUICK_SHORTENS in sample  # the line the command prints under its table
    # the verdicts come first: 2 applications × 2 classes × 2 protocols against cubic
    assert sample.index("Which protocol is faster: against cubic") < sample.index(columns)
    for row in ("│ BU B │", "│ BU F │", "│ PA B │", "│ PA F │"):
        assert row in sample, row


def test_the_glossary_defines_the_terms_of_the_tables_and_is_linked():
    glossary = (REPO / "docs" / "glossary.md").read_text()
    for term in ("**BU**", "**PA**", "**TU**", "**WM**", "**PP**", "**C_g**", "**K**", "**R**"):
        assert term in glossary, term
    for letter in "ABCDEFGHIJKL":
        assert re.search(rf"^\| {letter} \| (10|1000) \| (20|200) ms \|", glossary, re.M), letter
    assert "(docs/glossary.md)" in README
    assert "(glossary.md)" in (REPO / "docs" / "benchmark.md").read_text()


def test_simulation_runs_bu_and_pa_in_the_benchmark_docs():
    bench = " ".join((REPO / "docs" / "benchmark.md").read_text().split())
    row = next(line for line in bench.split("| `--backend sim` |")[1:])
    assert "BU only" not in row[:300] and "BU and PA" in row[:300]


def test_every_relative_link_of_the_readme_and_the_docs_leads_to_a_file():
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for target, _anchor in LINK.findall(page.read_text()):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(REPO)} → {target}")
    assert not broken, broken
