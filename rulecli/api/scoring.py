"""The API's scoring: predictions, metrics, gates and drift on a table, and the HTML report."""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from rulecli import io
from rulecli.api.data import Data, as_data, read_table, source_label
from rulecli.dataset import read_weights
from rulecli.drift import drift_warnings, feature_drift, psi_failures
from rulecli.errors import InputError, ParamError
from rulecli.held_out import evaluate_model, truth_expr
from rulecli.html_report import Curve
from rulecli.html_report import render as render_report
from rulecli.metrics import (
    GATE_ON,
    Gate,
    cost_matrix,
    drift_failures,
    expected_cost,
    gate_failures,
    leaf_reports,
    number_rule_drift,
    rule_drift,
    rule_reports,
    violations,
)
from rulecli.model.compile import (
    PREDICTION,
    Predictor,
    check_data,
    prediction_frame,
    read_dtypes_for,
)
from rulecli.model.core import Committee, DecisionList, RuleRegression, RuleSet
from rulecli.model.tree import Forest, Tree, predicts_number
from rulecli.schema import is_numeric_dtype, plain_column


def scan_for(
    model: Predictor, data: str | Path | pl.DataFrame | pl.LazyFrame, *, label: str | None = None, **read: Any
) -> tuple[pl.LazyFrame, str]:
    """The table ``model`` will score, read the way the model compares its columns, checked
    (``read``: the keywords of :class:`~rulecli.io.ReadOptions`)."""
    data = as_data(data)
    options = io.ReadOptions(**read)
    if isinstance(data, pl.DataFrame | pl.LazyFrame):
        lf, label = data.lazy(), label or "<data>"
    else:
        lf = io.scan_table(str(data), options, schema_overrides=read_dtypes_for(model))
        label = source_label(data)
    check_data(model, lf.collect_schema(), label)
    return lf, label


