"""The import graph of the package: layers only import downwards, no module cycle.

Layers, lowest first: errors, files and native; scenario; rundir (the run directory's
format); emulation; backends; cc; calibration; engine; analysis; draw (the reports'
drawing kit: figures, HTML pages); sweep (the runs of a benchmark or a study); suite
(the ITB benchmark); study; report; cli.
Function-level imports count too. The drivers (suite, study) return typed results and
never import itb.report: the CLI looks a report up (a study's is its subpackage's
`report` module, drawn with itb.draw, the benchmark's too; a run's is itb.report's).
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "src" / "itb"
LEVEL = {
    "__init__": -1,
    "errors": -1,
    "files": -1,
    "native": -1,
    "say": -1,
    "scenario": 0,
    "rundir": 0.5,
    "emulation": 1,
    "backends": 2,
    "cc": 3,
    "calibration": 4,
    "engine": 5,
    "analysis": 6,
    "draw": 6.5,
    "sweep": 6.8,
    "suite": 7,
    "service": 7.5,
    "study": 8,
    "report": 9,
    "cli": 10,
}


def _study(name: str) -> str | None:
    """The study subpackage a module (or a name in it) belongs to: itb.study.<study>.…"""
    parts = name.split(".")
    if len(parts) >= 3 and parts[1] == "study" and (PKG / "study" / parts[2]).is_dir():
        return parts[2]
    return None


def _study_report(name: str) -> bool:
    """A study's report module (or a name in it): itb.study.<study>.report or .report_*."""
    parts = name.split(".")
    return (
        _study(name) is not None
        and len(parts) >= 4
        and (parts[3] == "report" or parts[3].startswith("report_"))
    )


def _layer(name: str) -> float:
    return LEVEL.get(name.split(".")[1], -1)


def _module(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "itb" or node.module.startswith("itb."):
                # `from itb.x import y`: y may be a module (itb.x.y) or a name in itb.x
                out |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("itb.")}
    return out


def _listed(pairs: list[tuple[str, str]]) -> str:
    return "".join(f"\n  {m} imports {i}" for m, i in pairs)


@cache  # the source does not change during a test session
def _graph() -> dict[str, set[str]]:
    return {_module(f): _imports(f) for f in PKG.rglob("*.py")}


def test_every_package_has_a_layer():
    assert {m.split(".")[1] for m in _graph() if m != "itb"} <= set(LEVEL)


def test_no_layer_imports_a_higher_one():
    upward = sorted(
        (m, i) for m, imps in _graph().items() if m != "itb" for i in imps if _layer(i) > _layer(m)
    )
    assert upward == [], _listed(upward)


def test_the_drivers_never_import_a_report():
    """itb.suite and itb.study return typed results; the report is the CLI's to look up
    (itb.cli.studies: `<study package>.report.build`; the benchmark's and the runs' it
    passes in). So none of their modules imports itb.report, and only a study's report
    modules import its report modules, at the top or in a function."""
    drivers = sorted(
        (m, i)
        for m, imps in _graph().items()
        if m.split(".")[1:2] in (["sweep"], ["suite"], ["study"])
        for i in imps
        if i == "itb.report"
        or i.startswith("itb.report.")
        or (_study_report(i) and not _study_report(m))
    )
    assert drivers == [], _listed(drivers)


def test_a_study_reaches_no_other_study():
    """Each study is its subpackage: what two share is a module of itb.study's own (pursuit,
    bulk, options), not one study's insides."""
    across = sorted(
        (m, i)
        for m, imps in _graph().items()
        if _study(m)
        for i in imps
        if _study(i) and _study(i) != _study(m)
    )
    assert across == [], _listed(across)


def test_no_module_cycle():
    g = _graph()
    known = set(g)

    def target(name: str) -> str | None:  # `from itb.x import y` may name a module y
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    edges = {m: {t for i in imps if (t := target(i)) and t != m} for m, imps in g.items()}
    state: dict[str, int] = {}
    cycles = []

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in edges.get(m, ()):
            if state.get(n) == 1:
                cycles.append(path[path.index(n) :] + [n] if n in path else [m, n])
            elif n not in state:
                visit(n, path + [n])
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m, [m])
    assert cycles == []


def test_no_private_name_crosses_modules():
    """`from itb.x import _y` makes a module's internals another's interface."""
    bad = []
    for path in PKG.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("itb"):
                bad += [
                    f"{_module(path)}: {node.module}.{a.name}"
                    for a in node.names
                    if a.name.startswith("_")
                ]
    assert not bad, bad


def test_no_module_is_much_over_400_lines():
    long = {
        _module(p): n for p in PKG.rglob("*.py") if (n := len(p.read_text().splitlines())) > 420
    }
    assert not long, long


MAX_FUNCTION_LINES = 120  # a function longer than this does several things: split it


def _long_functions(source: str) -> list[tuple[str, int]]:
    return [
        (node.name, n)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (n := node.end_lineno - node.lineno + 1) > MAX_FUNCTION_LINES  # type: ignore[operator]
    ]


