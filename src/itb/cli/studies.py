"""The studies' commands (`itb study …`, `itb profile calibrate`), built from the registry
(itb.study.registry): each study's options from its Args model's fields, and one run for
all: the sweep planned, run (resuming the directory of the same arguments), analysed and
reported, then the study's tables printed. The report is looked up here, by the study's
package (`<package>.report.build`): no module below the CLI imports a report.

Importing this module registers every study of `itb.study` on the `itb` app."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import annotated_types
import typer
from pydantic import ValidationError
from pydantic.fields import FieldInfo
from rich.table import Table as RichTable

from itb.backends.registry import Backend
from itb.cli.backend import chosen, ready
from itb.cli.backend import parameters as backend_parameters
from itb.cli.common import ItbGroup, app, err, out, profile_app, say, study_app, ticker
from itb.cli.output import JSON, print_json
from itb.errors import ScenarioError
from itb.study.args import StudyArgs, option_of
from itb.study.registry import Line, OwnOutput, Registered, Report, Table, studies

if TYPE_CHECKING:
    from itb.sweep.sweep import Sweep

GROUPS: dict[tuple[str, ...], typer.Typer] = {
    (): app,
    ("study",): study_app,
    ("profile",): profile_app,
}


def report_of(entry: Registered) -> Report:
    """The study's report: `build` of its package's report module."""
    return importlib.import_module(f"{entry.package}.report").build


def _bounds(field: FieldInfo) -> dict:
    """typer's min / max from the field's ge / le (the option refuses what the model would)."""
    out: dict[str, Any] = {}
    for m in field.metadata:
        if isinstance(m, annotated_types.Ge):
            out["min"] = m.ge
        elif isinstance(m, annotated_types.Le):
            out["max"] = m.le
    return out


def parameters(args: type[StudyArgs]) -> list[inspect.Parameter]:
    """One keyword parameter per option field, as typer reads them: a parsed field is
    given as text (its default the field's text default)."""
    params = []
    for name, field in args.model_fields.items():
        opt = option_of(field)
        if opt is None:
            continue
        default = field.get_default()
        if opt.parse is not None:
            annotation: Any = str | None if default is None else str
        else:
            annotation = field.annotation
        params.append(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=annotation,
                default=typer.Option(
                    default,
                    opt.flag,
                    help=field.description,
                    metavar=opt.metavar,
                    **_bounds(field),
                ),
            )
        )
    return params


def command(entry: Registered) -> Callable[..., None]:
    """The typer command of a study: its options from its Args, its help the study's."""
    study = entry.study

    def run_command(**given: Any) -> None:
        as_json = given.pop("as_json")
        backend = chosen(given)
        try:
            args = study.Args(**given, backend=backend)
        except ValidationError as e:  # a type the options let through (a bug of the study)
            first = e.errors()[0]
            field = study.Args.model_fields.get(str(first["loc"][0])) if first["loc"] else None
            opt = option_of(field) if field else None
            raise ScenarioError(None, opt.name if opt else "(arguments)", first["msg"]) from None
        run(entry, args, as_json=as_json)

    params = [*parameters(study.Args), *backend_parameters(), AS_JSON]
    run_command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    run_command.__annotations__ = {p.name: p.annotation for p in params} | {"return": None}
    run_command.__doc__ = study.help
    run_command.__name__ = run_command.__qualname__ = "_".join(study.name).replace("-", "_")
    return run_command


AS_JSON = inspect.Parameter(
    "as_json", inspect.Parameter.KEYWORD_ONLY, annotation=bool, default=JSON
)


def on_backend(sweep: Sweep, backend: Backend, study: str) -> Sweep:
    """The sweep with every run on `backend` (its key says which, unless the default's:
    another directory) but the cells the study puts on a backend itself (a cross-
    validation's simulated ones: refused when that is the one given)."""
    if backend.name in {b.name for b in sweep.cell_backends.values()}:
        runs = backend.adjective or f"--backend {backend.name}"
        raise ScenarioError(None, "--backend", f"{study} runs its {runs} cells itself")
    sweep.backend = backend
    sweep.key = sweep.key | backend.key()
    return sweep


