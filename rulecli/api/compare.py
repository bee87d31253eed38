"""The API's comparison of two models: structure, and what changes on a table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from rulecli import io
from rulecli.api.scoring import read_for_both, weight_expr
from rulecli.errors import ParamError
from rulecli.held_out import truth_expr
from rulecli.metrics import (
    leaf_reports,
    rule_reports,
)
from rulecli.model.compile import (
    DEFAULT_RULE,
    Predictor,
    prediction_frame,
)
from rulecli.model.diff import ModelDiff
from rulecli.model.diff import diff as model_diff
from rulecli.model.tree import Forest, Tree, predicts_number

_EXAMPLES = 5  # changed rows listed in the report (number, old and new prediction)


def diff(
    old: Predictor,
    new: Predictor,
    data: str | Path | pl.DataFrame | None = None,
    *,
    changed_rows: str | None = None,
    weights: str | None = None,
    **read: Any,
) -> tuple[ModelDiff, dict[str, Any] | None]:
    """``old`` against ``new`` rule by rule (:mod:`rulecli.model.diff`); with ``data``, each
    rule's coverage and accuracy there under both models (rows counted by the column
    ``weights``, if given) and the rows whose prediction changes (all of them written to
    ``changed_rows``, if given)."""
    if weights is not None and data is None:
        raise ParamError("`weights` needs `data`: the rules are counted on the rows of a table")
    if old.target != new.target:
        raise ParamError(f"the models predict different targets ('{old.target}', '{new.target}'): nothing to compare")
    if changed_rows is not None:
        if data is None:
            raise ParamError("`changed_rows` needs `data`: the rows whose prediction changes are rows of a table")
        io.table_output(changed_rows)
    structure = model_diff(old, new)
    if data is None:
        return structure, None
    tables = read_for_both(old, new, data, read)
    table, label = tables[0]
    before = prediction_frame(old, table.lazy()).collect().get_column("prediction")
    after = prediction_frame(new, tables[1][0].lazy()).collect().get_column("prediction")
    moved = before.ne_missing(after)
    rows = table.with_row_index("row", offset=1).filter(moved)
    report: dict[str, Any] = {
        "rows": table.height,
        "changed": int(moved.sum()),
        "sample": [
            {"row": int(r), "old": o, "new": n}
            for r, o, n in zip(
                rows.get_column("row").head(_EXAMPLES).to_list(),
                before.filter(moved).head(_EXAMPLES).to_list(),
                after.filter(moved).head(_EXAMPLES).to_list(),
                strict=True,
            )
        ],
    }
    has_truth = old.target in table.columns
    weight = None if weights is None else weight_expr(table.lazy(), weights, label)
    report["old_rules"] = _rule_stats_on(old, table, has_truth, weight)
    report["new_rules"] = _rule_stats_on(new, table, has_truth, weight)
    if changed_rows is not None:
        written = table.filter(moved).with_columns(
            before.filter(moved).alias("old_prediction"), after.filter(moved).alias("new_prediction")
        )
        io.write_table(written, changed_rows)
    return structure, report


def _rule_stats_on(
    model: Predictor, table: pl.DataFrame, has_truth: bool, weight: pl.Expr | None = None
) -> list[dict[str, Any]]:
    """Per rule (in the model's order, the default left out): rows it decides on ``table``
    (matches, for a rule set), and of those how many it gets right when the table holds the
    truth — ``evaluate``'s per-rule counts (:func:`rulecli.metrics.rule_reports`), rows
    counted by ``weight``."""
    if isinstance(model, Forest) or predicts_number(model):
        return []
    # without the truth every row still counts as covered: a stand-in label no class carries
    truth = truth_expr(model) if has_truth else pl.lit("\x00no truth", dtype=pl.String)
    lf = table.lazy()
    reports = (
        leaf_reports(model, lf, truth, weight) if isinstance(model, Tree) else rule_reports(model, lf, truth, weight)
    )
    out = []
    for r in (r for r in reports if r.rule != DEFAULT_RULE):
        entry: dict[str, Any] = {"covered": r.n_covered}
        if has_truth:
            entry |= {"correct": r.n_correct, "accuracy": r.n_correct / r.n_covered if r.n_covered else None}
        out.append(entry)
    return out