def test_no_function_is_longer_than_120_lines():
    long = {
        f"{_module(p)}.{name}": n
        for p in PKG.rglob("*.py")
        for name, n in _long_functions(p.read_text())
    }
    assert not long, long


def test_the_function_length_check_sees_a_long_function_and_its_decorator_lines_not():
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    # def line + 120 body lines = 121 lines: too long; one line fewer fits
    assert _long_functions(f"def f():\n{body}\n") == [("f", 121)]
    assert _long_functions("@decorated\ndef g():\n" + body.split("\n", 1)[1] + "\n") == []


def _public(backend: str) -> set[str]:
    """The modules of a backend's package offered outside itb.backends: its __init__'s
    PUBLIC (read from its source, as everything here), and its declaration."""
    init = PKG / "backends" / backend / "__init__.py"
    for node in ast.walk(ast.parse(init.read_text())):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "PUBLIC" for t in node.targets
        ):
            return set(ast.literal_eval(node.value)) | {"backend"}
    return {"backend"}


def _backends() -> list[str]:
    """The backends: the subpackages of itb.backends that declare one (backend.py)."""
    return sorted(d.name for d in (PKG / "backends").iterdir() if (d / "backend.py").is_file())


def _inside_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Imports, from outside itb.backends, of a module of a backend's package that is
    not public (a name of the package itself, e.g. `from itb.backends.local import up`,
    is public)."""
    found = []
    for m, imps in graph.items():
        if m.startswith("itb.backends.") or m == "itb.backends":
            continue
        for i in imps:
            parts = i.split(".")
            if len(parts) < 4 or parts[:2] != ["itb", "backends"] or parts[2] not in _backends():
                continue
            pkg = PKG / "backends" / parts[2]
            module = parts[3]
            if not ((pkg / f"{module}.py").exists() or (pkg / module).is_dir()):
                continue  # a name of the package's __init__
            if module not in _public(parts[2]):
                found.append((m, i))
    return sorted(found)


def test_nothing_outside_the_backends_imports_a_backends_inside():
    """A backend is reached through the registry (itb.backends.registry), the testbed
    interface (itb.backends.testbed) and what its package makes public (the SSH
    backend's inventory, lab and clean-up for the CLI's commands of SSH hosts): the
    sweep, the runner, a study never reach into one."""
    inside = _inside_imports(_graph())
    assert inside == [], _listed(inside)


def test_the_inside_import_check_sees_one_added(tmp_path):
    added = tmp_path / "leak.py"
    added.write_text(
        "from itb.backends.sim.config import unsupported\n"
        "from itb.backends.ssh import testbed\n"
        "from itb.backends import registry\n"
        "from itb.backends.ssh import inventory\n"
        "from itb.backends.local import up\n"
        "def f():\n    import itb.backends.local.build\n"
    )
    graph = {"itb.sweep.leak": _imports(added)}
    assert _inside_imports(graph) == [
        ("itb.sweep.leak", "itb.backends.local.build"),
        ("itb.sweep.leak", "itb.backends.sim.config.unsupported"),
        ("itb.sweep.leak", "itb.backends.ssh.testbed"),
    ]
    assert _backends() == ["local", "sim", "ssh"]


def test_one_testbed_protocol_and_no_facade_around_it():
    protocols, facades = [], []
    for path in PKG.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
            if "Protocol" in bases and "Testbed" in node.name:
                protocols.append((_module(path), node.name))
            elif (
                node.name.endswith(("Testbed", "Bed")) and _module(path).split(".")[1] != "backends"
            ):
                facades.append((_module(path), node.name))
    assert protocols == [("itb.backends.testbed", "Testbed")]
    assert facades == []  # a wrapper of a backend outside backends/ is a second interface


def test_the_analysis_names_no_link_it_should_read_from_the_topology():
    """A link's name (the dumbbell's "rl-rr", …) in the analysis would tie it to one
    topology: the bottleneck comes from the run's own topology or metrics."""
    from itb.scenario import load_testbed

    root = PKG.parents[1] / "scenarios" / "examples"
    names = {lk.name for f in root.glob("*.toml") for lk in load_testbed(f).links}
    assert "rl-rr" in names
    found = sorted(
        (_module(p), node.value)
        for p in (PKG / "analysis").rglob("*.py")
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.Constant) and node.value in names
    )
    assert found == []


def test_the_testbed_half_of_a_scenario_never_reads_the_experiment_half():
    """itb.scenario.testbed (the network) stands alone; the experiment is resolved against
    it (itb.scenario.experiment imports it, never the reverse), and the whole file is
    itb.scenario.scenario, above both."""
    up = ("itb.scenario.experiment", "itb.scenario.scenario")
    reads = sorted(
        (m, i)
        for m, imps in _graph().items()
        if m.startswith("itb.scenario.testbed")
        for i in imps
        if any(i == u or i.startswith(u + ".") for u in up)
    )
    assert reads == [], _listed(reads)
    assert not any(
        m.startswith("itb.scenario.experiment")
        and any(i.startswith("itb.scenario.scenario") for i in imps)
        for m, imps in _graph().items()
    )
