"""Command-line options made from a learner's parameter declarations (``rulecli.params``).

A parameter's flag, help, default and range are written once, on its field; this module
turns each field into a Typer option (its messages name the flag: ``rulecli.cli.naming``).
"""

from __future__ import annotations

import inspect
import typing
from dataclasses import MISSING, Field
from typing import Annotated, Any

import typer

from rulecli.params import Spec, fields_of, spec_of

SHARED = frozenset({"seed"})  # every learner command takes --seed (it also seeds --cv folds)


def flag(field: Field[Any]) -> str:
    s = spec_of(field)
    assert s is not None
    return "--" + (s.flag or field.name.replace("_", "-"))


def _declarations(field: Field[Any], s: Spec, kind: Any) -> list[str]:
    name = flag(field)
    if kind is bool and s.negative:
        name = f"{name}/--{s.negative}"
    return [name, *([f"-{s.short}"] if s.short else [])]


def _option(field: Field[Any], kind: Any) -> Any:
    s = spec_of(field)
    assert s is not None
    numeric = typing.get_origin(kind) is None and kind in (int, float)
    bare = [a for a in typing.get_args(kind) if a is not type(None)]
    numeric = numeric or (len(bare) == 1 and bare[0] in (int, float))
    extra: dict[str, Any] = {}
    if numeric and s.ge is not None:
        extra["min"] = s.ge
    if numeric and s.le is not None:
        extra["max"] = s.le
    if s.metavar:
        extra["metavar"] = s.metavar
    return typer.Option(*_declarations(field, s, kind), help=s.help, rich_help_panel=s.panel, **extra)


def parameters(params_class: type) -> list[inspect.Parameter]:
    """One keyword-only command parameter per declared field (``seed`` aside: it is shared)."""
    hints = typing.get_type_hints(params_class)
    out = []
    for field in fields_of(params_class):
        if field.name in SHARED:
            continue
        assert field.default is not MISSING, field.name
        kind = hints[field.name]
        out.append(
            inspect.Parameter(
                field.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=field.default,
                annotation=Annotated[kind, _option(field, kind)],
            )
        )
    return out


def flags_of(params_class: type) -> dict[str, str]:
    return {field.name: flag(field) for field in fields_of(params_class)}
