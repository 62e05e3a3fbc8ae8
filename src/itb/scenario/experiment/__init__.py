"""The experiment half of a scenario: what happens on the testbed, and when.

`[experiment]` and the event arrays as written (`sections`), resolved against a testbed
into frozen, dated events and the `Experiment` holding them (`timeline`, `events`), and
the concrete events of one repetition, its background flows drawn (`background`); rate
profiles (`profile`), the files a transfer reads or writes (`files`) and the congestion
controls by canonical name (`algorithms`). It reads the testbed (`itb.scenario.testbed`);
the testbed never reads it.
"""
