"""The ns-3 libraries itb-sim runs with: the wheel's, but for one assertion's cost.

PyPI's `ns3` wheel is built with ns-3's assertions on. One of them, at every step of
`TcpTxBuffer::GetPacketFromList`'s walk of a transmit list,
`NS_ASSERT_MSG(list != m_sentList || …)`, compares the whole sent list with itself
element by element: a retransmission costs the square of the window (one reno flow at
1 Gbit/s, 20 ms, after its slow start overshoots a one-BDP queue: ~800 s of wall time
for 3.4 s simulated, 98.7 % of it there). An assertion changes nothing, so
build/native/ns3-<version>/ holds the wheel's libraries (links) and a copy of its
internet library in which that one comparison is skipped — the comparison's size test
jumps straight to "the lists differ" (`jne` becomes `jmp`); the same flow then takes
23.7 s and writes byte-identical logs (docs/simulation.md; tests/sim checks a lossy
repetition byte for byte against the wheel's own library).

The comparison is found by its instructions, not by an address: where they are not
exactly once in the library (another build of the wheel), the wheel's directory is used
as it is — slower, the same results.
"""

from __future__ import annotations

import os
from pathlib import Path

from itb import native

# mov 0x60(%rdi),%rax; cmp %rax,0x10(%rbx); jne …; mov 0x50(%rdi),%rdx; mov (%rbx),%rax;
# cmp %rdx,%rbp — the sent list's size against the walked list's, then their elements
COMPARISON = bytes.fromhex("488b4760483943107541488b5750488b034839d5")
JNE_AT = 8  # the jne's offset in COMPARISON
JMP = 0xEB  # jmp rel8: the same target, unconditionally


def directory(lib64: Path, version: str) -> Path:
    """The directory to run itb-sim's ns-3 from: ITB's (made now if missing or older than
    the wheel's library), or the wheel's own when its library is not the one expected."""
    internet = lib64 / f"libns{version}-internet.so"
    out = native.REPO / "build" / "native" / f"ns3-{version}"
    mine = out / internet.name
    if mine.exists() and mine.stat().st_mtime >= internet.stat().st_mtime:
        return out
    data = bytearray(internet.read_bytes())
    if data.count(COMPARISON) != 1:
        return lib64
    data[data.index(COMPARISON) + JNE_AT] = JMP
    out.mkdir(parents=True, exist_ok=True)
    for lib in lib64.iterdir():
        link = out / lib.name
        if lib.name != internet.name and not link.exists():
            link.symlink_to(lib)
    tmp = mine.with_name(f"{mine.name}.{os.getpid()}.tmp")
    tmp.write_bytes(bytes(data))
    os.replace(tmp, mine)
    return out
