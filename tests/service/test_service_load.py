"""`itb serve` under a short load of tiny to 20 MB requests (the full one, 100 clients for
30 s, is bench/service_load.py): every answer a documented one, and every plan in the
store exact — its bytes the request's, within its window and max-rate, and the held and
committed ones together within the link (before integer plans 265 of 1 243 failed)."""

from __future__ import annotations

import asyncio

from tests.service import load
from tests.service.server import GBIT, MARGIN


def test_twenty_clients_for_three_seconds_leave_only_exact_plans_in_the_store(server):
    s = server()
    got = asyncio.run(load.run(s.url, 20, 3.0, seed=42))
    assert s.stop() and s.proc.returncode == 143
    assert got.codes["quote", 201] >= 100, got.codes
    assert {status for _, status in got.codes} == {200, 201}, got.codes  # never a 500
    assert got.states["held"] and got.states["refused"], got.states
    planned, failing, bad = load.check_store(s.db, GBIT, MARGIN)
    assert planned >= 100 and failing == 0, bad[:5]
