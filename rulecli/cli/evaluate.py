"""evaluate: metrics of a model on labelled data, with quality gates for CI."""

from __future__ import annotations

import json
from typing import Annotated, Any

import polars as pl
import typer
from rich.table import Table

from rulecli import io
from rulecli.errors import InputError, ParamError
from rulecli.metrics import Gate, gate_failures, leaf_reports, rule_reports, violations
from rulecli.model.core import DecisionList, RuleSet
from rulecli.model.tree import Tree
from rulecli.validation import evaluate_model, is_regression, truth_expr

from . import common, console


def evaluate(
    model_path: Annotated[str, typer.Argument(metavar="MODEL", help="Model file: .json, or a text rule file.")],
    data: Annotated[str, typer.Argument(help="Labelled table ('-' = stdin).")],
    target: Annotated[
        str | None, typer.Option("--target", "-y", help="True-label column (default: the model's target).")
    ] = None,
    min_accuracy: Annotated[
        float | None, typer.Option("--min-accuracy", min=0, max=1, help="Exit 1 if accuracy is lower.")
    ] = None,
    min_f1: Annotated[float | None, typer.Option("--min-f1", min=0, max=1, help="Exit 1 if macro F1 is lower.")] = None,
    min_coverage: Annotated[
        float | None,
        typer.Option("--min-coverage", min=0, max=1, help="Exit 1 if fewer rows are decided by a non-default rule."),
    ] = None,
    max_rmse: Annotated[
        float | None, typer.Option("--max-rmse", min=0, help="Numeric target: exit 1 if the RMSE is higher.")
    ] = None,
    max_mae: Annotated[
        float | None, typer.Option("--max-mae", min=0, help="Numeric target: exit 1 if the MAE is higher.")
    ] = None,
    min_r2: Annotated[float | None, typer.Option("--min-r2", help="Numeric target: exit 1 if R² is lower.")] = None,
    per_rule: Annotated[
        bool, typer.Option("--per-rule/--no-per-rule", help="Show per-rule statistics on this data.")
    ] = True,
    json_out: Annotated[bool, typer.Option("--json", help="Print all metrics as JSON on stdout.")] = False,
    output: Annotated[
        str | None, typer.Option("--output", "-o", help="Also write the JSON metrics to this file.")
    ] = None,
    violations_out: Annotated[
        str | None,
        typer.Option(
            "--violations",
            help="Write the rows a rule covers but gets wrong (with the rules they contradict) to this file.",
        ),
    ] = None,
    input_format: common.InputFormat = None,
    null_values: common.NullValues = None,
) -> None:
    """Score a model on labelled data: accuracy, balanced accuracy, per-class P/R/F1,
    macro F1, Cohen's kappa, confusion matrix, coverage and per-rule statistics
    (for a numeric target: MAE, RMSE, R²).

    Exit status 1 when a --min-* gate fails.

    Example:

        rulecli evaluate house.json sample_data/house.csv --min-accuracy 0.6
    """
    model, lf, label = common.open_for_scoring(model_path, data, input_format, null_values)
    columns = lf.collect_schema()
    target_name = target or model.target
    if target_name not in columns:
        raise InputError(f"{label}: target column '{target_name}' is not in the data (pass -y COLUMN)")
    truth = truth_expr(model, target)
    regression = is_regression(model)
    classification_gates = {"--min-accuracy": min_accuracy, "--min-f1": min_f1, "--min-coverage": min_coverage}
    regression_gates = {"--max-rmse": max_rmse, "--max-mae": max_mae, "--min-r2": min_r2}
    wrong = [k for k, v in (classification_gates if regression else regression_gates).items() if v is not None]
    if wrong:
        kind = "a number (regression)" if regression else "classes"
        raise ParamError(f"{wrong[0]} does not apply: this model predicts {kind}")
    with_rules = per_rule and (
        isinstance(model, DecisionList | RuleSet) or (isinstance(model, Tree) and not regression)
    )
    try:
        metrics = evaluate_model(model, lf, truth)
        if not with_rules:
            rules = []
        elif isinstance(model, Tree):
            rules = leaf_reports(model, lf, truth)
        else:
            rules = rule_reports(model, lf, truth)
    except pl.exceptions.PolarsError as exc:
        raise InputError(f"{label}: {str(exc).strip().splitlines()[0]}") from exc
    n = metrics["rows"]
    payload = {**metrics, "rules": [r.as_dict(n) for r in rules]} if with_rules else metrics
    gates = [
        Gate("accuracy", min_accuracy, "--min-accuracy"),
        Gate("macro_f1", min_f1, "--min-f1"),
        Gate("coverage", min_coverage, "--min-coverage"),
        Gate("rmse", max_rmse, "--max-rmse", upper=True),
        Gate("mae", max_mae, "--max-mae", upper=True),
        Gate("r2", min_r2, "--min-r2"),
    ]
    if violations_out is not None:
        try:
            io.write_table(violations(model, lf, truth), violations_out)
        except pl.exceptions.PolarsError as exc:
            raise InputError(f"{label}: {str(exc).strip().splitlines()[0]}") from exc
    failures = gate_failures(metrics, gates)
    payload["gates"] = {"passed": not failures, "failures": failures}
    if output is not None:
        common.write_json(output, payload)
    if json_out:
        io.write_text(io.STDIO, json.dumps(payload, indent=2, sort_keys=True) + "\n")
    else:
        _show(payload, label)
    for failure in failures:
        console.err.print(failure, markup=False)
    if failures:
        raise typer.Exit(1)


def _show(payload: dict[str, Any], label: str) -> None:
    out = console.out
    out.print(console.metrics_table(f"{label}", payload))
    if "rmse" in payload:
        return
    per_class = Table(title="per class", title_justify="left")
    for name in ("class", "precision", "recall", "f1", "support"):
        per_class.add_column(name, justify="left" if name == "class" else "right")
    for cls, row in payload["per_class"].items():
        per_class.add_row(
            cls, f"{row['precision']:.4f}", f"{row['recall']:.4f}", f"{row['f1']:.4f}", str(row["support"])
        )
    out.print(per_class)
    confusion = payload["confusion"]
    matrix = Table(title="confusion (rows: truth, columns: predicted)", title_justify="left")
    matrix.add_column("")
    for cls in confusion["labels"]:
        matrix.add_column(cls, justify="right")
    if any(confusion["unclassified"]):
        matrix.add_column("unclassified", justify="right")
    for cls, row, unclassified in zip(confusion["labels"], confusion["matrix"], confusion["unclassified"], strict=True):
        extra = [str(unclassified)] if any(confusion["unclassified"]) else []
        matrix.add_row(cls, *(str(v) for v in row), *extra)
    out.print(matrix)
    if payload.get("rules"):
        rules = Table(
            title="per rule (coverage n_a/n, class support n_ab/n_b, accuracy n_ab/n_a)", title_justify="left"
        )
        for name in ("rule", "IF", "THEN", "covered", "correct", "coverage", "class support", "accuracy"):
            rules.add_column(name, justify="left" if name in ("IF", "THEN") else "right")
        for r in payload["rules"]:
            rules.add_row(
                r["rule"],
                r["conditions"],
                r["prediction"],
                str(r["covered"]),
                str(r["correct"]),
                f"{r['coverage']:.3f}",
                f"{r['class_support']:.3f}",
                f"{r['accuracy']:.3f}",
            )
        out.print(rules)
