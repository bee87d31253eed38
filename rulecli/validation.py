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
from rulecli.metrics import classification_metrics, confusion_report, scored_frame
from rulecli.model.core import Model

SUMMARY_KEYS = ("accuracy", "balanced_accuracy", "macro_f1", "kappa", "coverage")


def truth_expr(model: Model, target: str | None = None) -> pl.Expr:
    """True class labels from a raw table, made the way training made them."""
    schema = model.info.schema
    if schema is not None and (target is None or target == schema.target.name):
        return target_label_expr(schema.target)
    return pl.col(target or model.target).cast(pl.String)


def evaluate_model(model: Model, lf: pl.LazyFrame, truth: pl.Expr) -> dict[str, Any]:
    """Classification metrics of ``model`` on a table, against ``truth``."""
    df = scored_frame(model, lf, truth).collect()
    return classification_metrics(confusion_report(df, model.classes))


@dataclass(frozen=True)
class CrossValidation:
    folds: tuple[dict[str, Any], ...]

    def summary(self) -> dict[str, dict[str, float]]:
        """Mean and sample standard deviation of each headline metric over folds."""
        out = {}
        for key in SUMMARY_KEYS:
            values = np.array([fold[key] for fold in self.folds], dtype=np.float64)
            sd = float(values.std(ddof=1)) if values.size > 1 else 0.0
            out[key] = {"mean": float(values.mean()), "sd": sd}
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"folds": list(self.folds), "summary": self.summary()}


def cross_validate(ds: Dataset, fit: Callable[[Dataset], Model], k: int, seed: int) -> CrossValidation:
    """Stratified K-fold: fit on K-1 folds, score the held-out fold, K times."""
    if k < 2:
        raise ParamError(f"--cv must be at least 2, got {k}")
    if k > ds.n_rows:
        raise ParamError(f"--cv {k} is more folds than the {ds.n_rows} rows")
    folds = stratified_folds(ds.y, k, seed)
    results = []
    for fold in range(k):
        train = ds.subset(np.flatnonzero(folds != fold))
        test = ds.subset(np.flatnonzero(folds == fold))
        started = time.perf_counter()
        model = fit(train)
        elapsed = time.perf_counter() - started
        metrics = evaluate_model(model, test.frame.lazy(), pl.col(ds.target))
        metrics = {key: metrics[key] for key in (*SUMMARY_KEYS, "rows", "unclassified")}
        metrics["fold"] = fold + 1
        metrics["rules"] = len(model.rules)
        metrics["fit_seconds"] = round(elapsed, 6)
        results.append(metrics)
    return CrossValidation(tuple(results))
