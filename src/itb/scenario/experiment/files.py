"""Files a transfer reads or writes: confined to the directory the scenario names
(`[experiment] files_dir`), never outside it, and an existing sink is only replaced
with `overwrite = true`."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from itb.errors import ScenarioError


def confine(
    name: str | None,
    files_dir: str | None,
    source: str | None,
    field: str,
    *,
    sink: bool,
    overwrite: bool,
) -> str | None:
    """The absolute path of a transfer's `source_file`/`sink_file`; `ScenarioError` when
    it leaves `files_dir`, when there is no `files_dir`, or when a sink would replace a
    file without `overwrite = true`."""
    if name is None:
        return None
    if files_dir is None:
        raise ScenarioError(
            source,
            field,
            "a transfer from or to a file needs [experiment] "
            'files_dir = "DIR": the one directory transfers '
            "may read and write",
        )
    rel = PurePosixPath(name)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise ScenarioError(
            source, field, f"{name!r} must be a path inside files_dir (relative, without '..')"
        )
    base = Path(files_dir)
    if not base.is_absolute() and source and source != "<command line>":
        base = Path(source).resolve().parent / base  # relative to the scenario file
    base = base.resolve()
    path = (base / rel).resolve()
    if base not in path.parents:
        raise ScenarioError(
            source, field, f"{name!r} leads outside files_dir {base} (a symbolic link?)"
        )
    if sink and path.exists() and not overwrite:
        raise ScenarioError(
            source,
            field,
            f"{path} exists: it is not overwritten unless the transfer says overwrite = true",
        )
    if not sink and not path.is_file():
        raise ScenarioError(source, field, f"{path} is not a file")
    return str(path)