def prediction_plan(
    model: Predictor,
    data: str | Path | pl.DataFrame | pl.LazyFrame,
    *,
    keep: Sequence[str] = (),
    keep_all: bool = False,
    proba: bool = False,
    explain: bool = False,
    **read: Any,
) -> tuple[pl.LazyFrame, str]:
    """The lazy prediction table (streams when sunk to a file) and the data's label;
    ``keep`` copies those input columns in front of it, ``keep_all`` every input column."""
    lf, label = scan_for(model, data, **read)
    columns = lf.collect_schema()
    for name in keep:
        if name not in columns:
            close = difflib.get_close_matches(name, list(columns), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise InputError(f"{label}: `keep` column '{name}' is not in the data{hint}")
    if keep_all:
        keep = list(columns)
    written = {
        "prediction",
        *((f"proba_{c}" for c in model.classes) if proba else ()),
        *(("rule", "rule_text") if explain else ()),
    }
    clash = [name for name in keep if name in written]
    if clash:
        raise InputError(f"{label}: the data already has a column '{clash[0]}' that predict writes; choose with `keep`")
    return prediction_frame(model, lf, keep=tuple(keep), proba=proba, explain=explain), label


def drift(
    model: Predictor, data: str | Path | pl.DataFrame | pl.LazyFrame, *, truth: str | None = None, **read: Any
) -> list[str]:
    """What differs in ``data`` from the data ``model`` was trained on (see :mod:`rulecli.drift`),
    one line each; ``truth``: the column holding the true classes, if any."""
    lf, label = scan_for(model, data, **read)
    if truth is not None and truth not in lf.collect_schema():
        truth = None
    return drift_warnings(model, lf, label, truth=truth)


def predict(model: Predictor, data: str | Path | pl.DataFrame | pl.LazyFrame, **options: Any) -> pl.DataFrame:
    """Predictions (``prediction``, plus ``keep`` columns, ``proba``/``explain`` columns) as a frame."""
    plan, label = prediction_plan(model, data, **options)
    return io.collect(plan, label)


def _polars_failure(label: str, exc: Exception) -> InputError:
    return InputError(f"{label}: {str(exc).strip().splitlines()[0]}")


def evaluate(
    model: Predictor,
    data: str | Path | pl.DataFrame | pl.LazyFrame,
    *,
    target: str | None = None,
    per_rule: bool = True,
    gates: Sequence[Gate] = (),
    violations_out: str | None = None,
    baseline: bool = False,
    max_rule_drift: float | None = None,
    min_rule_coverage: float | None = None,
    max_coverage_ratio: float | None = None,
    gate_on: str = "point",
    reference: str | Path | pl.DataFrame | pl.LazyFrame | None = None,
    max_psi: float | None = None,
    weights: str | None = None,
    costs: Data | None = None,
    max_cost: float | None = None,
    **read: Any,
) -> dict[str, Any]:
    """Metrics of ``model`` on labelled data, each row counted by the column ``weights`` if
    given (once otherwise); with ``per_rule`` each rule's statistics; with
    ``gates`` a ``gates`` entry (``passed``, ``failures``); with ``violations_out`` the rows
    a rule covers but gets wrong written to that file. With ``baseline`` (implied by the two
    rule drift gates) each rule's coverage and accuracy here against its training
    statistics, tested (:func:`rulecli.metrics.rule_drift`). With ``costs`` (a table: the true
    class in its first column, a column per predicted class) the mean cost per row
    (``expected_cost``), held against ``max_cost``."""
    lf, label = scan_for(model, data, **read)
    target_name = target or model.target
    if target_name not in lf.collect_schema():
        raise InputError(f"{label}: target column '{target_name}' is not in the data (name it with `target`)")
    truth = truth_expr(model, target)
    regression = predicts_number(model)
    has_rules = isinstance(model, DecisionList | RuleSet) or (isinstance(model, Tree) and not regression)
    drift_gates = (max_rule_drift, min_rule_coverage, max_coverage_ratio)
    baseline = baseline or any(bound is not None for bound in drift_gates)
    without = baseline and not (has_rules or isinstance(model, RuleRegression | Committee))  # formulas: mean, error
    _check_evaluation(model, gates, gate_on, drift_gates, without, max_psi, reference)
    _check_costs(costs, max_cost, regression)
    matrix = None if costs is None else read_costs(costs, model.classes)  # a bad table is refused before any pass
    gates = [*gates, Gate("expected_cost", max_cost, "`max_cost`", upper=True)] if max_cost is not None else gates
    with_rules = (per_rule or baseline) and has_rules
    weight = None if weights is None else weight_expr(lf, weights, label)
    metrics, rules = _measured(model, lf, truth, weight, with_rules, violations_out, label, target_name)
    if matrix is not None:
        metrics["expected_cost"] = expected_cost(metrics["confusion"], matrix)
    payload = (
        {**metrics, "rules": [r.as_dict(metrics["rows"]) for r in rules]} if with_rules and per_rule else dict(metrics)
    )
    failures = gate_failures(metrics, list(gates), gate_on) if gates else []
    if baseline:
        payload["baseline"] = _baseline(model, lf, truth, weight, rules, metrics["rows"])
        failures += drift_failures(payload["baseline"], *drift_gates)
    if reference is not None:
        payload["feature_drift"] = feature_drift(model, scan_for(model, reference, **read)[0], lf)
        failures += psi_failures(payload["feature_drift"], max_psi) if max_psi is not None else []
    if gates or max_psi is not None or any(bound is not None for bound in drift_gates):  # max_cost is a gate
        payload["gates"] = {"passed": not failures, "failures": failures}
    return payload


def _baseline(
    model: Predictor, lf: pl.LazyFrame, truth: pl.Expr, weight: pl.Expr | None, rules: list[Any], rows: float
) -> dict[str, Any]:
    """Each rule against its training statistics: its accuracy, or its mean and error."""
    if isinstance(model, RuleRegression | Committee):
        return number_rule_drift(model, lf, truth, weight)
    return rule_drift(model, rules, rows)


def _measured(
    model: Predictor,
    lf: pl.LazyFrame,
    truth: pl.Expr,
    weight: pl.Expr | None,
    with_rules: bool,
    violations_out: str | None,
    label: str,
    target_name: str,
) -> tuple[dict[str, Any], list[Any]]:
    """The model's metrics on ``lf``, its rules' (or leaves') reports if asked for, and the
    rows it gets wrong written to ``violations_out``."""
    try:
        metrics = evaluate_model(model, lf, truth, weight)
        if metrics["rows"] == 0:
            # metrics of nothing (accuracy 0, RMSE 0) would fail or pass a gate by accident
            raise InputError(f"{label}: no rows with a value of '{target_name}' to evaluate on")
        rules = (
            []
            if not with_rules
            else leaf_reports(model, lf, truth, weight)
            if isinstance(model, Tree)
            else rule_reports(model, lf, truth, weight)
        )  # type: ignore[arg-type]
        if violations_out is not None:
            io.write_table(violations(model, lf, truth), violations_out)
    except pl.exceptions.PolarsError as exc:
        raise _polars_failure(label, exc) from exc
    return metrics, rules


def _check_costs(costs: object, max_cost: float | None, regression: bool) -> None:
    if max_cost is not None and costs is None:
        raise ParamError("`max_cost` holds the mean cost per row against a bound: give the costs with `costs`")
    if costs is not None and regression:
        raise ParamError("`costs` weighs wrong classes; this model predicts numbers")


def _check_evaluation(
    model: Predictor,
    gates: Sequence[Gate],
    gate_on: str,
    drift_gates: tuple[float | None, float | None, float | None],
    baseline_without_rules: bool,
    max_psi: float | None,
    reference: object,
) -> None:
    """Refuse gates and bounds that cannot be held, before any pass over the data."""
    if gate_on not in GATE_ON:
        raise ParamError(f"`gate_on` must be one of {', '.join(GATE_ON)}, got '{gate_on}'")
    _check_gates(gates, predicts_number(model))
    max_rule_drift, min_rule_coverage, max_coverage_ratio = drift_gates
    for option, bound in (("`max_rule_drift`", max_rule_drift), ("`min_rule_coverage`", min_rule_coverage)):
        if bound is not None and not (math.isfinite(bound) and bound >= 0):
            raise ParamError(f"{option} must be a number of at least 0, got {bound}")
    if max_coverage_ratio is not None and not (math.isfinite(max_coverage_ratio) and max_coverage_ratio > 1):
        raise ParamError(f"`max_coverage_ratio` must be a number above 1, got {max_coverage_ratio}")
    if max_psi is not None and not (math.isfinite(max_psi) and max_psi > 0):
        raise ParamError(f"`max_psi` must be a number above 0, got {max_psi}")
    if max_psi is not None and reference is None:
        raise ParamError("`max_psi` holds the columns against a table: give it with `reference` (the training table)")
    if baseline_without_rules:
        kind = "a forest" if isinstance(model, Forest) else "a model that predicts a number"
        raise ParamError(f"`baseline` compares rules with their training statistics; {kind} has no such rules")


def read_costs(costs: Data, classes: Sequence[str]) -> dict[str, dict[str, float]]:
    """The cost table ``costs`` (a file or a frame) as true class -> predicted class -> cost."""
    if isinstance(costs, str | Path):
        table, label = read_table(costs), source_label(costs)
    else:
        table, label = as_data(costs), "the cost table"
        table = table.collect() if isinstance(table, pl.LazyFrame) else table
    return cost_matrix(table, classes, label)


def read_for_both(
    old: Predictor, new: Predictor, data: str | Path | pl.DataFrame, read: dict[str, Any]
) -> list[tuple[pl.DataFrame, str]]:
    """The table read the way each model compares its columns (stdin is read only once)."""
    tables: list[tuple[pl.DataFrame, str]] = []
    for model in (old, new):
        source = tables[0][0] if tables and isinstance(data, str) and data == io.STDIO else data
        lf, label = scan_for(model, source, **({**read, "label": tables[0][1]} if tables else read))
        try:
            tables.append((lf.collect(), label))
        except pl.exceptions.PolarsError as exc:
            raise _polars_failure(label, exc) from exc
    return tables


def weight_expr(lf: pl.LazyFrame, name: str, label: str) -> pl.Expr:
    """The weight column as a number per row, checked as training checks it."""
    if name not in lf.collect_schema():
        raise InputError(f"{label}: weight column '{name}' given with `weights` is not in the data")
    try:
        column = lf.select(name).collect()
    except pl.exceptions.PolarsError as exc:
        raise _polars_failure(label, exc) from exc
    read_weights(column, name, label, "evaluate")
    if is_numeric_dtype(column.schema[name]):
        return pl.col(name).cast(pl.Float64)
    return pl.col(name).cast(pl.String).str.strip_chars().cast(pl.Float64)


REGRESSION_GATES = ("rmse", "mae", "r2")


def _check_gates(gates: Sequence[Gate], regression: bool) -> None:
    for gate in gates:
        if gate.threshold is not None and not math.isfinite(gate.threshold):
            raise ParamError(f"{gate.option} must be a finite number, got {gate.threshold}")
    wrong = [g for g in gates if g.threshold is not None and (g.metric in REGRESSION_GATES) != regression]
    if wrong:
        kind = "a number (regression)" if regression else "classes"
        raise ParamError(f"{wrong[0].option} does not apply: this model predicts {kind}")


def metrics_json(payload: dict[str, Any]) -> str:
    return json.dumps(payload, indent=2, sort_keys=True, allow_nan=False) + "\n"


CURVES = 3  # partial-dependence curves drawn for a forest: its most important features
CURVE_ROWS = 300  # rows averaged over at each grid value
CURVE_POINTS = 20


def report(
    model: Predictor,
    data: str | Path | pl.DataFrame,
    *,
    target: str | None = None,
    baseline: bool = False,
    weights: str | None = None,
    model_label: str = "model",
    reference: str | Path | pl.DataFrame | None = None,
    **read: Any,
) -> str:
    """A self-contained HTML page about ``model`` on ``data`` (:mod:`rulecli.html_report`); its
    metrics and rule statistics count rows by the column ``weights``, if given; with
    ``reference``, each column the model reads held against that table."""
    lf, label = scan_for(model, data, **read)
    try:
        frame = lf.collect()
    except pl.exceptions.PolarsError as exc:
        raise _polars_failure(label, exc) from exc
    payload = evaluate(
        model, frame, target=target, per_rule=True, baseline=baseline, weights=weights, label=label, reference=reference
    )
    importance, curves = None, []
    if isinstance(model, Forest):
        raw = model.info.training.get("importance") if isinstance(model.info.training, dict) else None
        importance = {str(k): float(v) for k, v in raw.items()} if isinstance(raw, dict) else None
        if importance:
            top = [name for name, _ in sorted(importance.items(), key=lambda kv: -kv[1])[:CURVES]]
            curves = [_curve(model, frame, name) for name in top if name in frame.columns]
    return render_report(
        model,
        payload,
        model_label=model_label,
        data_label=label,
        importance=importance,
        curves=[c for c in curves if c is not None],
        points=_points(model, frame, target) if predicts_number(model) else None,
    )


PLOTTED_ROWS = 2000  # points in a number's plots: rows evenly spaced through the table


def _points(model: Predictor, frame: pl.DataFrame, target: str | None) -> tuple[np.ndarray, np.ndarray]:
    """The truth and the prediction of (up to ``PLOTTED_ROWS``) rows with a truth."""
    rows = frame.gather_every(max(1, frame.height // PLOTTED_ROWS)).head(PLOTTED_ROWS)
    scored = predict(model, rows).get_column(PREDICTION).to_numpy()
    truth = rows.select(truth_expr(model, target).cast(pl.Float64)).to_series().to_numpy()
    present = ~np.isnan(truth) & ~np.isnan(scored)
    return truth[present], scored[present]


def _curve(model: Forest, frame: pl.DataFrame, feature: str) -> Curve | None:
    """The mean prediction over (the first 300) rows with ``feature`` set to each grid value."""
    sample = frame.head(CURVE_ROWS)
    schema = model.info.schema
    kind = schema.feature(feature) if schema is not None else None
    dtype = frame.schema[feature]
    if kind is not None and kind.levels:
        grid: list[float | str] = list(kind.levels[:CURVE_POINTS])
    else:
        present = plain_column(sample, feature).cast(pl.Float64, strict=False).drop_nulls().drop_nans()
        if present.is_empty():
            return None
        grid = sorted({float(present.quantile(q / (CURVE_POINTS - 1))) for q in range(CURVE_POINTS)})
    stacked = pl.concat(
        [sample.with_columns(pl.lit(value).cast(dtype).alias(feature)) for value in grid], how="vertical"
    )
    scored = predict(model, stacked, proba=not model.regression)

    def means(column: str) -> list[float]:
        values = plain_column(scored, column).cast(pl.Float64).to_numpy().reshape(len(grid), sample.height)
        return [float(v) for v in values.mean(axis=1)]

    if model.regression:
        return Curve(feature, "mean prediction", grid, {model.target: means("prediction")})
    return Curve(feature, "P(class)", grid, {str(cls): means(f"proba_{cls}") for cls in model.classes})