def run(
    entry: Registered, args: StudyArgs, backend: Backend | None = None, as_json: bool = False
) -> None:
    """A study's life on the command line, on its arguments' backend (`backend`: another
    one). Exit 0 complete, 130 or 128 + the signal when stopped (the same command
    resumes); 1 when a run failed, for a study that says so (`OwnOutput`)."""
    from itb.report.build import analyse_run
    from itb.sweep.sweep import default_dir, drive

    study = entry.study
    if backend is not None and backend is not args.backend:
        args = args.model_copy(update={"backend": backend})
    for w in args.warnings():
        err.print(w, highlight=False)
    key = args.key() | args.backend.key()
    target = args.out or default_dir(study.kind, key)
    own = study if isinstance(study, OwnOutput) else None
    say(f"{'benchmark' if own else 'study'} directory: {target}")
    build = report_of(entry)
    tick = ticker()
    sweep = on_backend(study.plan(args, target, say), args.backend, " ".join(study.name))
    backends = {b.name: b for b in [sweep.backend, *sweep.cell_backends.values()]}
    for b in backends.values():  # what they need, before anything is written (the cells'
        # congestion controls the arguments do not name: checked when the sweep opens)
        ready(b, args.protocols() if b is sweep.backend else [], say)
    res = drive(
        sweep,
        lambda sw: study.analyse(sw, args),
        lambda sw, results: build(target, sw.index, args, results),
        say,
        tick,
        analyse_run,
    )
    tick("")
    concluded = study.conclude(res, args)  # (also what it keeps, e.g. a calibrated model)
    if as_json:
        for note in (s for s in concluded if isinstance(s, Line) and s.err):
            show(note)  # stderr's lines stay there
        if own is not None:
            print_json(own.document(res, args, concluded))
        else:
            print_json(study_document(study.name, res, concluded))
    else:
        for shown in concluded:
            show(shown)
        if own is None:
            out.print(f"results: {res.out / 'results.json'}")
            out.print(f"report: {res.report}")
    if res.status != "complete":
        err.print("interrupted: run the same command again to resume")
        raise typer.Exit(res.exit_code() if res.signal is not None else 130)
    if own is not None and own.failed(res):
        raise typer.Exit(1)


def study_document(name: tuple[str, ...], res: Any, concluded: list[Table | Line]) -> dict:
    """`itb study … --json`: the study's typed results (results.json's content), where
    they are, and the tables and lines the command prints on stdout without --json."""
    return {
        "study": " ".join(name),
        "out": res.out,
        "status": res.status,
        "signal": res.signal,
        "results": res.results,
        "results_file": res.out / "results.json",
        "report": res.report,
        "tables": [s for s in concluded if isinstance(s, Table)],
        "lines": [s.text for s in concluded if isinstance(s, Line) and not s.err],
    }


def show(shown: Table | Line) -> None:
    if isinstance(shown, Line):
        (err if shown.err else out).print(shown.text, highlight=False)
        return
    t = RichTable(title=shown.title)
    for col in shown.columns:
        t.add_column(col, justify="right" if col in shown.right else "left")
    for row in shown.rows:
        t.add_row(*row)
    out.print(t)


def group(
    groups: dict[tuple[str, ...], typer.Typer], path: tuple[str, ...], help_text: str | None
) -> typer.Typer:
    """The typer group of a command path, made (with the study's group help) if new."""
    if path not in groups:
        parent = group(groups, path[:-1], None)
        groups[path] = typer.Typer(
            cls=ItbGroup, help=help_text, no_args_is_help=True, rich_markup_mode="markdown"
        )
        parent.add_typer(groups[path], name=path[-1])
    return groups[path]


def scan(
    groups: dict[tuple[str, ...], typer.Typer], package: str = "itb.study"
) -> list[Registered]:
    """Every study of `package` registered as a command of its group in `groups` (the
    command path → typer group; groups the studies need are made)."""
    found = studies(package)
    for entry in found:
        study = entry.study
        group(groups, study.name[:-1], study.group_help).command(study.name[-1])(command(entry))
    return found


REGISTERED = scan(GROUPS)
