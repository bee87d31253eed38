"""Learner commands: read data, fit, optionally score on --test / --cv, emit the model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.table import Table

from rulecli.dataset import Dataset
from rulecli.learners.oner import OneRParams, fit_oner
from rulecli.model.compile import read_dtypes_for
from rulecli.model.core import Model
from rulecli.model.text import render_conditions
from rulecli.validation import SUMMARY_KEYS, cross_validate, evaluate_model, truth_expr

from . import common, console


def run_learner(
    ds: Dataset,
    fit: Callable[[Dataset], Model],
    *,
    seed: int,
    test: str | None,
    cv: int | None,
    metrics_out: str | None,
    input_format: str | None,
    null_values: list[str] | None,
    quiet: bool,
) -> Model:
    """The shared life of a learner command; the learner itself is ``fit``."""
    report: dict[str, Any] = {}
    if cv is not None:
        result = cross_validate(ds, fit, cv, seed)
        report["cv"] = result.as_dict()
        if not quiet:
            console.err.print(_cv_table(result.as_dict(), cv))
    model = fit(ds)
    if test is not None:
        lf = common.data_columns(test, input_format, null_values, read_dtypes_for(model))
        metrics = evaluate_model(model, lf, truth_expr(model))
        report["test"] = metrics
        if not quiet:
            console.err.print(console.metrics_table(f"test: {test}", metrics))
    if metrics_out is not None:
        common.write_json(metrics_out, report)
    return model


def _cv_table(cv: dict[str, Any], k: int) -> Table:
    table = Table(title=f"{k}-fold cross-validation (stratified)", title_justify="left")
    table.add_column("fold", justify="right")
    for key in (*SUMMARY_KEYS, "rules"):
        table.add_column(key, justify="right")
    for fold in cv["folds"]:
        table.add_row(str(fold["fold"]), *(f"{fold[k]:.4f}" for k in SUMMARY_KEYS), str(fold["rules"]))
    summary = cv["summary"]
    table.add_row("mean ± sd", *(f"{summary[k]['mean']:.4f} ± {summary[k]['sd']:.4f}" for k in SUMMARY_KEYS), "")
    return table


def oner(
    data: Annotated[str, typer.Argument(help="Training table (CSV, TSV, Parquet, NDJSON, IPC; '-' = stdin).")],
    target: common.Target = None,
    features: common.Features = None,
    exclude: common.Exclude = None,
    categorical: common.Categorical = None,
    numeric: common.Numeric = None,
    target_bins: common.TargetBins = None,
    null_values: common.NullValues = None,
    input_format: common.InputFormat = None,
    min_bucket: Annotated[
        int, typer.Option("--min-bucket", min=1, help="Holte/Weka minimum bucket size for numeric features.")
    ] = 6,
    discretize: Annotated[
        str,
        typer.Option(
            "--discretize", help="Numeric features: min-bucket (Holte, as Weka), equal-width, equal-frequency or mdlp."
        ),
    ] = "min-bucket",
    bins: Annotated[int, typer.Option("--bins", min=1, help="Intervals for equal-width / equal-frequency.")] = 5,
    ties: Annotated[
        str, typer.Option("--ties", help="Equal errors: 'first' feature or smallest 'chi2' p-value.")
    ] = "first",
    validation_fraction: Annotated[
        float,
        typer.Option(
            "--validation-fraction", min=0.0, max=0.99, help="Choose the feature by errors on this held-out share."
        ),
    ] = 0.0,
    show_table: Annotated[
        bool, typer.Option("--show-table", help="Show the chosen feature's cross table (stderr).")
    ] = False,
    seed: common.Seed = 0,
    output: common.OutputPath = None,
    json_out: common.JsonOut = False,
    quiet: common.Quiet = False,
    test: common.TestPath = None,
    cv: common.CvFolds = None,
    metrics_out: common.MetricsOut = None,
) -> None:
    """Learn OneR rules: one rule per value of the single best feature (Holte 1993).

    Example:

        rulecli oner sample_data/house.csv -y value -o house.json
    """
    params = OneRParams(
        min_bucket=min_bucket,
        discretize=discretize,
        bins=bins,
        ties=ties,
        validation_fraction=validation_fraction,
        seed=seed,
    )
    ds = common.load_dataset(
        data,
        input_format=input_format,
        null_values=null_values,
        target=target,
        features=features,
        exclude=exclude,
        categorical=categorical,
        numeric=numeric,
        target_bins=target_bins,
        quiet=quiet,
    )
    model = run_learner(
        ds,
        lambda d: fit_oner(d, params),
        seed=seed,
        test=test,
        cv=cv,
        metrics_out=metrics_out,
        input_format=input_format,
        null_values=null_values,
        quiet=quiet,
    )
    training = model.info.training
    chosen = training["feature"]
    errors = training["errors"]
    assert isinstance(errors, dict)
    console.info(f"oner: chose '{chosen}' with {errors[chosen]}/{training['judged_rows']} errors", quiet=quiet)
    if show_table and not quiet:
        console.err.print(_cross_table(model))
    common.emit_model(model, output=output, as_json=json_out, quiet=quiet)


def _cross_table(model: Model) -> Table:
    """The chosen feature's value x class counts with class shares, from the rules' statistics."""
    table = Table(title=f"cross table: {model.info.training['feature']} x {model.target}", title_justify="left")
    table.add_column("level")
    for cls in model.classes:
        table.add_column(f"# {cls}", justify="right")
    for cls in model.classes:
        table.add_column(f"P({cls})", justify="right")
    for rule in model.rules:
        counts = rule.stats.class_counts if rule.stats and rule.stats.class_counts else ()
        total = sum(counts)
        shares = [f"{c / total:.2f}" if total else "-" for c in counts]
        table.add_row(render_conditions(rule.conditions), *(str(c) for c in counts), *shares)
    return table
