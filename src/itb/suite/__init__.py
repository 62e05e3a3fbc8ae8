"""The ITB benchmark (docs/benchmark.md): applications TU, WM, PP, BU, PA generate engine
timelines for the classes A–L, scaled to the testbed; `itb bench` sweeps them."""
