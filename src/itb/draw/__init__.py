"""Drawing kit of the reports: matplotlib set up for files (`plot`), self-contained HTML
pages from templates (`html`, the shared templates in templates/), a study's page from
its figures and its own template (`page`), and the figures the profile-pursuit studies
share (`pursuit`). It draws what it is given; it decides nothing. The reports themselves
(a run's, the benchmark's: `itb.report`; a study's: its subpackage's `report` module)
are built from it and looked up by the CLI."""
