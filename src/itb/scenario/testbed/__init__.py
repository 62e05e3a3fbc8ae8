"""The testbed half of a scenario: the network an experiment runs on.

A testbed file (or a scenario file's testbed sections: `[testbed]`, `[dumbbell]`,
`[bottleneck]`, `[[node]]`, `[[link]]`, …) as written (`schema`), compiled by its
topology (`topologies`: dumbbell, chain, star) into the resolved `Topology` every backend
consumes (`model`), loaded with the command line's overrides (`load`); the paths through
it (`paths`) and what a path promises (`pathspec`). Nothing here knows the experiment.
"""
