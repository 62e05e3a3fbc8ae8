"""The five ITB applications (docs/benchmark.md) as generators of engine scenarios: from a
class, its scale on this testbed, a congestion control and a seed, each returns a
scenario document (the TOML `itb run` reads) and a description of how it realised
the class's sources.

Sources. A class has M = C_g·K forward sources and R·K reverse sources, each of
nominal capacity C_a. ITB realises every source as one TCP stream paced at C_a
(SO_MAX_PACING_RATE) rather than as one host behind a C_a access link: a K = 1000
class needs 800–2000 sources, far more than namespaces one machine can hold. Up to
MAX_SINGLE sources per direction each get their own transfer (their own completion
time); beyond that they are bundled into transfers of up to 64 streams ("virtual
sources"), a bundle completing when its last stream does. Transfers are spread over
at most MAX_PAIRS host pairs of a dumbbell whose bottleneck is the class's scaled C.

Adverse traffic (the class's reverse sources, PA's forward load) runs with
`wait = false`: it is stopped once the measured transfers are done.

`registry` (the applications by name: `generate`), `parts` (the cell, what an
application returns, and the tables and sources every application's scenario is made
of), and one module per family: `bulk` (BU), `throughput` (TU), `web` (WM, PP),
`pingpong` (PA).
"""

from itb.suite.apps.bulk import bulk
from itb.suite.apps.parts import Cell, Generated
from itb.suite.apps.pingpong import PA_MESSAGES
from itb.suite.apps.registry import APPS, check_app, generate, variants

__all__ = ["APPS", "PA_MESSAGES", "Cell", "Generated", "bulk", "check_app", "generate", "variants"]
