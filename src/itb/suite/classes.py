"""The twelve ITB classes (docs/benchmark.md): aggregation level K, RTT, forward congestion
level C_g and reverse-traffic level R."""

from __future__ import annotations

from dataclasses import dataclass

from itb.errors import ScenarioError

# The documents' data-centre classes say "K = 1 or 10". ITB's default is K = 10: 8, 20 or
# 10 forward sources of C_a. At K = 1 (`itb bench --k 1`) C_g = 0.8 is 0.8 of a source:
# the class then runs round(C_g · K) sources, each offering C_g · K / M of its C_a
# (`forward_share`: one source at 0.8 C_a), so the offered load is still C_g · C.
DATA_CENTRE_K = 10
INTERNET_K = 1000


@dataclass(frozen=True)
class ItbClass:
    name: str
    k: int
    rtt_ms: float
    c_g: float
    r: float
    meaning: str
    # --rtt with several modes: the host pairs' RTTs (rtt_ms is then the longest)
    rtt_modes_ms: tuple[float, ...] = ()

    @property
    def forward_sources(self) -> int:
        """M = C_g · K (C_g = M · C_a / C with C = K · C_a)."""
        return round(self.c_g * self.k)

    @property
    def forward_share(self) -> float:
        """What a forward source offers, as a share of its C_a: C_g · K / M (1 at K = 10
        and 1000; 0.8 for C_g = 0.8 at K = 1)."""
        m = self.forward_sources
        return self.c_g * self.k / m if m else 1.0

    @property
    def reverse_share(self) -> float:
        """The same for the reverse sources: R · K / N_r (0.75 for R = 1.5 at K = 1)."""
        n = self.reverse_sources
        return self.r * self.k / n if n else 1.0

    @property
    def c_g_realised(self) -> float:
        """The congestion level the sources realise: M / K (1.25 at K = 10 gives 1.2)."""
        return self.forward_sources / self.k

    @property
    def reverse_sources(self) -> int:
        """Reverse sources of capacity C_a whose nominal total is R · C."""
        return round(self.r * self.k)


def _row(name, k, rtt, cg, r, meaning) -> ItbClass:
    return ItbClass(name, k, rtt, cg, r, meaning)


CLASSES: dict[str, ItbClass] = {
    c.name: c
    for c in (
        _row("A", INTERNET_K, 20, 0.8, 0, "low-loaded metropolitan Internet"),
        _row("B", DATA_CENTRE_K, 20, 0.8, 0, "low-loaded metropolitan data centre"),
        _row("C", INTERNET_K, 200, 0.8, 0, "low-loaded transcontinental Internet"),
        _row("D", DATA_CENTRE_K, 200, 0.8, 0, "low-loaded transcontinental data centre"),
        _row("E", INTERNET_K, 20, 2.0, 0.8, "forward-congested metropolitan Internet"),
        _row("F", DATA_CENTRE_K, 20, 2.0, 0.8, "forward-congested metropolitan data centre"),
        _row("G", INTERNET_K, 200, 2.0, 0.8, "forward-congested transcontinental Internet"),
        _row("H", DATA_CENTRE_K, 200, 2.0, 0.8, "forward-congested transcontinental data centre"),
        _row("I", INTERNET_K, 20, 1.0, 1.5, "reverse-congested metropolitan Internet"),
        _row("J", DATA_CENTRE_K, 20, 1.0, 1.5, "reverse-congested metropolitan data centre"),
        _row("K", INTERNET_K, 200, 1.0, 1.5, "reverse-congested transcontinental Internet"),
        _row("L", DATA_CENTRE_K, 200, 1.0, 1.5, "reverse-congested transcontinental data centre"),
    )
}


def parse_classes(text: str, option: str = "--class") -> list[ItbClass]:
    """ "A-L", "B,D,F", "A-C,K": ranges and single letters, in class order, no repeats."""
    names = list(CLASSES)
    chosen: set[str] = set()
    for part in (p.strip().upper() for p in text.split(",")):
        if not part:
            raise ScenarioError(None, option, f"empty class in {text!r}")
        lo, _, hi = part.partition("-")
        hi = hi or lo
        if lo not in CLASSES or hi not in CLASSES:
            bad = lo if lo not in CLASSES else hi
            raise ScenarioError(None, option, f"unknown class {bad!r}; classes are A to L")
        i, j = names.index(lo), names.index(hi)
        if i > j:
            raise ScenarioError(None, option, f"range {part!r} runs backwards")
        chosen.update(names[i : j + 1])
    return [CLASSES[n] for n in names if n in chosen]
