"""The scheduled transfer service (docs/service.md): requests with a volume, a window and
a maximum rate, admitted on an access link by a planner and kept by paced transports.

`model` (requests, plans), `usage` (a link's allocated rate over time), `greedy` (TS1,
TS2, EDF, as late as possible), `exact` (ITB's planner: LP admission, MILP selection),
`check` (every plan re-verified), `metrics`, `workload` (the paper's example and seeded
random workloads) are pure; `store` (SQLite), `api` (HTTP) and `scenario` (a plan as an
ITB scenario) are the service around them.
"""
