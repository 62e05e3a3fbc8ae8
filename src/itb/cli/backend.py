"""`--backend` and every backend's own options (`--inventory`, `--jobs`, `--dask`, …) on
each command that runs anything, made from the registry (itb.backends.registry): a
command declares a parameter `backend`, and `takes_backend` replaces it with the options
and gives the command the chosen `Backend`."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, Literal

import typer

from itb.backends import registry
from itb.backends.registry import Backend

# a command's parameter `backend` (replaced by `takes_backend`)
BACKEND: Any = None


def parameters() -> list[inspect.Parameter]:
    """`--backend` (its choices and help from the registry), then each kind's options."""
    names = tuple(registry.kinds())
    out = [
        inspect.Parameter(
            "backend",
            inspect.Parameter.KEYWORD_ONLY,
            annotation=Literal[names] | None,
            default=typer.Option(
                None,
                "--backend",
                help=f"Where the runs run: {registry.help_text()}. [default: local]",
                show_default=False,
            ),
        )
    ]
    for _kind, o in registry.options():
        extra: dict[str, Any] = {
            k: v for k, v in (("metavar", o.metavar), ("min", o.min)) if v is not None
        }
        out.append(
            inspect.Parameter(
                o.name,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=o.annotation,
                default=typer.Option(o.default, o.flag, help=o.help, **extra),
            )
        )
    return out


def chosen(given: dict[str, Any]) -> Backend:
    """The backend of a command's arguments, its options taken out of `given`."""
    name = given.pop("backend", None)
    values = {o.name: given.pop(o.name) for _k, o in registry.options() if o.name in given}
    return registry.choose(name, values)


def takes_backend(command: Callable[..., Any]) -> Callable[..., Any]:
    """The command with `--backend` and the backends' options instead of its parameter
    `backend`, which it receives as the chosen `Backend`."""
    sig = inspect.signature(command)
    own = [p for p in sig.parameters.values() if p.name != "backend"]
    params = [
        *own,
        *(p for p in parameters() if p.name not in sig.parameters or p.name == "backend"),
    ]
    params.sort(key=lambda p: p.kind)  # (positional arguments first, as typer reads them)

    @functools.wraps(command)
    def with_backend(**given: Any) -> Any:
        backend = chosen(given)
        return command(backend=backend, **given)

    with_backend.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    with_backend.__annotations__ = {p.name: p.annotation for p in params} | {"return": None}
    return with_backend


def ready(backend: Backend, ccs: Sequence[str], say: Callable[[str], None]) -> None:
    """What the backend needs before anything is written (the simulator built; a Dask
    scheduler that answers), refused now (exit 4; 3 for a scheduler that does not)."""
    from itb import cc

    backend.ready(ccs, cc.support(), say)
    side = backend.side_by_side()
    if side is not None and side.dask:
        from itb.sweep.parallel import check_dask

        check_dask(side.dask)
