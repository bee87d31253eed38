"""Evaluation metrics and per-rule statistics, computed from Polars expressions.

Rule statistics: for a rule ``a => b`` on ``n`` rows,
``n_a`` rows are decided by the rule, ``n_ab`` of them have class ``b``, ``n_b`` rows
have class ``b``; coverage = n_a/n, class support = n_ab/n_b, accuracy = n_ab/n_a.
In a decision list a rule decides the rows it is the *first* to match; in a rule
set every matching rule counts the row.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from rulecli.errors import InputError, ParamError
from rulecli.model.compile import (
    DEFAULT_RULE,
    FIRST_MATCH,
    PREDICTION,
    RULE,
    WALK,
    Predictor,
    decided_expr,
    first_match_expr,
    model_input,
    predict_expr,
    prediction_frame,
    rule_expr,
    rule_id_expr,
    walk_expr,
)
from rulecli.model.core import Committee, DecisionList, Model, NumberRule, RuleRegression, column_units, number_lists
from rulecli.model.text import render_conditions, render_formula
from rulecli.model.tree import Forest, Tree, decision_list, leaf_rules
from rulecli.schema import col
from rulecli.stats import Z95, holm, tally, wilson

TRUTH = "truth"
DECIDED = "decided"
WEIGHT = "_rulecli_weight_"  # internal: a name no table column is expected to have


def _weight(weight: pl.Expr | None) -> pl.Expr:
    """Each row's weight in a count (1 when rows are not weighted: counts stay integers)."""
    return (pl.lit(1, dtype=pl.Int64) if weight is None else weight).alias(WEIGHT)


def _weighted_sum(mask: pl.Expr, weight: pl.Expr | None) -> pl.Expr:
    return mask.sum() if weight is None else pl.when(mask).then(weight).otherwise(0.0).sum()


def scored_frame(model: Predictor, lf: pl.LazyFrame, truth: pl.Expr, weight: pl.Expr | None = None) -> pl.LazyFrame:
    """Truth, prediction, whether a non-default rule decided, the deciding rule and the
    row's weight."""
    lf = model_input(model, lf)
    if isinstance(model, Tree | Forest):
        explain = isinstance(model, Tree)
        return lf.with_columns(truth.alias(TRUTH), walk_expr(model, explain=explain), _weight(weight)).select(
            TRUTH,
            pl.col(WALK).struct.field(PREDICTION),
            pl.lit(True).alias(DECIDED),
            pl.col(WALK).struct.field(RULE) if explain else pl.lit(None, dtype=pl.String).alias(RULE),
            WEIGHT,
        )
    if isinstance(model, DecisionList):
        lf = lf.with_columns(first_match_expr(model).alias(FIRST_MATCH))
        index = pl.col(FIRST_MATCH)
        exprs = [predict_expr(model, index), (index < len(model.rules)).alias(DECIDED), rule_id_expr(model, index)]
    else:
        exprs = [predict_expr(model), decided_expr(model).alias(DECIDED), rule_id_expr(model)]
    # with_columns broadcasts a model without rules (a literal) to every row; select would not
    return lf.with_columns(truth.alias(TRUTH), *exprs, _weight(weight)).select(TRUTH, PREDICTION, DECIDED, RULE, WEIGHT)


@dataclass(frozen=True)
class ClassificationReport:
    labels: tuple[str, ...]
    confusion: np.ndarray  # rows: truth, columns: predicted labels, last column: unclassified
    n_decided: int | float

    @property
    def n_rows(self) -> int | float:
        return tally(self.confusion.sum())

    @property
    def n_unclassified(self) -> int | float:
        return tally(self.confusion[:, -1].sum())

    def as_dict(self) -> dict[str, Any]:
        return classification_metrics(self)


def confusion_report(df: pl.DataFrame, classes: tuple[str, ...]) -> ClassificationReport:
    """Count a scored frame into a confusion matrix over the model's classes plus unseen labels."""
    seen = set(df.get_column(TRUTH).drop_nulls().unique().to_list())
    labels = tuple(classes) + tuple(sorted(seen - set(classes)))
    index = {label: i for i, label in enumerate(labels)}
    known = df.filter(pl.col(TRUTH).is_not_null())
    counts = known.group_by(TRUTH, PREDICTION).agg(pl.col(WEIGHT).sum().alias("n"))
    weighted = known.schema[WEIGHT].is_float()
    confusion = np.zeros((len(labels), len(labels) + 1), dtype=np.float64 if weighted else np.int64)
    columns = (counts.get_column(c).to_list() for c in (TRUTH, PREDICTION, "n"))
    for truth, predicted, n in zip(*columns, strict=True):
        column = len(labels) if predicted is None else index[predicted]
        confusion[index[truth], column] = n
    n_decided = tally(known.filter(pl.col(DECIDED)).get_column(WEIGHT).sum())
    return ClassificationReport(labels, confusion, n_decided)


