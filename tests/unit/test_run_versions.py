"""meta.json's versions name every program and library a run's figures depend on: ITB's
native programs, and the simulator's ns-3 and the analysis's numpy, scipy and pandas."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from itb.engine.records import versions


def installed(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def test_the_versions_name_ns3_and_the_analysis_libraries_as_installed():
    got = versions()
    for name in ("numpy", "scipy", "pandas", "ns3"):
        assert name in got, name
        assert got[name] == installed(name), name
    assert got["numpy"] is not None and got["pandas"] is not None
