"""The simulated testbed: a timeline's repetitions run in ns-3 (docs/simulation.md)."""
