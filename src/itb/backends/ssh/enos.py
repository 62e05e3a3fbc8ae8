"""Reservation through EnOSlib: an inventory's `[provider]` (static, Grid'5000,
Chameleon, Vagrant) turned into the hosts of an SSH testbed, and released afterwards.

EnOSlib runs in its own environment (`enos_helper.py`, see there); this module finds
that environment's Python, calls the helper, and maps the hosts EnOSlib returns to
ITB's inventory hosts: their roles (left, right, host, emulator) and their data plane,
given per host in EnOSlib's `extra` (data_iface, data_addr, segment, emulator_ifaces or
wire) or discovered on the networks named by `data_networks` (`data`, or `data_left` /
`data_right` / `data_<segment>`: an end host's address on its segment's network, the
emulator's two interfaces on left and right).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

from itb import native
from itb.backends.ssh import inventory as I
from itb.errors import BackendError, PreflightError, ScenarioError
from itb.say import Say

HELPER = Path(__file__).with_name("enos_helper.py")
ROLES = ("left", "right", "host", "emulator")


def python() -> str:
    """ITB_ENOSLIB_PYTHON, else the environment `make enoslib` builds."""
    explicit = os.environ.get("ITB_ENOSLIB_PYTHON")
    path = Path(explicit) if explicit else Path(native.REPO) / ".venv-enoslib" / "bin" / "python"
    if not path.exists():
        raise PreflightError(
            f"EnOSlib's environment not found ({path}): `make enoslib` builds "
            "it (EnOSlib pins libraries ITB cannot share, so it lives apart); "
            "or set ITB_ENOSLIB_PYTHON"
        )
    return str(path)


def call(command: str, provider: I.Provider, timeout: float = 3600) -> dict:
    """One helper call; `BackendError` naming the provider and the call on failure."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(provider.config, f)
        conf = f.name
    try:
        res = subprocess.run(
            [python(), str(HELPER), command, provider.kind, conf],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise BackendError(
            f"EnOSlib ({provider.kind}) {command}: no answer in {timeout:.0f} s"
        ) from None
    finally:
        os.unlink(conf)
    answer = None
    for line in reversed(res.stdout.splitlines()):  # EnOSlib may print before the answer
        try:
            answer = json.loads(line)
            break
        except json.JSONDecodeError:
            continue
    if answer is None or "error" in answer:
        why = (answer or {}).get("error") or (res.stderr or res.stdout).strip()[-800:]
        raise BackendError(f"EnOSlib ({provider.kind}) {command} failed: {why}")
    return answer


def validate(inv: I.Inventory) -> None:
    if inv.provider is None:
        return
    try:
        call("validate", inv.provider, timeout=120)
    except BackendError as e:
        raise ScenarioError(inv.source, "provider.config", str(e)) from None


def _first(data: dict, *names: str) -> list | None:
    for n in names:
        if data.get(n):
            return data[n][0]
    return None


def to_host(entry: dict) -> dict | None:
    """One host EnOSlib returned → an inventory [[host]] table (None: no ITB role)."""
    role = next((r for r in ROLES if r in entry["roles"]), None)
    if role is None:
        return None
    extra, data = entry.get("extra") or {}, entry.get("data") or {}
    host = {
        "name": entry["name"],
        "address": entry["address"],
        "port": int(entry.get("port") or 22),
        "role": role,
    }
    for k in ("user", "key"):
        if entry.get(k):
            host[k] = entry[k]
    for k in (
        "data_iface",
        "data_addr",
        "emulator_ifaces",
        "wire",
        "segment",
        "nodes",
        "remote_dir",
        "add_address",
        "ebpf",
    ):
        if extra.get(k) is not None:
            host[k] = extra[k]
    if role == "emulator" and "emulator_ifaces" not in host and "wire" not in host:
        left, right = _first(data, "data_left", "data"), _first(data, "data_right")
        if left and right:
            host["emulator_ifaces"] = [left[0], right[0]]
    elif role != "emulator" and "data_iface" not in host:
        found = _first(data, f"data_{host.get('segment', role)}", "data")
        if found:
            host["data_iface"], host["data_addr"] = found
    return host


def assign_addresses(hosts: list[dict], subnet: str | None, source: str | None = None) -> None:
    """`data_subnet` (provider config): the end hosts' data addresses, one each from it in
    name order, added by ITB for the run (the emulator bridges the two sides at L2, so
    they must share one subnet, which separate VLANs' own addressing does not give)."""
    if not subnet:
        return
    import ipaddress

    try:
        net = ipaddress.ip_network(subnet)
    except ValueError as e:
        raise ScenarioError(source, "provider.config.data_subnet", str(e)) from None
    pool = net.hosts()
    ends = sorted((h for h in hosts if h["role"] != "emulator"), key=lambda h: h["name"])
    for h in ends:
        try:
            h["data_addr"] = f"{next(pool)}/{net.prefixlen}"
        except StopIteration:
            raise ScenarioError(
                source,
                "provider.config.data_subnet",
                f"{subnet} is too small for {len(ends)} end hosts",
            ) from None
        h["add_address"] = True


def reserve(inv: I.Inventory, say: Say = lambda s: None) -> I.Inventory:
    """Reserves (or finds again: EnOSlib reuses a running job of the same name) the
    provider's resources; returns the inventory with its hosts."""
    p = inv.provider
    if p is None:
        raise ScenarioError(inv.source, "provider", "no [provider] to reserve the hosts through")
    say(f"reserving through EnOSlib ({p.kind})")
    answer = call("reserve", p)
    hosts = [h for h in (to_host(e) for e in answer.get("hosts", [])) if h is not None]
    assign_addresses(hosts, p.config.get("data_subnet"), inv.source)
    if not hosts:
        raise BackendError(
            f"EnOSlib ({p.kind}) returned no host with an ITB role ({', '.join(ROLES)})"
        )
    data = {"ssh": inv.ssh.model_dump(exclude_none=True), "host": hosts}
    got = I.from_dict(data, inv.source)
    got = got.model_copy(update={"provider": p})
    say(
        f"EnOSlib gave {len(hosts)} host(s): "
        + ", ".join(f"{h['name']} ({h['role']})" for h in hosts)
    )
    if p.accept_new_host_keys:
        accept_keys(got, say)
    return got


def accept_keys(inv: I.Inventory, say: Say) -> None:
    """The keys of freshly reserved hosts, accepted because the inventory says so
    (`provider.accept_new_host_keys`); a key that differs from a recorded one is not."""
    from itb.backends.ssh import hostkeys

    known = hostkeys.KnownHosts(inv)
    for h in inv.host:
        key = hostkeys.fetch_host_key(inv, h)
        status = known.status(h, key)
        if status == "changed":
            raise PreflightError(
                f"host {h.name}: its host key changed ({key.get_fingerprint()}"
                f" is not the one in {known.path}): refused"
            )
        if status == "new":
            known.add(h, key)
            say(
                f"host {h.name}: accepted its new host key {key.get_fingerprint()} "
                "(provider.accept_new_host_keys)"
            )
    known.save()


def release(inv: I.Inventory, say: Say = lambda s: None) -> None:
    if inv.provider is None:
        return
    say(f"releasing the EnOSlib ({inv.provider.kind}) reservation")
    call("release", inv.provider, timeout=600)