def _safe_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.divide(a, b, out=np.zeros_like(a, dtype=np.float64), where=b > 0)


def classification_metrics(report: ClassificationReport) -> dict[str, Any]:
    """Accuracy, balanced accuracy, per-class precision/recall/F1, macro F1, kappa, coverage."""
    cm = report.confusion
    n = cm.sum()
    square = cm[:, :-1].astype(np.float64)
    tp = np.diag(square)
    actual = cm.sum(axis=1).astype(np.float64)
    predicted = square.sum(axis=0)
    precision = _safe_div(tp, predicted)
    recall = _safe_div(tp, actual)
    f1 = _safe_div(2 * precision * recall, precision + recall)
    present = (actual > 0) | (predicted > 0)
    accuracy = float(tp.sum() / n) if n else 0.0
    expected = float((actual * predicted).sum() / (n * n)) if n else 0.0
    kappa = (accuracy - expected) / (1 - expected) if expected < 1 else 0.0
    per_class = {
        label: {
            "precision": float(precision[i]),
            "recall": float(recall[i]),
            "f1": float(f1[i]),
            "support": tally(actual[i]),
        }
        for i, label in enumerate(report.labels)
    }
    return {
        "rows": tally(n),
        "accuracy": accuracy,
        "accuracy_interval": wilson(float(tp.sum()), float(n)),
        "coverage_interval": wilson(float(report.n_decided), float(n)),
        "balanced_accuracy": float(recall[actual > 0].mean()) if (actual > 0).any() else 0.0,
        "macro_f1": float(f1[present].mean()) if present.any() else 0.0,
        "kappa": float(kappa),
        "coverage": report.n_decided / n if n else 0.0,
        "unclassified": report.n_unclassified,
        "per_class": per_class,
        "confusion": {
            "labels": list(report.labels),
            "matrix": [[tally(v) for v in row[:-1]] for row in cm],
            "unclassified": [tally(v) for v in cm[:, -1]],
        },
    }


@dataclass(frozen=True)
class RuleReport:
    rule: str  # 1-based number or "default"
    text: str
    prediction: str
    n_covered: int | float  # n_a (rows counted by their weights)
    n_correct: int | float  # n_ab
    n_class: int | float  # n_b

    def as_dict(self, n_rows: int | float) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "conditions": self.text,
            "prediction": self.prediction,
            "covered": self.n_covered,
            "correct": self.n_correct,
            "coverage": self.n_covered / n_rows if n_rows else 0.0,
            "class_support": self.n_correct / self.n_class if self.n_class else 0.0,
            "accuracy": self.n_correct / self.n_covered if self.n_covered else 0.0,
            "accuracy_interval": wilson(self.n_correct, self.n_covered),
        }


def rule_reports(model: Model, lf: pl.LazyFrame, truth: pl.Expr, weight: pl.Expr | None = None) -> list[RuleReport]:
    """Per-rule n_a, n_ab and n_b on this data (rows counted by ``weight``), one pass over it."""
    lf = model_input(model, lf).filter(truth.is_not_null())
    rules = list(model.rules)
    names = [str(i) for i in range(1, len(rules) + 1)]
    w = None if weight is None else pl.col(WEIGHT)
    if isinstance(model, DecisionList):
        rules.append(model.default)
        names.append(DEFAULT_RULE)
        # computed beside the rows, then picked: Polars 2.1 returned a select made only of a
        # coalesce (the rule number) over a scanned file with its rows out of order
        fired = lf.with_columns(rule_id_expr(model), truth.alias(TRUTH), _weight(weight)).select(RULE, TRUTH, WEIGHT)
        aggs = []
        for name, rule in zip(names, rules, strict=True):
            mine = pl.col(RULE) == name
            aggs += [
                _weighted_sum(mine, w).alias(f"a{name}"),
                _weighted_sum(mine & (pl.col(TRUTH) == rule.prediction), w).alias(f"ab{name}"),
            ]
        source = fired
    else:
        aggs = []
        tests = []
        for name, rule in zip(names, rules, strict=True):
            # the empty rule's literal True would sum to 1, not to the row count
            fires = rule_expr(rule) if rule.conditions else pl.repeat(True, pl.len())
            tests.append(fires)
            aggs += [
                _weighted_sum(fires, weight).alias(f"a{name}"),
                _weighted_sum(fires & (truth == rule.prediction), weight).alias(f"ab{name}"),
            ]
        if model.default is not None:
            # a rule set's default decides the rows no rule matches
            rules.append(model.default)
            names.append(DEFAULT_RULE)
            left = ~pl.any_horizontal(tests) if tests else pl.repeat(True, pl.len())
            aggs += [
                _weighted_sum(left, weight).alias(f"a{DEFAULT_RULE}"),
                _weighted_sum(left & (truth == model.default.prediction), weight).alias(f"ab{DEFAULT_RULE}"),
            ]
        source = lf
    predictions = sorted({r.prediction for r in rules})
    class_aggs = [_weighted_sum(truth == p, weight).alias(f"b{p}") for p in predictions]
    counts = source.select(aggs).collect().row(0, named=True) if aggs else {}
    class_counts = lf.select(class_aggs).collect().row(0, named=True) if class_aggs else {}
    return [
        RuleReport(
            name,
            render_conditions(rule.conditions) if name != DEFAULT_RULE else "ELSE",
            rule.prediction,
            tally(counts[f"a{name}"]),
            tally(counts[f"ab{name}"]),
            tally(class_counts[f"b{rule.prediction}"]),
        )
        for name, rule in zip(names, rules, strict=True)
    ]


