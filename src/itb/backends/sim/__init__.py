"""The simulated testbed: a timeline's repetitions run in ns-3 (docs/simulation.md).

`backend` declares it to the registry (`--backend sim`, `--jobs`, `--dask`); the rest is
its own: nothing outside `itb.backends` imports it (tests/unit/test_layers.py)."""

PUBLIC = ("backend",)
