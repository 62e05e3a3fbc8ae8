"""`--backend ssh --inventory FILE`: real hosts over SSH (docs/ssh.md); an inventory
with a provider reserves them through EnOSlib around each run."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from itb.backends.registry import Backend, Kind, OfHosts, Option
from itb.errors import ScenarioError

if TYPE_CHECKING:
    from itb.backends.ssh.inventory import Inventory
    from itb.backends.testbed import CcSupport, Hosted, Say, Testbed
    from itb.scenario.testbed.model import Topology

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)  # (and SIGINT: KeyboardInterrupt already)


@dataclass(frozen=True)
class Ssh(OfHosts):
    source: str  # the inventory's file, as given (a sweep's key)
    inventory: Inventory | None = None  # None: known by its key only (a report rebuilt)

    name: ClassVar[str] = "ssh"
    same_machine: ClassVar[bool] = False

    def key(self) -> dict:
        return {"inventory": self.source}

    def loaded(self) -> Inventory:
        if self.inventory is None:
            from itb.backends.ssh import inventory

            return inventory.load(self.source)
        return self.inventory

    def open(
        self,
        topology: Topology,
        ccs: CcSupport,
        *,
        hosted: Hosted | None = None,
        seed: int = 1,
        say: Say | None = None,
        only: set[str] | None = None,
    ) -> Testbed:
        from itb.backends.ssh.testbed import SshTestbed
        from itb.backends.testbed import quiet

        tb = SshTestbed(self.loaded(), topology, ccs, seed=seed, say=say or quiet, only=only)
        tb.hosted = hosted
        return tb

    @contextlib.contextmanager
    def reserved(self, say: Say) -> Iterator[Backend]:
        """Hosts reserved through EnOSlib (an inventory with a provider), released at the
        end whatever happens (failure, Ctrl-C, SIGTERM: during the reservation they
        interrupt it, then release)."""
        inv = self.loaded()
        if inv.provider is None:
            yield self
            return
        from itb.backends.ssh import enos

        enos.validate(inv)  # the configuration against EnOSlib's schema, before reserving
        try:
            with _interruptible():
                got = enos.reserve(inv, say)
            yield replace(self, inventory=got)
        finally:
            enos.release(inv, say)


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """SIGTERM and SIGHUP interrupt what runs (as Ctrl-C does), in the main thread."""
    me = os.getpid()

    def interrupt(signum: int, frame: Any) -> None:
        if os.getpid() != me:  # a forked child: no copy of this stack's clean-ups runs
            os._exit(128 + signum)
        raise KeyboardInterrupt(signal.Signals(signum).name)

    main = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS} if main else {}
    try:
        for sig in previous:
            signal.signal(sig, interrupt)
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def load(path: Path | str) -> Inventory:
    """The inventory at `path` (refused when bad, naming the file and field); the hosts
    of a lab held for the whole command (a benchmark's runs and what comes between
    them): `itb lab down` refuses meanwhile."""
    import atexit

    from itb.backends.ssh import inventory, labhold

    inv = inventory.load(path)
    hold = labhold.hold(inv.ssh.lab, inv.source)
    if hold is not None:
        atexit.register(hold.release)
    return inv


def make(inventory: Path | str | None = None) -> Ssh:
    """The SSH backend of this inventory, loaded before anything runs (see `load`)."""
    if inventory is None:
        raise ScenarioError(None, "--backend", "the SSH testbed needs --inventory")
    inv = load(inventory)
    return Ssh(str(inv.source), inv)


KIND = Kind(
    name="ssh",
    help="real hosts over SSH, as --inventory describes them (implied by --inventory)",
    options=(
        Option(
            "inventory",
            "--inventory",
            Path | None,
            "Run on the SSH testbed this inventory describes (hosts, keys, roles; "
            "docs/ssh.md) instead of the local one. `itb lab up` writes one for this "
            "machine: runs/lab/inventory.toml.",
            implies=True,
        ),
    ),
    make=make,
    from_key=lambda key: Ssh(str(key["inventory"])) if key.get("inventory") else None,
    order=1,
)
