"""Every `itb … --help` as a new user reads it: each command and group of the tree rendered
(wide, as Typer and Rich print it), and every word its author wrote found there — a
placeholder such as `<hash of the arguments>` is not eaten as Markdown's inline HTML —
with no option showing a type where it should show what it takes (`<bool>` after a flag,
`<str>` after a text option: a flag takes nothing, a choice shows its choices)."""

from __future__ import annotations

import re

import pytest
import typer.main
from typer.testing import CliRunner

from itb.cli import app

WIDE = {"COLUMNS": "250"}  # one row per option: words are never split by the wrapping
BOX = re.compile(r"[│╭╮╰╯─]")  # Rich's panel borders


def commands() -> list[tuple[tuple[str, ...], object]]:
    """Every command and group of the `itb` tree, by its path of names."""
    found = []

    def walk(cmd, path: tuple[str, ...]) -> None:
        found.append((path, cmd))
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return found


COMMANDS = commands()


def rendered(path: tuple[str, ...]) -> str:
    res = CliRunner().invoke(app, [*path, "--help"], env=WIDE)
    assert res.exit_code == 0, res.output
    return res.output


def flat(text: str) -> str:
    return " ".join(BOX.sub(" ", text).split())


MARKDOWN_ESCAPE = re.compile(r"\\([<>*_`\[\]\\])")


def written(cmd) -> list[str]:
    """What the command's author wrote: its help and its parameters' (as Markdown source:
    an escape such as `\\<` is the way to write a `<`, not a character of the text)."""
    texts = [cmd.help or "", *(getattr(p, "help", None) or "" for p in cmd.params)]
    return [MARKDOWN_ESCAPE.sub(r"\1", t) for t in texts]


# What a placeholder eaten by the renderer leaves behind
LOST = [
    re.compile(r"<bool>"),  # a flag shown as if it took a value
    re.compile(r"--[\w-]+\s+<str>"),  # a text option or a choice without its placeholder
    re.compile(r"runs/-"),  # runs/<name>-<date> without its parts
    re.compile(r"-[,.)]"),  # runs/bench-<hash …>, … without the hash
    re.compile(r"--\.json"),  # profile-model-<cc>-<enforce>.json without cc and enforce
    re.compile(r"\[default: \]"),  # an empty default
    re.compile(r"(?<=[\s(])/[\w-]+\.(json|toml)\b"),  # <dir>/lab.json without the dir
]


def test_the_tree_walked_is_the_whole_cli():
    paths = {p for p, _ in COMMANDS}
    for expected in [
        (),
        ("bench",),
        ("run",),
        ("lab", "down"),
        ("study", "streams"),
        ("study", "profile", "margin"),
        ("profile", "predict"),
        ("testbed", "status"),
        ("cc", "verify"),
        ("serve",),
    ]:
        assert expected in paths, expected
    assert len(paths) >= 40


@pytest.mark.parametrize("path,cmd", COMMANDS, ids=[" ".join(p) or "itb" for p, _ in COMMANDS])
def test_every_help_shows_every_word_its_author_wrote_and_no_lost_placeholder(path, cmd):
    shown = rendered(path)
    text = flat(shown)
    missing = sorted({w for t in written(cmd) for w in t.replace("`", "").split() if w not in text})
    assert not missing, f"itb {' '.join(path)} --help lost {missing}"
    for pattern in LOST:
        hit = pattern.search(text)
        assert hit is None, f"itb {' '.join(path)} --help shows {hit.group(0)!r}: {text}"


def test_a_placeholder_in_angle_brackets_is_shown_as_written():
    # the three a new user met, each checked on its own line
    bench = flat(rendered(("bench",)))
    assert "runs/bench-<hash of the arguments>, so the same command resumes" in bench
    assert "(default: runs/<name>-<date>)" in flat(rendered(("run",)))
    assert "recorded in <dir>/lab.json)" in flat(rendered(("lab", "down")))


def test_a_flag_shows_no_value_and_a_choice_shows_its_choices():
    bench = flat(rendered(("bench",)))
    assert re.search(r"--quick A short benchmark", bench)  # nothing between flag and help
    assert "--backend <local|ssh|sim>" in bench
    assert "--scaling <rate|window>" in bench
    assert "--help Show this message and exit." in bench
    assert "--backend <local|ssh|sim>" in flat(rendered(("run",)))
    assert "--backend <local|ssh|sim>" in flat(rendered(("study", "streams")))
    assert "--topology <dumbbell|chain|star>" in flat(rendered(("lab", "up")))
    # a text option says what to give: its name
    assert "--rate RATE" in flat(rendered(("run",)))
    assert "--access-rate ACCESS_RATE" in flat(rendered(("testbed", "up")))
