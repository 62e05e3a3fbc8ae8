"""The hosts' SSH keys, as a person (`itb inventory trust`) or a reservation
(`accept_new_host_keys`) accepts them: the key a host presents, fetched without logging
in, and the inventory's known_hosts file, read and extended (a key is known, new, or
changed; a changed key is never replaced). The connections themselves verify against
that file only (itb.backends.ssh.conn)."""

from __future__ import annotations

import asyncio

import asyncssh

from itb.backends.ssh.conn import call
from itb.backends.ssh.inventory import Inventory, InventoryHost
from itb.errors import PreflightError


def fetch_host_key(inv: Inventory, host: InventoryHost):
    """The key the host presents (for the user to accept), without logging in."""

    async def go():
        return await asyncio.wait_for(
            asyncssh.get_server_host_key(host.address, host.port, config=[]),
            inv.ssh.connect_timeout_s,
        )

    try:
        key = call(go(), timeout=inv.ssh.connect_timeout_s + 5)
    except (OSError, asyncssh.Error, TimeoutError) as e:
        raise PreflightError(
            f"host {host.name}: field address: cannot connect to "
            f"{host.address}:{host.port}: {e or type(e).__name__}"
        ) from None
    if key is None:
        raise PreflightError(f"host {host.name}: {host.address}:{host.port} presented no host key")
    return key


def known_hosts_line(host: InventoryHost, key) -> str:
    where = host.address if host.port == 22 else f"[{host.address}]:{host.port}"
    return f"{where} {key.export_public_key().decode().strip()}\n"


class KnownHosts:
    """The inventory's known_hosts file, as `itb inventory trust` and a reservation's
    `accept_new_host_keys` read and extend it: a key is known, new, or changed (a
    changed key is never replaced)."""

    def __init__(self, inv: Inventory):
        self.path = inv.known_hosts()
        self.known = asyncssh.read_known_hosts(str(self.path)) if self.path.is_file() else None
        self.added: list[str] = []

    def status(self, host: InventoryHost, key) -> str:
        """ "known", "new" or "changed" (another key is recorded for the host)."""
        if self.known is None:
            return "new"
        trusted = self.known.match(host.address, host.address, host.port)[0]
        if any(k.public_data == key.public_data for k in trusted):
            return "known"
        return "changed" if trusted else "new"

    def add(self, host: InventoryHost, key) -> None:
        self.added.append(known_hosts_line(host, key))

    def save(self) -> int:
        """Appends the accepted keys; returns how many."""
        if self.added:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a") as f:
                f.writelines(self.added)
        return len(self.added)
