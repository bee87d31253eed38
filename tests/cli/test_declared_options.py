"""The options every learner command shares are declared once, as learners' parameters are:
which columns (``DataSpec``), how a file is read (``ReadOptions``), where rows are counted
(``EngineOptions``), what is written and measured (``RunOptions``). Each field is an option of
every learner command and a keyword of the API, and a value given on the command line reaches
the library unchanged, with no line of forwarding between: adding a field is the whole change.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import pytest

from rulecli import api, io, learners
from rulecli.cli import common
from rulecli.cli.app import _build as build_command
from rulecli.cli.options import flag
from rulecli.dataset import DataSpec
from rulecli.engines import EngineOptions
from rulecli.errors import ParamError
from rulecli.params import fields_of, spec_of
from tests.conftest import SAMPLE, run_cli

PENGUINS = str(SAMPLE / "penguins.csv")
# values a field's type alone does not say are allowed
EXAMPLES = {"delimiter": ";", "encoding": "latin-1", "input_format": "csv", "class_weight": "balanced"}
DECLARED = (DataSpec, io.ReadOptions, EngineOptions, common.RunOptions)


@pytest.mark.parametrize("name", learners.names())
def test_every_declared_field_is_an_option_of_every_learner_command(name: str):
    options = {p.name: p for p in build_command(name).params}
    for declared in DECLARED:
        for field in fields_of(declared):
            option = options[field.name]
            s = spec_of(field)
            assert s is not None and option.help == s.help
            assert flag(field) in option.opts or s.switches, field.name


def test_the_api_takes_every_data_read_and_engine_field_as_a_keyword():
    keywords = api.DATA_KEYS | api.READ_KEYS | api.ENGINE_KEYS
    assert keywords == {f.name for declared in DECLARED[:3] for f in fields_of(declared)}
    with pytest.raises(ParamError, match="no data option 'targte'"):
        api.prepare(PENGUINS, targte="species")


def _given(field: dataclasses.Field[Any], kind: Any) -> tuple[list[str], Any]:
    """Command-line words giving ``field`` a value its declaration allows, and that value."""
    s = spec_of(field)
    assert s is not None
    if field.name in EXAMPLES:
        return [flag(field), EXAMPLES[field.name]], EXAMPLES[field.name]
    if s.switches:
        assert s.choices is not None
        return [f"--{s.choices[1]}"], s.choices[1]
    if typing.get_origin(kind) is tuple:
        return [flag(field), "bill_length_mm,island", flag(field), "sex"], ("bill_length_mm", "island", "sex")
    if kind is bool:
        return [flag(field)], True
    if s.choices is not None:
        return [flag(field), s.choices[-1]], s.choices[-1]
    if kind in (int, int | None):
        value = int(s.ge if s.ge is not None else 3)
        return [flag(field), str(value)], value
    return [flag(field), "species"], "species"


@pytest.mark.parametrize("declared", [DataSpec, io.ReadOptions], ids=lambda d: d.__name__)
def test_a_value_on_the_command_line_reaches_the_library_as_declared(declared: type, monkeypatch):
    """Each field alone: the command builds the declaration the library receives from its
    own options (a field added to the declaration needs nothing else to arrive)."""
    received: list[Any] = []

    class Received(Exception):
        pass

    def catch(data: object, spec: DataSpec, **keywords: object) -> None:
        received.append(spec)
        raise Received

    def read(path: object, *, text_columns: object = (), **keywords: object) -> None:
        received.append(io.ReadOptions(**keywords))
        raise Received

    monkeypatch.setattr(api.data, "prepare_dataset", catch)
    monkeypatch.setattr(api.data, "read_table", read if declared is io.ReadOptions else api.read_table)
    hints = typing.get_type_hints(declared)
    for field in fields_of(declared):
        words, value = _given(field, hints[field.name])
        received.clear()
        with pytest.raises(Received):  # --debug: the exception itself comes out
            run_cli("--debug", "oner", PENGUINS, *(["-y", "species"] if field.name != "target" else []), *words)
        (got,) = received
        targeted = declared is DataSpec and field.name != "target"
        assert got == dataclasses.replace(
            declared(**({"target": "species"} if targeted else {})), **{field.name: value}
        )


@pytest.mark.parametrize("declared", DECLARED[:3], ids=lambda d: d.__name__)
def test_a_value_the_declaration_forbids_names_the_parameter_and_on_the_command_line_the_flag(declared: type):
    checked = 0
    for field in fields_of(declared):
        s = spec_of(field)
        assert s is not None
        bad = "no-such-choice" if s.choices is not None and not s.switches else None
        bad = s.ge - 1 if s.ge is not None else bad
        if bad is None:
            continue
        with pytest.raises(ParamError) as caught:
            declared(**{field.name: bad})
        assert str(caught.value).startswith(f"`{field.name}`")
        words = [flag(field), str(bad)]
        result = run_cli("oner", PENGUINS, "-y", "species", *words)
        assert result.code == 2 and flag(field) in result.stderr, result.stderr
        checked += 1
    assert checked


def test_several_values_are_kept_as_a_tuple_and_a_lone_string_is_one_value():
    assert DataSpec(features="bill_length_mm").features == ("bill_length_mm",)
    assert DataSpec(exclude=["a", "b"]).exclude == ("a", "b")
    assert io.ReadOptions(null_values="NA").null_values == ("NA",)
