"""export: a model as SQL, dependency-free Python, a Polars expression or PMML."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from rulecli import api, io

from . import common


def export(
    model_path: Annotated[
        str, typer.Argument(metavar="MODEL", help="Model file: .json, or a text rule file ('-' = stdin).")
    ],
    to: Annotated[str, typer.Option("--to", help="sql, python, polars or pmml.")] = "sql",
    dialect: Annotated[
        str, typer.Option("--dialect", help="SQL dialect: duckdb, postgres, spark or sqlite.")
    ] = "duckdb",
    table: Annotated[
        str | None, typer.Option("--table", help="SQL: a whole SELECT *, … AS prediction FROM this table.")
    ] = None,
    name: Annotated[str, typer.Option("--name", help="Python: the function's name.")] = "predict",
    output: Annotated[str | None, typer.Option("--output", "-o", help="Write here; default: stdout.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Wrap the source in a JSON object.")] = False,
    quiet: common.Quiet = False,  # export prints only what it writes: accepted so every command takes -q
) -> None:
    """Write a model as one SQL CASE expression (or a SELECT with --table), a Python
    function with no dependencies, a Polars expression, or a PMML 4.4 document (every
    model kind, forests included) — with rulecli's semantics for missing values and
    unseen categories.

    Examples:

        rulecli oner sample_data/house.csv -y value -q -o house.json

        rulecli export house.json --to sql --table houses

        rulecli export house.json --to pmml -o house.pmml
    """
    if output is not None:
        io.check_writable(output)
    text = api.export(api.load(model_path), to, dialect=dialect, table=table, name=name)
    if json_out:
        text = json.dumps({"to": to, "dialect": dialect if to == "sql" else None, "source": text}, indent=2) + "\n"
    io.write_text(output or io.STDIO, text)
