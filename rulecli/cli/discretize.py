"""discretize: learn cut points for numeric columns, or reapply saved ones."""

from __future__ import annotations

from typing import Annotated

import typer

from rulecli import io
from rulecli.discretize import METHODS, SUPERVISED, label_expr, learn_cuts
from rulecli.errors import InputError, ParamError
from rulecli.model.serde import dumps_cuts, loads_cuts
from rulecli.schema import is_numeric_dtype

from . import common


def discretize(
    data: Annotated[str, typer.Argument(help="Table to discretise ('-' = stdin).")],
    method: Annotated[str, typer.Option("--method", "-m", help=f"One of: {', '.join(METHODS)}.")] = "equal-frequency",
    bins: Annotated[
        int, typer.Option("--bins", "-k", min=1, help="Intervals (equal-width/-frequency); min bucket (min-bucket).")
    ] = 5,
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
    input_format: common.InputFormat = None,
    null_values: common.NullValues = None,
) -> None:
    """Replace numeric columns by interval labels such as `(12.9,27.2]`.

    mdlp (Fayyad & Irani 1993) and min-bucket (Holte 1993) use the target (-y, default:
    the last column); equal-width and equal-frequency do not.

    Example:

        rulecli discretize sample_data/penguins.csv -y species -m mdlp --cuts-out cuts.json -o cut.csv
    """
    if method not in METHODS:
        raise ParamError(f"--method must be one of {', '.join(METHODS)}, got '{method}'")
    df = common.read_frame(data, input_format=input_format, null_values=null_values)
    label = "<stdin>" if data == io.STDIO else data
    if cuts_in is not None:
        cuts = loads_cuts(io.read_text(cuts_in), cuts_in)
        for c in cuts:
            if c.column not in df.columns:
                raise InputError(f"{label}: column '{c.column}' named in {cuts_in} is not in the data")
    else:
        if target is None and method in SUPERVISED:
            target = df.columns[-1]
        if target is not None and target not in df.columns:
            raise InputError(f"{label}: target column '{target}' is not in the data")
        chosen = list(common.split_list(columns)) or [
            c for c in df.columns if c != target and is_numeric_dtype(df.schema[c])
        ]
        for name in chosen:
            if name not in df.columns:
                raise InputError(f"{label}: column '{name}' is not in the data")
            if not is_numeric_dtype(df.schema[name]):
                raise InputError(f"{label}: column '{name}' is not numeric ({df.schema[name]})")
        cuts = learn_cuts(df, chosen, method, bins=bins, target=target)
        if cuts_out is not None:
            io.write_text(cuts_out, dumps_cuts(cuts, {"method": method, "bins": bins, "target": target}))
    result = df.lazy().with_columns([label_expr(c) for c in cuts])
    io.write_table(result, output or io.STDIO, output_format="ndjson" if json_out else None)
