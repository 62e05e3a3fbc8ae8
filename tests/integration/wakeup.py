"""How late this machine wakes a sleeper while a timing test runs.

`make test` runs the unit, simulation and lint jobs beside the integration tests on the
same cores (at lower priority, but a non-preemptive kernel still wakes a process only at
the next scheduling point). A test of a timing claim (start skew, finish against a plan)
measures the machine's own wake-up lag at the same time and grants exactly that much, so
its bound still fails when the tool is late on a quiet machine.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

PERIOD_S = 0.001


@dataclass
class WakeupLag:
    overshoots_ms: list[float] = field(default_factory=list)

    def quantile_ms(self, q: float) -> float:
        """The q-quantile of how late a 1 ms sleep woke (nearest rank); 0 without samples."""
        if not self.overshoots_ms:
            return 0.0
        xs = sorted(self.overshoots_ms)
        return xs[min(len(xs) - 1, int(q * len(xs)))]

    @property
    def max_ms(self) -> float:
        return max(self.overshoots_ms, default=0.0)


@contextmanager
def wakeup_lag():
    """Sleeps 1 ms over and over in a thread while the block runs; yields the record of
    each sleep's overshoot (the time past 1 ms it woke)."""
    lag = WakeupLag()
    stop = threading.Event()

    def probe():
        while not stop.is_set():
            t0 = time.perf_counter()
            time.sleep(PERIOD_S)
            lag.overshoots_ms.append(max(0.0, (time.perf_counter() - t0 - PERIOD_S) * 1e3))

    t = threading.Thread(target=probe, daemon=True)
    t.start()
    try:
        yield lag
    finally:
        stop.set()
        t.join()