def regression_metrics(
    model: Predictor, lf: pl.LazyFrame, truth: pl.Expr, weight: pl.Expr | None = None
) -> dict[str, Any]:
    """Rows, MAE, RMSE, R² and the mean of the truth, over rows whose truth is present
    (rows counted by ``weight``)."""
    scored = prediction_frame(model, lf.with_columns(truth.alias(TRUTH), _weight(weight)), keep=(TRUTH, WEIGHT))
    error = pl.col(PREDICTION) - pl.col(TRUTH)
    w = pl.col(WEIGHT).cast(pl.Float64)  # 1 a row without weights
    total = w.sum()
    mean = (w * pl.col(TRUTH)).sum() / total
    aggs = [
        (pl.len() if weight is None else total).alias("rows"),  # a count stays a whole number
        ((w * error.abs()).sum() / total).alias("mae"),
        ((w * error * error).sum() / total).alias("mse"),
        # second moments: the standard errors of the mean absolute and squared errors
        ((w * error * error).sum() / total).alias("abs2"),
        ((w * error**4).sum() / total).alias("sq2"),
        ((w * (pl.col(TRUTH) - mean) ** 2).sum() / total).alias("variance"),
        mean.alias("mean"),
        ((w * w).sum()).alias("w2"),
    ]
    row = scored.filter(pl.col(TRUTH).is_not_null()).select(aggs).collect().row(0, named=True)
    n = tally(row["rows"])
    if not n:
        return {"rows": n, "mae": 0.0, "rmse": 0.0, "mse": 0.0, "r2": 0.0, "mean_truth": 0.0}
    mae, mse, variance = float(row["mae"]), float(row["mse"]), float(row["variance"])
    # weighted rows count as Kish's effective sample size, (Σw)² / Σw²
    effective = float(row["rows"]) ** 2 / float(row["w2"]) if row["w2"] else 0.0
    out = {
        "rows": n,
        "mae": mae,
        "rmse": float(np.sqrt(mse)),
        "mse": mse,
        "r2": 1.0 - mse / variance if variance > 0 else 0.0,
        "mean_truth": float(row["mean"]),
    }
    if effective > 1:
        # normal approximations of each mean's 95 % interval; RMSE and R² follow from the
        # mean squared error's (the truth's variance held as measured)
        mae_half = Z95 * np.sqrt(max(float(row["abs2"]) - mae * mae, 0.0) / effective)
        mse_half = Z95 * np.sqrt(max(float(row["sq2"]) - mse * mse, 0.0) / effective)
        low, high = max(mse - mse_half, 0.0), mse + mse_half
        out["mae_interval"] = [max(mae - mae_half, 0.0), mae + mae_half]
        out["rmse_interval"] = [float(np.sqrt(low)), float(np.sqrt(high))]
        if variance > 0:
            out["r2_interval"] = [1.0 - high / variance, 1.0 - low / variance]
    return out


