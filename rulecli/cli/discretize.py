"""discretize: learn cut points for numeric columns, or reapply saved ones."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from rulecli import api, io
from rulecli.model.serde import dumps_cuts, loads_cuts

from . import common, options


@common.reads_a_table
def discretize(
    data: Annotated[str, typer.Argument(help="Table to discretise ('-' = stdin).")],
    method: Annotated[
        str, typer.Option("--discretize", help="Numeric features: equal-frequency, equal-width, mdlp or min-bucket.")
    ] = "equal-frequency",
    # the option's name until 0.1: kept, unlisted, for scripts that use it
    old_method: Annotated[str | None, typer.Option("--method", "-m", hidden=True)] = None,
    bins: Annotated[int, typer.Option("--bins", "-k", min=1, help="Intervals for equal-width / equal-frequency.")] = 5,
    min_bucket: common.MinBucket = None,
    target: common.Target = None,
    columns: Annotated[
        list[str] | None,
        typer.Option("--columns", help="Numeric columns to cut (default: every numeric column but the target)."),
    ] = None,
    cuts_in: Annotated[
        str | None, typer.Option("--cuts", help="Apply the cuts saved in this file instead of learning new ones.")
    ] = None,
    cuts_out: Annotated[str | None, typer.Option("--cuts-out", help="Save the learned cuts (JSON) for --cuts.")] = None,
    output: Annotated[
        str | None, typer.Option("--output", "-o", help="Write the table here (default: CSV on stdout).")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Write NDJSON (one JSON object per row).")] = False,
    quiet: common.Quiet = False,  # discretize prints only its table: accepted so every command takes -q
    read: dict[str, Any] | None = None,
) -> None:
    """Replace numeric columns by interval labels such as `(12.9,27.2]`.

    mdlp (Fayyad & Irani 1993) and min-bucket (Holte 1993) use the target (-y, default:
    the last column); equal-width and equal-frequency do not.

    Examples:

        rulecli discretize sample_data/penguins.csv -y species --discretize mdlp --cuts-out cuts.json -o cut.csv

        rulecli discretize sample_data/penguins.csv --cuts cuts.json

        rulecli discretize sample_data/labor.csv --discretize equal-width --bins 3 --columns duration
    """
    table_format = io.table_output(output or io.STDIO, "ndjson" if json_out else None)
    if cuts_out is not None:
        io.check_writable(cuts_out)
    df = api.read_table(data, **(read or {}))
    saved = None if cuts_in is None else loads_cuts(io.read_text(cuts_in), cuts_in)
    method = old_method or method
    result = api.discretize(
        df,
        method=method,
        bins=bins,
        min_bucket=min_bucket,
        target=target,
        columns=options.split_list(columns),
        cuts=saved,
        source=api.source_label(data),
        cuts_source=str(cuts_in),
    )
    io.write_table(result.frame, output or io.STDIO, output_format=table_format)
    if cuts_out is not None and saved is None:  # cuts applied from a file are not saved again
        io.write_text(
            cuts_out, dumps_cuts(result.cuts, {"method": method, "bins": result.bins, "target": result.target})
        )
