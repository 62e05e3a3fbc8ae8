"""What an inventory claims about each host, checked there: the programs ITB needs, the
data-plane interfaces and address, a `remote_dir` ITB may work in, no directory of
someone else's where ITB's would go, and distinct machines behind distinct entries.

A run's preflight stops at the first problem (`first_problem`); `itb inventory check`
lists them all (`problems`). Nothing is changed on any host.
"""

from __future__ import annotations

from dataclasses import dataclass

from itb.backends.ssh import itbdir
from itb.backends.ssh.hosts import missing_tools
from itb.backends.ssh.inventory import Inventory, InventoryHost
from itb.backends.ssh.remote import Remote
from itb.errors import BackendError, ItbError, PreflightError


@dataclass(frozen=True)
class Problem:
    message: str
    error: type[ItbError] = PreflightError  # what a run raises for it
    tools: bool = False  # programs ITB needs are missing: nothing else could be checked

    def raise_it(self) -> None:
        raise self.error(self.message)


def host_problems(r: Remote, h: InventoryHost, seen: itbdir.Probe | None = None) -> list[Problem]:
    """Everything on host `r` that contradicts its inventory entry `h` (`seen`: ITB's
    directory and remote_dir there, when the caller probed them already)."""
    out: list[Problem] = []
    try:
        missing_tools(r)
    except PreflightError as e:
        return [Problem(str(e), tools=True)]  # the checks below need those programs
    field, ifaces = h.ifaces_field, h.ifaces
    lacking = [
        i for i in ifaces if r.run(["ip", "link", "show", "dev", i], check=False).returncode != 0
    ]
    out += [Problem(f"host {r.name}: field {field}: no interface {i!r} there") for i in lacking]
    if h.data_addr and h.data_iface and h.data_iface not in lacking and not h.add_address:
        have = r.run(["ip", "-o", "addr", "show", "dev", h.data_iface]).stdout.split()
        if h.data_addr not in have:
            out.append(
                Problem(
                    f"host {r.name}: field data_addr: {h.data_addr} is not an address of "
                    f"{h.data_iface} there (set add_address = true for ITB to add it, and "
                    "remove it afterwards)"
                )
            )
    seen = seen or itbdir.probe(r)
    problem = itbdir.root_problem(r, seen)
    if problem:
        out.append(Problem(problem))
    st = seen.status
    if st != "absent" and (st != "ours" or itbdir.marker(r) is None):
        out.append(
            Problem(
                itbdir.foreign_reason(r, st) + ": refused, nothing was changed "
                "(choose another remote_dir or ITB_PREFIX, or remove it yourself)",
                BackendError,
            )
        )
    return out


def same_machine(remotes: dict[str, Remote]) -> list[Problem]:
    """Two entries whose sshd presents one host key: one machine listed twice (their ITB
    directories and state would be one)."""
    seen: dict[str, str] = {}
    out = []
    for name, r in sorted(remotes.items()):
        fp = r.conn.host_key_fingerprint()
        if fp is None:
            continue
        if fp in seen:
            out.append(
                Problem(
                    f"host {name}: presents the host key of host {seen[fp]} ({fp}): "
                    "one machine listed twice",
                    BackendError,
                )
            )
        else:
            seen[fp] = name
    return out


def problems(inv: Inventory, remotes: dict[str, Remote]) -> list[Problem]:
    out = same_machine(remotes)
    for name, r in sorted(remotes.items()):
        out += host_problems(r, inv.get(name))
    return out