def leaf_reports(tree: Tree, lf: pl.LazyFrame, truth: pl.Expr, weight: pl.Expr | None = None) -> list[RuleReport]:
    """Per-leaf n_a, n_ab and n_b of a classification tree: one walk, one group-by."""
    listed = decision_list(tree)
    scored = scored_frame(tree, lf, truth, weight).filter(pl.col(TRUTH).is_not_null()).collect()
    w = pl.col(WEIGHT)
    right = pl.col(TRUTH) == pl.col(PREDICTION)
    counts = scored.group_by(RULE).agg(w.sum().alias("a"), pl.when(right).then(w).otherwise(0).sum().alias("ab"))
    found = {row[RULE]: (row["a"], row["ab"]) for row in counts.to_dicts()}
    per_class = scored.group_by(TRUTH).agg(w.sum().alias("count"))
    class_counts = dict(
        zip(per_class.get_column(TRUTH).to_list(), per_class.get_column("count").to_list(), strict=True)
    )
    return [
        RuleReport(
            str(i),
            render_conditions(rule.conditions),
            rule.prediction,
            tally(found.get(str(i), (0, 0))[0]),
            tally(found.get(str(i), (0, 0))[1]),
            tally(class_counts.get(rule.prediction, 0)),
        )
        for i, rule in enumerate(listed.rules, 1)
    ]


VIOLATED = "violated_rules"


def violations(model: Predictor, lf: pl.LazyFrame, truth: pl.Expr) -> pl.LazyFrame:
    """The rows a rule covers but gets wrong: every input column, the truth, the
    prediction, and the contradicted rules (numbers and text).

    In a decision list (or a tree) the rule that decides a row is the one that covers it;
    rows left to the default rule contradict no rule. In a rule set every matching rule
    whose class is not the row's counts.
    """
    if isinstance(model, Forest) or (isinstance(model, Tree) and model.regression):
        raise ParamError("`violations_out` needs rules with classes: a rule list, rule set or classification tree")
    columns = lf.collect_schema().names()
    lf = model_input(model, lf).with_columns(truth.alias(TRUTH))
    if isinstance(model, Tree):
        scored = lf.with_columns(walk_expr(model, explain=True)).with_columns(
            pl.col(WALK).struct.field(PREDICTION), pl.col(WALK).struct.field(RULE).alias(VIOLATED)
        )
        wrong = pl.col(PREDICTION) != pl.col(TRUTH)
        leaves = leaf_rules(model.nodes, model.features, column_units(model))
        texts = dict(enumerate((render_conditions(c) for _, c in leaves), 1))
    elif isinstance(model, DecisionList):
        index = first_match_expr(model)
        scored = lf.with_columns(index.alias(FIRST_MATCH)).with_columns(
            predict_expr(model, pl.col(FIRST_MATCH)), rule_id_expr(model, pl.col(FIRST_MATCH)).alias(VIOLATED)
        )
        wrong = (pl.col(FIRST_MATCH) < len(model.rules)) & (pl.col(PREDICTION) != pl.col(TRUTH))
        texts = {i: render_conditions(r.conditions) for i, r in enumerate(model.rules, 1)}
    else:
        against = [
            pl.when(rule_expr(r) & (pl.col(TRUTH) != r.prediction)).then(pl.lit(str(i)))
            for i, r in enumerate(model.rules, 1)
        ]
        joined = pl.concat_str(against, separator=",", ignore_nulls=True) if against else pl.lit("")
        scored = lf.with_columns(predict_expr(model), joined.alias(VIOLATED))
        wrong = pl.col(VIOLATED).is_not_null() & (pl.col(VIOLATED) != "")
        texts = {i: render_conditions(r.conditions) for i, r in enumerate(model.rules, 1)}
    lookup = {str(i): t for i, t in texts.items()}
    text = (
        pl.col(VIOLATED)
        .str.split(",")
        .list.eval(pl.element().replace_strict(lookup, default=None, return_dtype=pl.String))
        .list.join(" | ")
        .alias("violated_text")
    )
    return (
        scored.filter(pl.col(TRUTH).is_not_null() & wrong)
        .with_columns(text)
        .select(*map(col, columns), pl.col(TRUTH).alias("truth"), PREDICTION, VIOLATED, "violated_text")
    )


@dataclass(frozen=True)
class Gate:
    """A bound a metric must respect (``threshold`` None: not checked); ``option`` names it to
    users. A minimum unless ``upper`` (then the metric must not exceed it)."""

    metric: str
    threshold: float | None
    option: str
    upper: bool = False


GATE_ON = ("point", "lower")


