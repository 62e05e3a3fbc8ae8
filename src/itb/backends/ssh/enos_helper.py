"""ITB's calls into EnOSlib, run by the Python of EnOSlib's own environment.

EnOSlib pins library versions ITB cannot share (rich 12), so it lives in a virtual
environment of its own (`make enoslib`: .venv-enoslib) and ITB runs this file there.
It imports nothing of ITB. One command per call; the answer is one JSON line on stdout
(errors: {"error": ...} and exit 1):

    python enos_helper.py validate KIND CONFIG.json
    python enos_helper.py reserve  KIND CONFIG.json
    python enos_helper.py release  KIND CONFIG.json

KIND: static | g5k | chameleon | vagrant. CONFIG: EnOSlib's configuration dictionary of
that provider (its `resources` with `machines` and `networks`, the job's options),
plus ITB's `data_networks` (the network roles whose interfaces are the data plane) and
`data_subnet` (the data addresses ITB gives the end hosts).

`reserve` returns the hosts EnOSlib gives, with their roles (ITB's: left, right,
emulator): {"hosts": [{"name", "address", "port", "user", "key", "roles", "extra",
"data": {network role: [[interface, address/prefix], ...]}}]}.
"""

from __future__ import annotations

import json
import sys

ITB_ROLES = ("left", "right", "emulator")
ITB_KEYS = ("data_networks", "data_subnet")  # ITB's, not EnOSlib's


def _enoslib():
    import enoslib  # only in EnOSlib's environment

    return enoslib


def _conf(en, kind: str, config: dict):
    """The provider's configuration object (schema-checked by EnOSlib)."""
    config = {k: v for k, v in config.items() if k not in ITB_KEYS}
    if kind == "static":
        return en.StaticConf.from_dictionary(config)
    if kind == "g5k":
        return en.G5kConf.from_dictionary(config)
    if kind == "chameleon":
        return en.CBMConf.from_dictionary(config)
    if kind == "vagrant":
        return en.VagrantConf.from_dictionary(config)
    raise ValueError(f"unknown provider kind {kind!r}")


def _provider(en, kind: str, conf):
    cls = {"static": "Static", "g5k": "G5k", "chameleon": "CBM", "vagrant": "Vagrant"}[kind]
    if not hasattr(en, cls):
        raise RuntimeError(
            f"EnOSlib's {cls} provider is not installed in its environment "
            f"(pip install 'enoslib[{kind}]' there)"
        )
    return getattr(en, cls)(conf)


def validate(kind: str, config: dict) -> dict:
    """The configuration against EnOSlib's schema, without contacting the testbed (for
    Grid'5000 the schema alone: building its configuration asks the API for sites)."""
    en = _enoslib()
    if kind == "g5k":
        from enoslib.infra.enos_g5k.schema import SCHEMA_USER

        en.G5kConf.validate({k: v for k, v in config.items() if k not in ITB_KEYS}, SCHEMA_USER)
    else:
        _conf(en, kind, config)
    return {"ok": True, "kind": kind}


def hosts_of(roles, networks, data_networks: list[str]) -> list[dict]:
    """EnOSlib's roles → one entry per host (a host in several roles appears once)."""
    found: dict[str, dict] = {}
    for role, hosts in roles.items():
        for h in hosts:
            entry = found.setdefault(
                h.alias or h.address,
                {
                    "name": h.alias or h.address,
                    "address": h.address,
                    "port": h.port or 22,
                    "user": h.user,
                    "key": h.keyfile,
                    "roles": [],
                    "extra": dict(h.extra or {}),
                    "data": {},
                },
            )
            if role not in entry["roles"]:
                entry["roles"].append(role)
            for net_role in data_networks:
                nets = networks.get(net_role) if networks else None
                if not nets:
                    continue
                pairs = [[a.interface, str(a.ip)] for a in h.filter_addresses(nets) if a.interface]
                if pairs:
                    entry["data"][net_role] = pairs
    return sorted(found.values(), key=lambda e: e["name"])


def reserve(kind: str, config: dict) -> dict:
    en = _enoslib()
    provider = _provider(en, kind, _conf(en, kind, config))
    roles, networks = provider.init()
    data_networks = list(config.get("data_networks") or [])
    if data_networks and kind != "static":
        # the hosts' interfaces and addresses on each network (runs Ansible on them)
        roles = en.sync_info(roles, networks)
    return {"hosts": hosts_of(roles, networks, data_networks)}


def release(kind: str, config: dict) -> dict:
    en = _enoslib()
    provider = _provider(en, kind, _conf(en, kind, config))
    provider.destroy()
    return {"released": True, "kind": kind}


def main(argv: list[str]) -> int:
    if len(argv) != 4 or argv[1] not in ("validate", "reserve", "release"):
        print(
            json.dumps({"error": "usage: enos_helper.py validate|reserve|release KIND CONFIG.json"})
        )
        return 2
    try:
        with open(argv[3]) as f:
            config = json.load(f)
        answer = {"validate": validate, "reserve": reserve, "release": release}[argv[1]](
            argv[2], config
        )
    except Exception as e:  # reported to ITB, which names the provider and the call
        print(json.dumps({"error": f"{type(e).__name__}: {str(e).strip()[:1500]}"}))
        return 1
    print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
