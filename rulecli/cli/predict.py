"""predict: score a table with a model, streaming from file to file."""

from __future__ import annotations

from typing import Annotated, Any

import polars as pl
import typer

from rulecli import api, io
from rulecli.errors import InputError

from . import common, options


@common.reads_a_table
def predict(
    model_path: Annotated[str, typer.Argument(metavar="MODEL", help="Model file: .json, or a text rule file.")],
    data: Annotated[str, typer.Argument(help="Table to score ('-' = stdin).")],
    output: Annotated[
        str | None,
        typer.Option("--output", "-o", help="Write predictions here (format by extension); default: CSV on stdout."),
    ] = None,
    keep: Annotated[
        list[str] | None,
        typer.Option("--keep", help="Copy these input columns to the output (repeat or comma-separate)."),
    ] = None,
    proba: Annotated[
        bool, typer.Option("--proba", help="Add proba_<class> columns (JSON models with class counts).")
    ] = False,
    keep_all: Annotated[bool, typer.Option("--keep-all", help="Copy every input column to the output.")] = False,
    explain: Annotated[bool, typer.Option("--explain", help="Add the deciding rule's number and text.")] = False,
    output_format: Annotated[
        str | None, typer.Option("--output-format", help="csv, tsv, parquet, ndjson or ipc (default: by extension).")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Write NDJSON (--output-format ndjson).")] = False,
    read: dict[str, Any] | None = None,
    strict: common.Strict = False,
    quiet: common.Quiet = False,
) -> None:
    """Predict with a model; writes `prediction` (plus --keep, --proba, --explain columns).

    Rows whose values no rule matches get the default rule; a rule set without a
    default leaves them empty (unclassified).

    Examples:

        rulecli oner sample_data/house.csv -y value -q -o house.json

        rulecli predict house.json sample_data/house.csv --keep size --explain

        rulecli predict house.json sample_data/house.csv --keep-all --proba -o house.predictions.parquet
    """
    table_format = io.table_output(output or io.STDIO, "ndjson" if json_out else output_format)
    model = common.open_model(model_path, data)
    lf, label = common.scoring_input(model, data, read, truth=None, strict=strict, quiet=quiet)
    plan, label = api.prediction_plan(
        model, lf, label=label, keep=options.split_list(keep), keep_all=keep_all, proba=proba, explain=explain
    )
    try:
        io.write_table(plan, output or io.STDIO, output_format=table_format)
    except (pl.exceptions.PolarsError, OSError) as exc:
        if isinstance(exc, BrokenPipeError):
            raise
        raise InputError(f"{label}: {str(exc).strip().splitlines()[0]}") from exc