def gate_failures(metrics: dict[str, Any], gates: list[Gate], bound: str = "point") -> list[str]:
    """One message per gate the metrics fail, saying by how much. With ``bound="lower"`` a
    minimum is held against the lower end of the metric's 95 % interval (where it has one:
    accuracy, coverage), so a pass means the figure is above the threshold beyond chance.

    Examples
    --------
    >>> gate_failures({"accuracy": 0.7}, [Gate("accuracy", 0.95, "--min-accuracy")])
    ['quality gate failed: accuracy 0.7000 < 0.9500 (--min-accuracy), short by 0.2500']
    """
    failures = []
    for gate in gates:
        if gate.threshold is None:
            continue
        value, name = metrics[gate.metric], gate.metric
        interval = metrics.get(f"{gate.metric}_interval")
        if bound == "lower" and interval is not None:
            # beyond chance: the side of the 95 % interval nearer the threshold must pass
            value, name = (
                interval[1 if gate.upper else 0],
                f"{gate.metric} ({'upper' if gate.upper else 'lower'} bound)",
            )
        if gate.upper:
            if value > gate.threshold:
                failures.append(
                    f"quality gate failed: {name} {value:.4f} > {gate.threshold:.4f} ({gate.option}), "
                    f"over by {value - gate.threshold:.4f}"
                )
            continue
        if value < gate.threshold:
            failures.append(
                f"quality gate failed: {name} {value:.4f} < {gate.threshold:.4f} ({gate.option}), "
                f"short by {gate.threshold - value:.4f}"
            )
    return failures


# ---------------------------------------------------------------------------- rule drift

DRIFT_ALPHA = 0.05


def _two_proportions(hits_a: int, n_a: int, hits_b: int, n_b: int) -> float | None:
    """Two-sided p-value of the pooled two-proportion z-test (None when a side is empty)."""
    if n_a == 0 or n_b == 0:
        return None
    pooled = (hits_a + hits_b) / (n_a + n_b)
    spread = pooled * (1 - pooled) * (1 / n_a + 1 / n_b)
    if spread <= 0:
        return 1.0  # both sides all hits or all misses: no evidence of a change
    z = (hits_b / n_b - hits_a / n_a) / math.sqrt(spread)
    return math.erfc(abs(z) / math.sqrt(2))


def training_rows(model: Predictor) -> int | None:
    """The rows a model was trained on, as its file records them."""
    if isinstance(model, Tree):
        return round(float(model.nodes.n_samples[0]))
    rows = model.info.training.get("rows") if isinstance(model.info.training, dict) else None
    if isinstance(rows, int):
        return rows
    counts = model.info.training.get("class_counts")  # a rule file's PRIOR line
    if isinstance(counts, list) and all(isinstance(c, int) for c in counts):
        return sum(counts)
    if isinstance(model, DecisionList) and model.default.stats is not None and all(r.stats for r in model.rules):
        return sum(r.stats.covered for r in model.rules if r.stats) + model.default.stats.covered
    return None


def rule_drift(model: Predictor, reports: list[RuleReport], n_rows: int) -> dict[str, Any]:
    """Each rule's training coverage and accuracy (as the model records them) beside its
    coverage and accuracy on this data, with a two-proportion z-test of each change; the
    p-values are Holm-adjusted over all the tests made (coverage and accuracy of every rule)."""
    rules = list(decision_list(model).rules) if isinstance(model, Tree) else list(model.rules)  # type: ignore[union-attr]
    if reports and reports[-1].rule == DEFAULT_RULE:
        # the rows no rule covers, with the statistics training recorded for them
        rules.append(model.default)  # type: ignore[union-attr]
    n_train = training_rows(model)
    if n_train is None or any(r.stats is None for r in rules):
        raise ParamError(
            "`baseline` needs the training statistics of every rule (covers, correct) and the training rows"
        )
    rows: list[dict[str, Any]] = []
    measured: list[dict[str, float | None]] = []
    for rule, report in zip(rules, reports, strict=True):
        stats = rule.stats
        assert stats is not None
        entry: dict[str, Any] = {
            "rule": report.rule,
            "conditions": report.text,
            "prediction": rule.prediction,
            "train_coverage": stats.covered / n_train if n_train else 0.0,
            "coverage": report.n_covered / n_rows if n_rows else 0.0,
            "train_accuracy": stats.correct / stats.covered if stats.covered else None,
            "accuracy": report.n_correct / report.n_covered if report.n_covered else None,
            "covered": report.n_covered,
            "train_covered": stats.covered,
        }
        rows.append(entry)
        measured.append(
            {
                "coverage": _two_proportions(stats.covered, n_train, report.n_covered, n_rows),
                "accuracy": _two_proportions(stats.correct, stats.covered, report.n_correct, report.n_covered),
            }
        )
    return _tested(rows, measured, n_train)


