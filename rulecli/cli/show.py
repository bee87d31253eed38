"""show: a saved model as its rules (or, with --json, as its JSON form)."""

from __future__ import annotations

from typing import Annotated

import typer

from rulecli import api

from . import common


def show(
    model_path: Annotated[
        str, typer.Argument(metavar="MODEL", help="Model file: .json, or a text rule file ('-' = stdin).")
    ],
    json_out: Annotated[bool, typer.Option("--json", help="Print the model's JSON form instead.")] = False,
    quiet: common.QuietScoring = False,  # show prints only the model: accepted so every command takes -q
) -> None:
    """Print a saved model: its rules as text (a table or drawn tree at a terminal), or its
    JSON form with --json. A text model read back prints as it was saved.

    Examples:

        rulecli oner sample_data/house.csv -q -o house.json

        rulecli show house.json

        rulecli show house.json --json
    """
    common.emit_model(api.load(model_path), output=None, as_json=json_out, quiet=False)
