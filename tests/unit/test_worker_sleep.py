"""A node's worker starts a dated program in two sleeps and a spin: a long sleep until
10 ms before the date (a VM's idle vCPU may wake from it milliseconds late), a short one
until 1 ms before (from which it wakes within a fraction of a millisecond), then the last
millisecond spun (docs/experiment.md, "How a repetition runs")."""

from __future__ import annotations

from itb.backends.hostside import worker


class FakeClock:
    """monotonic_ns advancing 50 µs a reading; sleep advancing by its length plus a
    lateness (what the machine adds to a sleep of that length)."""

    def __init__(self, late_ns):
        self.now, self.sleeps, self.late_ns = 0, [], late_ns

    def monotonic_ns(self) -> int:
        self.now += 50_000
        return self.now

    def sleep(self, s: float) -> None:
        ns = round(s * 1e9)
        self.sleeps.append(ns)
        self.now += ns + self.late_ns(ns)


def test_a_date_100_ms_away_is_slept_in_two_stages_then_spun(monkeypatch):
    clock = FakeClock(lambda ns: 0)
    monkeypatch.setattr(worker.time, "monotonic_ns", clock.monotonic_ns)
    monkeypatch.setattr(worker.time, "sleep", clock.sleep)
    worker.sleep_until(100_000_000)
    # first reading at 0.05 ms: 99.95 ms left, slept to 10 ms before (89.95 ms); then
    # 9.95 ms left (one more reading), slept to 1 ms before (8.95 ms); then spun
    assert clock.sleeps == [89_950_000, 8_950_000]
    assert 100_000_000 <= clock.now < 100_100_000  # ended at the first reading past it


def test_a_long_sleep_that_wakes_3_ms_late_still_ends_on_the_date(monkeypatch):
    # 3 ms late after sleeps over 8 ms (as the VM's 50 ms waits), none after short ones
    clock = FakeClock(lambda ns: 3_000_000 if ns > 8_000_000 else 0)
    monkeypatch.setattr(worker.time, "monotonic_ns", clock.monotonic_ns)
    monkeypatch.setattr(worker.time, "sleep", clock.sleep)
    worker.sleep_until(100_000_000)
    # the long sleep ends 7 ms before (not 10): the short one takes it to 1 ms before
    assert clock.sleeps == [89_950_000, 5_950_000]
    assert 100_000_000 <= clock.now < 100_100_000
    # one stage sleeping to 1 ms before would have ended 2 ms past the date
