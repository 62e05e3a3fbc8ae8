"""The congestion controls ITB knows by canonical name, and where each can come from
(data only: scenarios validate names against it; itb.cc loads them).

A scenario names the algorithm (`highspeed`); the kernel may know it by the same name
(built in, or a `tcp_<name>` module), and ITB carries an eBPF implementation of the ones
most kernels lack, registered as `itb_<name>` (bpf/<name>.bpf.c).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Algorithm:
    name: str  # canonical: what scenarios and the CLI say
    kernel_name: str | None  # the kernel's own implementation, if it has one
    ours: bool  # ITB ships bpf/<name>.bpf.c
    reference: str  # the publication it follows

    @property
    def module(self) -> str | None:
        return f"tcp_{self.kernel_name}" if self.kernel_name else None

    @property
    def ours_name(self) -> str | None:
        """The name our struct_ops registers under (its `.name` field)."""
        return f"itb_{self.name}" if self.ours else None


ALGORITHMS: dict[str, Algorithm] = {
    a.name: a
    for a in (
        Algorithm("reno", "reno", False, "RFC 5681"),
        Algorithm("cubic", "cubic", False, "RFC 9438"),
        Algorithm("bbr", "bbr", False, "Cardwell et al., ACM Queue 2016"),
        Algorithm("bic", "bic", True, "Xu, Harfoush, Rhee, INFOCOM 2004"),
        Algorithm("highspeed", "highspeed", True, "RFC 3649"),
        Algorithm("htcp", "htcp", True, "Leith, Shorten, PFLDnet 2004"),
        Algorithm("scalable", "scalable", True, "Kelly, CCR 2003"),
        Algorithm("vegas", "vegas", True, "Brakmo, Peterson, JSAC 1995"),
        Algorithm("nocc", None, True, "ITB: constant window, no reaction to loss"),
    )
}

KNOWN_CCS: tuple[str, ...] = tuple(ALGORITHMS)
OURS_PREFIX = "itb_"


def algorithm(name: str) -> Algorithm:
    """The catalogue entry; KeyError for a name ITB does not know."""
    return ALGORITHMS[name]