def _tested(rows: list[dict[str, Any]], measured: list[dict[str, float | None]], n_train: int) -> dict[str, Any]:
    """The rules' rows with each test's p-value (``<what>_p``) Holm-adjusted over all the
    tests made (None where one could not be), and whether each rule drifted."""
    tests = [(k, what, p) for k, found in enumerate(measured) for what, p in found.items() if p is not None]
    for entry, found in zip(rows, measured, strict=True):
        entry.update({f"{what}_p": None for what in found})
    for (k, what, _), adjusted in zip(tests, holm([p for _, _, p in tests]), strict=True):
        rows[k][f"{what}_p"] = adjusted
    for entry, found in zip(rows, measured, strict=True):
        entry["drifted"] = any(entry[f"{w}_p"] is not None and entry[f"{w}_p"] < DRIFT_ALPHA for w in found)
    return {"alpha": DRIFT_ALPHA, "correction": "holm", "tests": len(tests), "training_rows": n_train, "rules": rows}


def number_rule_drift(
    model: RuleRegression | Committee, lf: pl.LazyFrame, truth: pl.Expr, weight: pl.Expr | None = None
) -> dict[str, Any]:
    """Each rule of a model of numbers (the default last; a committee's list by list, as
    ``list/rule``) on this data beside its training statistics: the share of rows it
    decides, their target's mean and its formula's RMSE. Tests: the two-proportion z-test of
    the coverage, Welch's z-test of the mean, and of the RMSE a z-test of the log ratio of
    the mean squared errors (var log s² ≈ 2 / n for normal residuals); the p-values
    Holm-adjusted over all the tests made."""
    n_train = training_rows(model)
    lists = number_lists(model)
    if n_train is None or any(r.stats is None for m in lists for r in (*m.rules, m.default)):
        raise ParamError("`baseline` needs the training statistics of every rule (covers, mean, rmse) and the rows")
    figures = []
    for m, member in enumerate(lists, 1):
        here = _decided_figures(member, lf, truth, weight)
        n_rows = float(sum(row["n"] for row in here.values()))
        ids = [*(str(i) for i in range(1, len(member.rules) + 1)), DEFAULT_RULE]
        prefix = f"{m}/" if isinstance(model, Committee) else ""
        rules = [*member.rules, member.default]
        figures += [
            _number_entry(prefix + i, rule, here.get(i), n_train, n_rows) for i, rule in zip(ids, rules, strict=True)
        ]
    return _tested([entry for entry, _ in figures], [found for _, found in figures], n_train)


def _decided_figures(
    model: RuleRegression, lf: pl.LazyFrame, truth: pl.Expr, weight: pl.Expr | None
) -> dict[str, dict[str, Any]]:
    """Per deciding rule (its number, or ``default``): rows by weight, the truth's mean and
    mean square, and the mean squared error, over rows with a truth."""
    scored = prediction_frame(
        model, lf.with_columns(truth.alias(TRUTH), _weight(weight)), keep=(TRUTH, WEIGHT), explain=True
    )
    w, error = pl.col(WEIGHT).cast(pl.Float64), pl.col(PREDICTION) - pl.col(TRUTH)
    found = (
        scored.filter(pl.col(TRUTH).is_not_null())
        .group_by(RULE)
        .agg(
            w.sum().alias("n"),
            ((w * pl.col(TRUTH)).sum() / w.sum()).alias("mean"),
            ((w * pl.col(TRUTH) ** 2).sum() / w.sum()).alias("square"),
            ((w * error**2).sum() / w.sum()).alias("mse"),
        )
        .collect()
    )
    return {row[RULE]: row for row in found.to_dicts()}


def _number_entry(
    rule_id: str, rule: NumberRule, row: dict[str, Any] | None, n_train: int, n_rows: float
) -> tuple[dict[str, Any], dict[str, float | None]]:
    """A rule's figures in training and here, and the p-value of each change (unadjusted)."""
    stats = rule.stats
    assert stats is not None
    n = float(row["n"]) if row else 0.0
    mean = float(row["mean"]) if row else None
    rmse = math.sqrt(float(row["mse"])) if row else None
    spread = math.sqrt(max(float(row["square"]) - mean * mean, 0.0)) if row and mean is not None else None
    entry: dict[str, Any] = {
        "rule": rule_id,
        "conditions": render_conditions(rule.conditions) if rule.conditions else "ELSE",
        "prediction": render_formula(rule.formula),
        "train_coverage": stats.covered / n_train if n_train else 0.0,
        "coverage": n / n_rows if n_rows else 0.0,
        "covered": tally(n),
        "train_covered": stats.covered,
        "train_mean": stats.mean,
        "mean": mean,
        "train_rmse": stats.rmse,
        "rmse": rmse,
    }
    measured = {
        "coverage": _two_proportions(round(stats.covered), n_train, round(n), round(n_rows)),
        "mean": _welch(stats.mean, stats.sd, float(stats.covered), mean, spread, n),
        "rmse": _log_ratio(stats.rmse, float(stats.covered), rmse, n),
    }
    return entry, measured


