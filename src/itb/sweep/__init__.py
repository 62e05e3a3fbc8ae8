"""Sweeps: many generated scenarios, repeated in a seeded order, resumable, run look by
look — the engine of the benchmark (itb.suite) and of every study (itb.study), below
both: `sweep` (Sweep, drive), `index` (the sweep's index file as typed models),
`parallel` (simulated cells side by side, or on a Dask cluster)."""
