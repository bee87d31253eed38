"""show: a saved model as its rules (or, with --json, as its JSON form)."""

from __future__ import annotations

from typing import Annotated

import typer

from rulecli import api, io
from rulecli.errors import ParamError

from . import common


def show(
    model_path: Annotated[
        str, typer.Argument(metavar="MODEL", help="Model file: .json, or a text rule file ('-' = stdin).")
    ],
    json_out: Annotated[bool, typer.Option("--json", help="Print the model's JSON form instead.")] = False,
    logic: Annotated[
        bool,
        typer.Option(
            "--logic",
            help="Print the rules without their statistics: as a git textconv driver, a diff then shows "
            "only rules whose logic changed.",
        ),
    ] = False,
    quiet: common.Quiet = False,  # show prints only the model: accepted so every command takes -q
) -> None:
    """Print a saved model: its rules as text (a table or drawn tree at a terminal), or its
    JSON form with --json. A text model read back prints as it was saved.

    Examples:

        rulecli oner sample_data/house.csv -q -o house.json

        rulecli show house.json

        rulecli show house.json --logic
    """
    model = api.load(model_path)
    if logic:
        if json_out:
            raise ParamError("--logic prints rules as text; --json prints the whole model: choose one")
        io.write_text(io.STDIO, api.logic_text(model))
        return
    common.emit_model(model, output=None, as_json=json_out, quiet=False)