def _welch(
    mean_a: float, sd_a: float, n_a: float, mean_b: float | None, sd_b: float | None, n_b: float
) -> float | None:
    """Two-sided p-value of Welch's z-test of two means (None where a side has under 2 rows)."""
    if mean_b is None or sd_b is None or n_a < 2 or n_b < 2:
        return None
    spread = sd_a * sd_a / n_a + sd_b * sd_b / n_b
    if spread <= 0:
        return 1.0 if mean_a == mean_b else 0.0
    return math.erfc(abs(mean_b - mean_a) / math.sqrt(2 * spread))


def _log_ratio(rmse_a: float, n_a: float, rmse_b: float | None, n_b: float) -> float | None:
    """Two-sided p-value of a z-test of log(rmse_b² / rmse_a²), each with variance 2 / n."""
    if rmse_b is None or n_a < 2 or n_b < 2 or rmse_a <= 0 or rmse_b <= 0:
        return None
    z = 2 * math.log(rmse_b / rmse_a) / math.sqrt(2 / n_a + 2 / n_b)
    return math.erfc(abs(z) / math.sqrt(2))


def drift_failures(
    drift: dict[str, Any], max_drift: float | None, min_coverage: float | None, max_ratio: float | None = None
) -> list[str]:
    """One message per rule whose change is significant and beyond a bound: an accuracy
    drop or a coverage change larger than ``max_drift`` (for a rule with a formula, see
    :func:`_number_failures`), coverage below ``min_coverage``
    times its training share (a rule that no longer fires has none), or coverage grown or
    shrunk by more than the factor ``max_ratio`` (a bound that means the same for a rule of
    2 % of the rows as for one of 60 %)."""
    failures = []
    for entry in drift["rules"]:
        label = (
            f"the default rule (the rows no rule covers, THEN {entry['prediction']})"
            if entry["rule"] == DEFAULT_RULE
            else f"rule {entry['rule']} (IF {entry['conditions']} THEN {entry['prediction']})"
        )
        cov_p = entry["coverage_p"]
        significant_cov = cov_p is not None and cov_p < drift["alpha"]
        if "rmse" in entry:  # a rule with a formula: its error and its rows' mean, not its accuracy
            failures += _number_failures(entry, label, drift["alpha"], max_drift)
        elif max_drift is not None:
            acc_p = entry["accuracy_p"]
            significant_acc = acc_p is not None and acc_p < drift["alpha"]
            before, now = entry["train_accuracy"], entry["accuracy"]
            if significant_acc and before is not None and now is not None and before - now > max_drift:
                failures.append(
                    f"rule drift gate failed: {label}: accuracy {before:.4f} -> {now:.4f}, a drop of "
                    f"{before - now:.4f} > {max_drift:.4f} (`max_rule_drift`; adjusted p = {acc_p:.2g})"
                )
        if max_drift is not None:
            change = entry["coverage"] - entry["train_coverage"]
            if significant_cov and abs(change) > max_drift:
                failures.append(
                    f"rule drift gate failed: {label}: coverage {entry['train_coverage']:.4f} -> "
                    f"{entry['coverage']:.4f}, a change of {change:+.4f} beyond ±{max_drift:.4f} "
                    f"(`max_rule_drift`; adjusted p = {cov_p:.2g})"
                )
        before, now = entry["train_coverage"], entry["coverage"]
        if max_ratio is not None and significant_cov and before > 0:
            ratio = now / before
            if ratio > max_ratio or ratio * max_ratio < 1:
                failures.append(
                    f"rule drift gate failed: {label}: coverage {before:.4f} -> {now:.4f}, {ratio:.2f} times its "
                    f"training share, beyond {max_ratio:g}x either way (`max_coverage_ratio`; adjusted p = {cov_p:.2g})"
                )
        if min_coverage is not None and significant_cov and entry["coverage"] < min_coverage * entry["train_coverage"]:
            what = "no longer fires" if entry["covered"] == 0 else f"covers {entry['coverage']:.4f}"
            failures.append(
                f"rule drift gate failed: {label}: {what}, below {min_coverage:g} x its training coverage "
                f"{entry['train_coverage']:.4f} (`min_rule_coverage`; adjusted p = {cov_p:.2g})"
            )
    return failures


