"""Repetitions until the answer: a group-sequential design for a table of comparisons
(docs/benchmark.md, "Repetitions until the answer").

A design looks at the data after n_1 < n_2 < … < n_J repetitions of every protocol and
spends part α_j of the table's error rate α = 0.05 at look j, α_j = α·(t_j³ − t_{j−1}³)
with t_j = n_j / n_J (the power family of spending functions, Kim and DeMets 1987, with
ρ = 3: little at the first looks, where three repetitions cannot show much anyway). At
each look every comparison still undecided is tested as one table at α_j
(itb.analysis.compare: Holm's steps over the undecided, counting those decided faster or
slower before); one decided keeps its verdict, and a group of comparisons (an
application × class) gets more repetitions only while one of them is undecided.

Why the error rate holds although the data decide when to stop: a false verdict of the
sequence is a false verdict at some look j, whose probability is at most α_j whatever
happened before (Holm's bound, given no false verdict before); over the looks they add
up to at most α (Bonferroni's inequality, the conservative form of alpha spending: it
does not need the looks' joint distribution, which Welch's statistic on few repetitions
with unequal spreads does not give). A look whose repetitions the budget did not reach
spends what is left of α at the repetitions there are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from itb.analysis.compare import ALPHA, MARGIN, Comparison, compare_all, look_codes

FIRST_LOOK = 3  # the first look: 2 repetitions give a spread but a t on 1 df
GROWTH = 1.4  # each look after ~40 % more repetitions: 3, 5, 7, 10, 14, 20, 28, …
SPENDING_POWER = 3  # ρ of α·t^ρ

# (tested, its T per repetition in order, None where it failed; reference, its T …)
Pair = tuple[str, Sequence[float | None], str, Sequence[float | None]]


@dataclass(frozen=True)
class Design:
    """The looks (repetitions per protocol at each) and the part of α each one spends."""

    looks: tuple[int, ...]
    alphas: tuple[float, ...]

    @classmethod
    def adaptive(cls, max_repeat: int, first: int = FIRST_LOOK) -> Design:
        """Looks at 3 (`first`), 5, 7, 10, 14, … up to max_repeat (always a look there)."""
        looks: list[int] = []
        n = first
        while n < max_repeat:
            looks.append(n)
            n = max(n + 2, round(n * GROWTH))
        looks.append(max_repeat)
        t = [x / max_repeat for x in looks]
        spent = [ALPHA * x**SPENDING_POWER for x in t]
        return cls(tuple(looks), tuple(b - a for a, b in zip([0.0, *spent], spent)))

    @classmethod
    def fixed(cls, repeat: int) -> Design:
        """One look after `repeat` repetitions, spending all of α (`--repeat N`)."""
        return cls((repeat,), (ALPHA,))

    @property
    def max_repeat(self) -> int:
        return self.looks[-1]


def design_of(key: dict) -> Design:
    """A sweep's design from its arguments' key: `repeat`, and `design` "sequential"
    (with `first_look` when not 3) for a sequence, else a fixed design."""
    repeat = int(key.get("repeat", 1))
    if key.get("design") == "sequential":
        return Design.adaptive(repeat, int(key.get("first_look", FIRST_LOOK)))
    return Design.fixed(repeat)


def decide(
    pairs: Sequence[Pair], design: Design, margin: float = MARGIN, ended: bool = False
) -> list[Comparison]:
    """The sequence's verdicts, replayed from the repetitions in their order (a result is
    rebuilt from raw logs alone): each comparison decided at the first look that decides
    it, on the repetitions up to that look; an undecided one as its last look saw it. A
    look is taken once a comparison has its repetitions, over every undecided comparison
    with repetitions not yet looked at (those a budget's end left short of it, at the
    repetitions they have); comparisons left between two looks that none reached get one
    look more at the repetitions they have, spending the α the looks not taken left.
    `ended` (the budget ended the sequence: no repetition will be added): the last look
    taken spends what is left of α. A fixed design is one look at every repetition there
    is."""
    m = max(len(pairs), 1)
    if len(design.looks) == 1:
        return compare_all(pairs, margin)
    runs = [min(len(t), len(r)) for _, t, _, r in pairs]
    out: list[Comparison | None] = [None] * len(pairs)
    seen = [0] * len(pairs)  # repetitions each was last looked at with
    directional, spent, looks = 0, 0.0, 0

    def look(live: list[int], n_of: list[int], alpha: float) -> None:
        nonlocal directional, looks
        looks += 1
        cs = compare_all(
            [(a, x[: n_of[k]], b, y[: n_of[k]]) for k, (a, x, b, y) in
             enumerate(pairs[i] for i in live)],
            margin, alpha, m, directional,
        )  # fmt: skip
        for i, n, c in zip(live, n_of, cs):
            c.look, out[i], seen[i] = looks, c, n
            directional += c.verdict in ("faster", "slower")

    def undecided(i: int) -> bool:
        c = out[i]
        return c is None or c.verdict == "inconclusive"

    for n, alpha in zip(design.looks, design.alphas):
        live = [i for i in range(len(pairs)) if undecided(i) and runs[i] > seen[i]]
        if not any(runs[i] >= n for i in live):
            break  # none reached this look: those between two looks, below
        if ended and all(runs[i] <= n for i in live):
            alpha = ALPHA - spent  # no look after this one
        look(live, [min(runs[i], n) for i in live], alpha)
        spent += alpha
    left = [i for i in range(len(pairs)) if undecided(i) and runs[i] > seen[i]]
    if left and ALPHA - spent > 1e-12:
        look(left, [runs[i] for i in left], ALPHA - spent)
    for i, c in enumerate(out):
        if c is None:  # no repetition at all on a side: described, not tested
            out[i] = compare_all([pairs[i]], margin, ALPHA, m)[0]
    return [c for c in out if c is not None]


def replay(x: np.ndarray, design: Design, margin: float = MARGIN) -> tuple[np.ndarray, np.ndarray]:
    """`decide` on many tables at once, for simulations (bench/verdicts.py): x holds
    T tables × k protocols (the first the reference) × their repetitions in order, none
    failed, at least the design's last look. Returns each comparison's verdict code
    (T × k − 1, an index into compare.VERDICTS) and the repetitions each table ran (its
    last decision's look, or the last look)."""
    tables, k, _ = x.shape
    m = k - 1
    codes = np.zeros((tables, m), dtype=int)
    when = np.zeros((tables, m), dtype=int)
    directional = np.zeros(tables)
    for n, alpha in zip(design.looks, design.alphas):
        mean, var = x[:, :, :n].mean(axis=2), x[:, :, :n].var(axis=2, ddof=1)
        live = codes == 0
        c, _ = look_codes(
            mean[:, 1:], var[:, 1:], n, mean[:, :1], var[:, :1], n, m, alpha, margin, live,
            directional,
        )  # fmt: skip
        new = live & (c > 0)
        codes[new], when[new] = c[new], n
        directional += (new & (c < 3)).sum(axis=1)
    ran = np.where((codes > 0).all(axis=1), when.max(axis=1), design.max_repeat)
    return codes, ran
