"""report: one self-contained HTML page about a model on a table."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from rulecli import api, io
from rulecli.errors import ParamError

from . import common


@common.reads_a_table
def report(
    model_path: Annotated[str, typer.Argument(metavar="MODEL", help="Model file: .json, or a text rule file.")],
    data: Annotated[str, typer.Argument(help="Labelled table to report on ('-' = stdin).")],
    output: Annotated[
        str, typer.Option("--output", "-o", help="Write the page here (.html); '-' = stdout.")
    ] = io.STDIO,
    target: Annotated[
        str | None, typer.Option("--target", "-y", help="True-label column (default: the model's target).")
    ] = None,
    baseline: Annotated[
        bool,
        typer.Option(
            "--baseline", help="Compare each rule's coverage and accuracy here with its training statistics, tested."
        ),
    ] = False,
    reference: common.Reference = None,
    weights: common.Weights = None,
    read: dict[str, Any] | None = None,
    strict: common.Strict = False,
    quiet: common.Quiet = False,
) -> None:
    """Write one self-contained HTML page (no scripts, no network) about a model on
    labelled data: metrics, per-class precision and recall, the confusion matrix as a heat
    map, each rule's coverage and accuracy as bars, a tree drawn (each node's test, rows
    and class shares) and listed whole as a folding outline, a forest's feature importance
    and partial-dependence curves for every class, with --baseline the rule drift table and
    with --reference each column's drift.

    Examples:

        rulecli tree sample_data/penguins.csv -y species -q -o penguins.tree.json

        rulecli report penguins.tree.json sample_data/penguins.csv -o penguins.html

        rulecli report penguins.tree.json sample_data/penguins.csv --baseline -o penguins.drift.html
    """
    if output != io.STDIO:
        if Path(output).suffix.lower() not in (".html", ".htm"):
            raise ParamError(f"{output}: a report is written as .html")
        io.check_writable(output)
    model = common.open_model(model_path, data)
    lf, label = common.scoring_input(model, data, read, truth=target or model.target, strict=strict, quiet=quiet)
    page = api.report(
        model,
        lf,
        target=target,
        baseline=baseline,
        weights=weights,
        model_label=api.source_label(model_path),
        label=label,
        reference=reference,
    )
    io.write_text(output, page)