def _number_failures(entry: dict[str, Any], label: str, alpha: float, max_drift: float | None) -> list[str]:
    """A rule with a formula fails ``max_drift`` where its RMSE rose by more than that share
    of its training RMSE, or its rows' mean moved by more than that many training RMSEs,
    each change beyond chance."""
    out: list[str] = []
    if max_drift is None:
        return out
    before, now, p = entry["train_rmse"], entry["rmse"], entry["rmse_p"]
    if p is not None and p < alpha and now is not None and before > 0 and now / before - 1 > max_drift:
        out.append(
            f"rule drift gate failed: {label}: rmse {before:.4g} -> {now:.4g}, {now / before - 1:.1%} above its "
            f"training rmse > {max_drift:.1%} (`max_rule_drift`; adjusted p = {p:.2g})"
        )
    before, now, p = entry["train_mean"], entry["mean"], entry["mean_p"]
    scale = entry["train_rmse"]
    if p is not None and p < alpha and now is not None and scale > 0 and abs(now - before) / scale > max_drift:
        out.append(
            f"rule drift gate failed: {label}: mean {before:.4g} -> {now:.4g}, {abs(now - before) / scale:.2f} "
            f"training rmses away > {max_drift:g} (`max_rule_drift`; adjusted p = {p:.2g})"
        )
    return out


UNCLASSIFIED = "unclassified"  # a cost table's column for rows no rule decides


COST_FORMS = (
    "a cost table has the true class in its first column and a column per predicted class, or three "
    "columns (true class, predicted class, cost) with a row per pair"
)


def cost_matrix(table: pl.DataFrame, classes: Sequence[str], label: str) -> dict[str, dict[str, float]]:
    """The costs of a table with the true class in its first column and one column per
    predicted class (and optionally ``unclassified``): true class -> predicted class -> cost.
    Every class the model knows must have a row and a column. The long form — three columns,
    true class, predicted class and cost, a row per pair, as most cost tables are kept — is
    read too (:func:`_widened`)."""
    if table.width < 2 or table.height == 0:
        raise InputError(f"{label}: {COST_FORMS}")
    if table.width == 3 and not set(classes) & set(table.columns[1:]):
        table = _widened(table, classes, label)
    truth = [str(v) for v in table.get_column(table.columns[0]).to_list()]
    missing_rows = [c for c in classes if c not in truth]
    missing_columns = [c for c in classes if c not in table.columns[1:]]
    if missing_rows or missing_columns:
        what = f"row for '{missing_rows[0]}'" if missing_rows else f"column for '{missing_columns[0]}'"
        raise InputError(f"{label}: the cost table has no {what} (classes: {', '.join(classes)})")
    out: dict[str, dict[str, float]] = {}
    for i, cls in enumerate(truth):
        row: dict[str, float] = {}
        for name in table.columns[1:]:
            value = table.get_column(name)[i]
            try:
                cost = float(value)
            except (TypeError, ValueError):
                cost = math.nan
            if not math.isfinite(cost):
                raise InputError(f"{label}: the cost of predicting '{name}' for '{cls}' is not a number: {value!r}")
            row[name] = cost
        out[cls] = row
    return out


def _widened(table: pl.DataFrame, classes: Sequence[str], label: str) -> pl.DataFrame:
    """A long cost table (true, predicted, cost rows) as the wide one: a missing pair of a
    class with itself costs 0 (a right prediction), any other missing pair is an error."""
    cells: dict[tuple[str, str], object] = {}
    for true, predicted, cost in table.rows():
        pair = (str(true), str(predicted))
        if pair in cells:
            raise InputError(f"{label}: the cost table gives (true '{pair[0]}', predicted '{pair[1]}') twice")
        cells[pair] = cost
    columns = [*classes, *([UNCLASSIFIED] if any(p == UNCLASSIFIED for _, p in cells) else [])]
    wide: dict[str, list[object]] = {"true": list(classes)}
    for predicted in columns:
        wide[predicted] = []
        for true in classes:
            if (true, predicted) not in cells and true != predicted:
                raise InputError(
                    f"{label}: the cost table has no row for (true '{true}', predicted '{predicted}'); {COST_FORMS}"
                )
            wide[predicted].append(cells.get((true, predicted), 0.0))
    return pl.DataFrame({k: [None if v is None else str(v) for v in vs] for k, vs in wide.items()})


def expected_cost(confusion: dict[str, Any], costs: dict[str, dict[str, float]]) -> float:
    """The mean cost per row: each (true, predicted) count of the confusion matrix times its
    cost; a row no rule decides costs its class's ``unclassified`` column, or else its
    costliest prediction."""
    total = rows = 0.0
    for cls, counts, undecided in zip(confusion["labels"], confusion["matrix"], confusion["unclassified"], strict=True):
        row = costs[cls]
        total += sum(float(n) * row[predicted] for predicted, n in zip(confusion["labels"], counts, strict=True))
        total += float(undecided) * row.get(UNCLASSIFIED, max(row[c] for c in confusion["labels"]))
        rows += float(sum(counts)) + float(undecided)
    return total / rows if rows else 0.0
