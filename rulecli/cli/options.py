"""Command-line options made from parameter declarations (``rulecli.params``).

A parameter's flag, help, default and range are written once, on its field: a learner's
parameters, and the data, read, engine and run options every learner command shares.
This module turns each field into a Typer option and the values the command receives
back into the declaration's keywords (its messages name the flag: ``rulecli.cli.naming``).
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


def _several(kind: Any) -> bool:
    """A field of several values (``tuple[str, ...]``)."""
    return typing.get_origin(kind) is tuple


def _declarations(field: Field[Any], s: Spec, kind: Any) -> list[str]:
    name = flag(field)
    if s.switches:
        assert s.choices is not None and len(s.choices) == 2, field.name
        name = f"--{s.choices[0]}/--{s.choices[1]}"
    elif kind is bool and s.negative:
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
    if s.switches:
        extra["show_default"] = False
    return typer.Option(*_declarations(field, s, kind), help=s.help, rich_help_panel=s.panel, **extra)


def _command_type(field: Field[Any], kind: Any) -> tuple[Any, Any]:
    """The option's type and default on the command line: several values are a repeatable
    list, switches a ``bool | None``."""
    s = spec_of(field)
    assert s is not None
    if _several(kind):
        return list[str] | None, None
    if s.switches:
        return bool | None, None
    return kind, field.default


def parameters(params_class: type, *, skip: frozenset[str] = SHARED) -> list[inspect.Parameter]:
    """One keyword-only command parameter per declared field (but those in ``skip``)."""
    hints = typing.get_type_hints(params_class)
    out = []
    for field in fields_of(params_class):
        if field.name in skip:
            continue
        assert field.default is not MISSING, field.name
        kind, default = _command_type(field, hints[field.name])
        out.append(
            inspect.Parameter(
                field.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=default,
                annotation=Annotated[kind, _option(field, hints[field.name])],
            )
        )
    return out


def option(params_class: type, name: str) -> Any:
    """The annotation of one declared field's option, for a command that takes it alone."""
    (parameter,) = (p for p in parameters(params_class, skip=frozenset()) if p.name == name)
    return parameter.annotation


def split_list(values: list[str] | None) -> tuple[str, ...]:
    """Flatten repeated and comma-separated option values."""
    out: list[str] = []
    for value in values or []:
        out.extend(part.strip() for part in value.split(",") if part.strip())
    return tuple(out)


def gather(params_class: type, values: dict[str, Any], *, skip: frozenset[str] = SHARED) -> dict[str, Any]:
    """The keywords of ``params_class`` taken out of a command's ``values`` (the options
    :func:`parameters` made): several values split, a switch's flag as its choice."""
    hints = typing.get_type_hints(params_class)
    out = {}
    for field in fields_of(params_class):
        if field.name in skip:
            continue
        value = values.pop(field.name)
        s = spec_of(field)
        assert s is not None
        if _several(hints[field.name]):
            value = split_list(value)
        elif s.switches and value is not None:
            assert s.choices is not None
            value = s.choices[0] if value else s.choices[1]
        out[field.name] = value
    return out


def flags_of(params_class: type) -> dict[str, str]:
    return {field.name: flag(field) for field in fields_of(params_class)}
