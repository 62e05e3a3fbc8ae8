"""The service tests' fixture: `server(*args)` starts a real `itb serve` (tests/service/server.py)."""

from tests.service.server import server  # noqa: F401 (the fixture)
