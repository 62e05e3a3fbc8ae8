"""The SSH backend: real hosts, as an inventory describes them (docs/ssh.md).

`backend` declares it to the registry (`--backend ssh`, `--inventory`); `testbed.
SshTestbed` is its testbed. Outside `itb.backends`, only the modules of `PUBLIC` are
imported: what the CLI's commands of SSH hosts use (`itb lab`, `itb inventory check`,
`itb clean --inventory`); the rest is the backend's own (tests/unit/test_layers.py)."""

PUBLIC = ("backend", "cleanup", "hostkeys", "hosts", "inventory", "lab", "labhold", "verify")
