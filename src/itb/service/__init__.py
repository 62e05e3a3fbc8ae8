"""The scheduled transfer service (docs/service.md): requests with a volume, a window and
a maximum rate, admitted on an access link by a planner and kept by paced transports.

`model` (requests, plans), `usage` (a link's allocated rate over time), `greedy` (TS1,
TS2, EDF, as late as possible), `exact` (ITB's planner: LP admission, MILP selection),
`check` (every plan re-verified), `metrics`, `workload` (the paper's example and seeded
random workloads) are pure, in float seconds. The service plans in integers (`intplan`:
ns dates, bit/s, exact bytes; `replan` after a capacity change; `schedule`, a link's plans
indexed for its readers) in its `ledger`, kept in `store` (SQLite); `schema`, `guard`,
`api` and `serving` are its HTTP side, `execute` runs its plans on a testbed, `scenario`
makes a plan an ITB scenario.
"""
