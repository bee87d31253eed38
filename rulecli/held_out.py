"""Held-out evaluation of a learner: a test table or stratified K-fold cross-validation."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from rulecli.dataset import Dataset, stratified_folds, target_label_expr
from rulecli.errors import ParamError
from rulecli.metrics import WEIGHT, classification_metrics, confusion_report, regression_metrics, scored_frame
from rulecli.model.compile import Predictor
from rulecli.model.core import Committee, RuleRegression, number_lists
from rulecli.model.tree import Forest, Tree, predicts_number
from rulecli.schema import col, numeric_expr
from rulecli.stats import mean_interval

SUMMARY_KEYS = ("accuracy", "balanced_accuracy", "macro_f1", "kappa", "coverage")
REGRESSION_KEYS = ("mae", "rmse", "r2")


def model_size(model: Predictor) -> int:
    """Rules, or leaves for trees and forests (each leaf is a rule)."""
    if isinstance(model, Tree):
        return int(model.nodes.leaves.size)
    if isinstance(model, Forest):
        return sum(int(t.leaves.size) for t in model.trees)
    if isinstance(model, RuleRegression | Committee):
        return sum(len(m.rules) for m in number_lists(model))
    return len(model.rules)


def truth_expr(model: Predictor, target: str | None = None) -> pl.Expr:
    """True class labels (or numbers) from a raw table, made the way training made them."""
    if predicts_number(model):
        return numeric_expr(target or model.target)
    schema = model.info.schema
    if schema is not None and (target is None or target == schema.target.name):
        return target_label_expr(schema.target)
    return col(target or model.target).cast(pl.String)


def evaluate_model(model: Predictor, lf: pl.LazyFrame, truth: pl.Expr, weight: pl.Expr | None = None) -> dict[str, Any]:
    """Classification (or regression) metrics of ``model`` on a table, against ``truth``,
    each row counted by ``weight`` (once without)."""
    if predicts_number(model):
        return regression_metrics(model, lf, truth, weight)
    df = scored_frame(model, lf, truth, weight).collect()
    return classification_metrics(confusion_report(df, model.classes))


@dataclass(frozen=True)
class CrossValidation:
    folds: tuple[dict[str, Any], ...]

    @property
    def keys(self) -> tuple[str, ...]:
        return REGRESSION_KEYS if self.folds and "rmse" in self.folds[0] else SUMMARY_KEYS

    def summary(self) -> dict[str, dict[str, Any]]:
        """Mean, sample standard deviation and 95 % t interval of each headline metric over folds."""
        out = {}
        for key in self.keys:
            values = np.array([fold[key] for fold in self.folds], dtype=np.float64)
            sd = float(values.std(ddof=1)) if values.size > 1 else 0.0
            mean = float(values.mean())
            # the t interval of the mean over folds (the folds share training rows: a guide, not a test)
            out[key] = {"mean": mean, "sd": sd, "interval": mean_interval(mean, sd, values.size)}
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"folds": list(self.folds), "summary": self.summary()}


def cross_validate(ds: Dataset, fit: Callable[[Dataset], Predictor], k: int, seed: int) -> CrossValidation:
    """Stratified K-fold: fit on K-1 folds, score the held-out fold, K times."""
    if k < 2:
        raise ParamError(f"`cv` must be at least 2, got {k}")
    if k > ds.n_rows:
        raise ParamError(f"`cv={k}` is more folds than the {ds.n_rows} rows")
    # a numeric target is stratified by its sorted values (see stratified_folds)
    folds = stratified_folds(ds.y, k, seed)
    keys = REGRESSION_KEYS if ds.regression else SUMMARY_KEYS
    results = []
    for fold in range(k):
        train = ds.subset(np.flatnonzero(folds != fold))
        test = ds.subset(np.flatnonzero(folds == fold))
        started = time.perf_counter()
        model = fit(train)
        elapsed = time.perf_counter() - started
        held, weight = test.frame.lazy(), None
        if test.row_weights is not None:
            # held-out rows count by their row weights (class weights steer learning only)
            held = held.with_columns(pl.Series(WEIGHT, test.row_weights))
            weight = pl.col(WEIGHT)
        metrics = evaluate_model(model, held, col(ds.target), weight)
        metrics = {key: metrics[key] for key in (*keys, "rows", *(() if ds.regression else ("unclassified",)))}
        metrics["fold"] = fold + 1
        metrics["rules"] = model_size(model)
        metrics["fit_seconds"] = round(elapsed, 6)
        results.append(metrics)
    return CrossValidation(tuple(results))
