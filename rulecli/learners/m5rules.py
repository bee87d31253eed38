"""Model rules: rules that predict a number with a linear formula each, as M5Rules learns
them (Holmes, Hall & Frank 1999, "Generating rule sets from model trees"), from M5′ model
trees (Quinlan 1992; Wang & Witten 1997).

Separate and conquer: grow a regression tree on the rows not yet covered, fit, simplify
and prune its linear models and smooth its leaves' (:mod:`rulecli.search.model_tree`),
keep the leaf that covers the most rows as a rule — its path's conditions and its smoothed
formula — and take its rows away; when the pruned tree is a single leaf, its formula is the
default rule for the rows left. The rules form a decision list: the first matching rule's
formula predicts.

Each tree is grown by :mod:`rulecli.search.grow` (variance reduction, the same splits as a
regression tree, categorical and missing values included) to at most ``max_leaves`` leaves
of at least ``min_rows`` rows; the model-tree pruning then decides which splits stay.
Categorical columns appear in conditions only; formulas use numeric columns (dates
excluded), a missing value counting as the column's training mean.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import polars as pl

from rulecli import budget
from rulecli.counting.binned import Binned
from rulecli.dataset import Dataset
from rulecli.display import counted
from rulecli.errors import InputError
from rulecli.learners import Learner, Progress
from rulecli.learners.tree import dataset_columns, grow_tree, without
from rulecli.model.compile import PREDICTION, prediction_frame
from rulecli.model.core import (
    Committee,
    Condition,
    Formula,
    ModelInfo,
    NeighbourColumn,
    Neighbours,
    NumberRule,
    NumberStats,
    RuleRegression,
    Term,
    schema_units,
)
from rulecli.model.neighbours import left_out_corrections
from rulecli.model.tree import TreeNodes, leaf_rules, leaves_of, level_index, node_walker
from rulecli.params import Params, param
from rulecli.schema import Kind, plain_column
from rulecli.search.grow import GrowParams
from rulecli.search.model_tree import SMOOTHING, Standardised, fit_and_prune, node_grams, smoothed
from rulecli.stats import row_hash, sample_seed


@dataclass(frozen=True, kw_only=True)
class M5RulesParams(Params):
    min_rows: float = param(4.0, "Each rule's tree keeps at least this many rows in a leaf (M5: 4).", ge=1)
    max_leaves: int | None = param(
        None,
        "Leaves each tree grows before its model-tree pruning (default: 256, or 64 past 100,000 rows).",
        ge=2,
    )
    smoothing: bool = param(
        True, "Smooth each rule's formula with the models above its leaf (M5, k = 15).", negative="no-smoothing"
    )
    max_rules: int | None = param(
        None, "At most this many rules; a formula fitted on the rows left predicts the rest.", ge=1
    )
    max_bins: int = param(
        255, "Numeric features with more distinct values are cut at this many quantiles.", ge=2, le=65535
    )
    committees: int = param(
        1,
        "Learn this many lists, each making up for the last one's errors, and average them (Cubist's committees).",
        ge=1,
        le=100,
    )
    neighbours: int = param(
        0,
        "Correct each prediction by this many nearest training rows' errors (Cubist's instances; 0: off).",
        ge=0,
        le=9,
    )


def fit_m5rules(ds: Dataset, params: M5RulesParams, *, progress: Progress | None = None) -> RuleRegression | Committee:
    if not ds.regression:
        raise InputError(
            f"{ds.source}: m5rules predicts a number, but '{ds.target}' holds classes (`target_type=regression` "
            "reads a numeric target as a number)"
        )
    design, columns = Design.of(ds)
    y = ds.y.astype(np.float64)
    z = Standardised.of(columns, y, ds.weights)
    members: list[RuleRegression] = []
    target = y
    while len(members) < params.committees:
        if members:
            # Cubist's committees: the next member learns y + (y − the last member's
            # prediction), so that where one over-predicts the next leans the other way
            last = prediction_frame(members[-1], ds.frame.lazy()).collect().get_column(PREDICTION).to_numpy()
            target = 2.0 * y - last
        member_ds = ds if target is y else dataclasses.replace(ds, y=target)
        member_z = z if target is y else z.with_target(target, ds.weights)
        rules, default = _rule_list(member_ds, design, member_z, y, params, progress)
        members.append(RuleRegression(ds.target, tuple(rules), default, True, ModelInfo(algorithm="m5rules")))
        if len(members) < params.committees and budget.ran_out(
            f"m5rules: {counted(len(members), 'committee member')} learned"
        ):
            break
    training: dict[str, object] = {
        "rows": ds.n_rows,
        "rules": sum(len(m.rules) for m in members),
        "smoothing_k": SMOOTHING if params.smoothing else 0.0,
    }
    if params.committees > 1:
        training["committee"] = len(members)
    info = ModelInfo(algorithm="m5rules", params=params.record(), schema=ds.schema, training=training)
    if params.committees == 1 and not params.neighbours:
        return dataclasses.replace(members[0], info=info)
    model = Committee(ds.target, tuple(dataclasses.replace(m, info=info) for m in members), info)
    if not params.neighbours:
        return model
    predicted = prediction_frame(model, ds.frame.lazy()).collect().get_column(PREDICTION).to_numpy()
    nearest = _neighbours(ds, y, y - predicted, params.neighbours)
    if not nearest.columns or len(nearest.residuals) < 2:  # no row is nearer than another
        return model
    check = _neighbours_check(nearest)
    info = dataclasses.replace(
        info, training=training | {"stored_rows": len(nearest.residuals), "neighbours_check": check}
    )
    if check["kept"]:
        return dataclasses.replace(model, neighbours=nearest, info=info)
    if len(members) == 1:  # the rules alone, the check recorded
        return dataclasses.replace(members[0], info=info)
    return dataclasses.replace(model, info=info)


CHECKED_ROWS = 1000  # stored rows the correction is tried on, each left out of its own neighbours


def _neighbours_check(nb: Neighbours) -> dict[str, object]:
    """Whether the correction lowers the squared error of rows it has not seen, as Cubist
    checks whether instances help its rules: on up to CHECKED_ROWS stored rows (evenly
    spaced), each corrected by its nearest other stored rows, against the rules alone. On
    noisy targets the neighbours' errors are noise, and adding them made predictions worse
    (25 public tables: mean test R² 0.477 without, 0.436 with 5 neighbours unchecked)."""
    residuals = np.asarray(nb.residuals)
    rows = np.unique(np.linspace(0, residuals.size - 1, min(CHECKED_ROWS, residuals.size)).astype(np.int64))
    corrected = residuals[rows] - left_out_corrections(nb, rows)
    rules, with_neighbours = float(np.mean(residuals[rows] ** 2)), float(np.mean(corrected**2))
    return {
        "rows": int(rows.size),
        "rules_mse": rules,
        "corrected_mse": with_neighbours,
        "kept": with_neighbours < rules,
    }


# training rows a neighbour correction keeps (a hashed sample past it): every prediction
# measures its distance to each of them
STORED_ROWS = 10_000


def _neighbours(ds: Dataset, y: np.ndarray, residuals: np.ndarray, k: int) -> Neighbours:
    """The stored rows (all, or a hashed sample of STORED_ROWS), their residuals and the
    columns their distance reads: each number weighed by 1 / (5 × its standard deviation)
    and kept within its training range, each text column by 2 / its levels, as Cubist's
    distance weighs them; dates and constant columns are left out."""
    rows = np.arange(ds.n_rows)
    if rows.size > STORED_ROWS:
        rows = np.sort(np.argsort(row_hash(ds.ids, sample_seed(0)), kind="stable")[:STORED_ROWS])
    columns: list[NeighbourColumn] = []
    values: list[tuple[float | str | None, ...]] = []
    for feature in ds.schema.features:
        if feature.kind == Kind.NUMERIC and feature.unit is None:
            x = ds.numeric(feature.name, keep=False)
            present = x[~np.isnan(x)]
            sd = float(present.std()) if present.size else 0.0
            if sd <= 0:
                continue
            low, high = float(present.min()), float(present.max())
            columns.append(NeighbourColumn(feature.name, 1.0 / (5.0 * sd), True, float(present.mean()), low, high))
            values.append(tuple(pl.Series(x[rows]).fill_nan(None).to_list()))
        elif feature.kind == Kind.CATEGORICAL and len(feature.levels) > 1:
            columns.append(NeighbourColumn(feature.name, 2.0 / len(feature.levels), False))
            values.append(tuple(plain_column(ds.frame, feature.name).cast(pl.String).gather(rows).to_list()))
    bounds = (float(y.min()), float(y.max()))
    return Neighbours(min(k, rows.size), tuple(columns), tuple(values), tuple(residuals[rows].tolist()), bounds)


def _rule_list(
    ds: Dataset, design: Design, z: Standardised, truth: np.ndarray, params: M5RulesParams, progress: Progress | None
) -> tuple[list[NumberRule], NumberRule]:
    """One list of model rules for ``ds``'s target (standardised in ``z``), each rule's
    statistics counted against ``truth``."""
    grow = GrowParams(
        criterion="mse",
        max_leaf_nodes=params.max_leaves or (MANY_LEAVES if ds.n_rows <= LONG_TABLE else FEW_LEAVES),
        min_samples_leaf=params.min_rows,
        min_samples_split=2 * params.min_rows,
    )
    units = schema_units(ds.schema)
    codes_of = level_index(ds.schema, ds.schema.feature_names)  # the same levels for every tree
    left = np.arange(ds.n_rows)
    rules: list[NumberRule] = []
    while True:
        part = ds.subset(left)
        nodes = grow_tree(Binned.from_dataset(part, params.max_bins), part, grow, part.weights)
        reached = leaves_of(node_walker(nodes, codes_of), dataset_columns(part))
        models = fit_and_prune(nodes, node_grams(nodes, reached, left, z, ds.weights), design.columns_of)
        # the pruned tree's leaf of each row: the leaf above its grown leaf
        owner = _pruned_owner(nodes, models.leaf)
        mine = owner[reached]
        leaves = np.flatnonzero(models.leaf)
        last = leaves.size == 1 or (params.max_rules is not None and len(rules) >= params.max_rules)
        out_of_time = budget.ran_out(f"m5rules: {counted(len(rules), 'rule')} learned")
        if last or out_of_time:
            return rules, design.rule((), models.beta[0], z, ds.weights, left, truth)
        best = int(max(leaves.tolist(), key=lambda leaf: (models.rows[leaf], -leaf)))
        beta = smoothed(models, nodes, best) if params.smoothing else models.beta[best]
        covered = np.flatnonzero(mine == best)
        conditions = dict(leaf_rules(_pruned_nodes(nodes, models.leaf, models.removed), ds.schema.feature_names, units))
        rules.append(
            design.rule(conditions[_renumbered(models.removed, best)], beta, z, ds.weights, left[covered], truth)
        )
        left = np.delete(left, covered)
        if progress is not None:
            progress(len(rules))
        if left.size == 0:  # the last leaf covered everything left: its formula is the default
            last_rule = rules.pop()
            return rules, NumberRule((), last_rule.formula, last_rule.stats)


def _pruned_owner(nodes: TreeNodes, leaf: np.ndarray) -> np.ndarray:
    """Per grown node, the node that is its leaf in the pruned tree (the highest pruned
    ancestor, or itself)."""
    owner = np.arange(nodes.n_nodes)
    # depth-first numbering: a parent comes before its children
    for node in np.flatnonzero(nodes.feature >= 0).tolist():
        if leaf[node] or owner[node] != node:
            owner[nodes.left[node]] = owner[nodes.right[node]] = owner[node]
    return owner


def _pruned_nodes(nodes: TreeNodes, leaf: np.ndarray, removed: np.ndarray) -> TreeNodes:
    """The tree without the nodes below its pruned splits, those splits made leaves."""
    return without(nodes, removed, leaf & (nodes.feature >= 0))


def _renumbered(removed: np.ndarray, node: int) -> int:
    """A kept node's number once the removed ones are gone."""
    return int(node - removed[:node].sum())


# leaves a tree grows by default: more let the pruning find the pieces a target bends into
# (25 public tables: mean test R² 0.471 at 64, 0.477 at 256); past LONG_TABLE rows each leaf
# holds thousands of rows and fitting 256 leaves' models doubles the time (1M rows: 23 -> 49 s)
MANY_LEAVES, FEW_LEAVES, LONG_TABLE = 256, 64, 100_000
MAX_INDICATORS = 9  # a text column's indicators in formulas: cuts of its levels by mean target
FAINT = 0.01  # a term moving a rule's prediction by less than this share of its target's spread is dropped


@dataclass(frozen=True)
class Design:
    """The columns formulas are made of: each numeric feature (dates excluded), and each text
    feature as indicators ``x in {the first i levels}``, its levels ordered by their mean
    target (M5′'s synthetic binary attributes); ``columns_of``: each model feature's columns."""

    terms: list[tuple[str, tuple[str, ...] | None]]
    columns_of: list[list[int]]

    @classmethod
    def of(cls, ds: Dataset) -> tuple[Design, list[np.ndarray]]:
        """The design and its columns' values (NaN where missing)."""
        columns: list[np.ndarray] = []
        terms: list[tuple[str, tuple[str, ...] | None]] = []
        columns_of: list[list[int]] = []
        w = np.ones(ds.n_rows) if ds.weights is None else ds.weights
        for feature in ds.schema.features:
            mine: list[int] = []
            if feature.kind == Kind.NUMERIC and feature.unit is None:
                mine.append(len(columns))
                columns.append(ds.numeric(feature.name, keep=False))
                terms.append((feature.name, None))
            elif feature.kind == Kind.CATEGORICAL and len(feature.levels) > 1:
                k = len(feature.levels)
                codes = ds.codes(feature.name)
                rows = np.bincount(codes, weights=w, minlength=k + 1)[:k]
                sums = np.bincount(codes, weights=w * ds.y, minlength=k + 1)[:k]
                means = np.where(rows > 0, sums / np.where(rows > 0, rows, 1.0), np.inf)
                order = np.lexsort((np.arange(k), means))
                share = np.cumsum(rows[order]) / max(rows.sum(), 1e-300)
                cuts = np.arange(1, k)
                if cuts.size > MAX_INDICATORS:  # cuts at even shares of the rows
                    cuts = np.unique(np.searchsorted(share, np.linspace(0, 1, MAX_INDICATORS + 2)[1:-1]) + 1)
                    cuts = cuts[(cuts >= 1) & (cuts < k)]
                rank = np.full(k + 1, -1, dtype=np.int64)
                rank[order] = np.arange(k)
                row_rank = rank[codes]
                for cut in cuts.tolist():
                    mine.append(len(columns))
                    columns.append(np.where(row_rank < 0, np.nan, (row_rank < cut).astype(np.float64)))
                    terms.append((feature.name, tuple(sorted(feature.levels[i] for i in order[:cut].tolist()))))
            columns_of.append(mine)
        return cls(terms, columns_of), columns

    def rule(
        self,
        conditions: tuple[Condition, ...],
        beta: np.ndarray,
        z: Standardised,
        w: np.ndarray | None,
        rows: np.ndarray,
        truth: np.ndarray,
    ) -> NumberRule:
        """The rule of a standardised model for ``rows``: its formula, and that formula's
        statistics on them against ``truth`` (the target, where ``z`` holds another)."""
        beta = _folded(beta, z, rows)
        return NumberRule(conditions, self.formula(beta, z, rows), _stats(z, w, rows, beta, truth))

    def formula(self, beta: np.ndarray, z: Standardised, rows: np.ndarray) -> Formula:
        """A standardised model as a formula over the raw columns,
        y = my + sy (b0 + Σ b_j (x_j − m_j) / s_j), bounded by the target on ``rows``."""
        my, sy = z.mean[-1], z.scale[-1]
        slopes = beta[1:] * sy / z.scale[:-1]
        intercept = my + sy * beta[0] - (float(slopes @ z.mean[:-1]) if slopes.size else 0.0)
        terms = tuple(
            Term(name, float(slope), float(z.mean[j]), levels)
            for j, ((name, levels), slope) in enumerate(zip(self.terms, slopes, strict=True))
            if slope
        )
        held = my + sy * z.y[rows]
        bounds = (float(held.min()), float(held.max())) if rows.size else None
        return Formula(float(intercept), terms, bounds)


def _folded(beta: np.ndarray, z: Standardised, rows: np.ndarray) -> np.ndarray:
    """``beta`` with each term that moves the prediction by under 1 % of the target's spread
    on ``rows`` (smoothing brings in its ancestors' terms) folded into the intercept."""
    beta = beta.copy()
    if rows.size:
        x = z.x[rows]
        spread = max(float(z.y[rows].std()), 1e-12)
        faint = np.flatnonzero((beta[1:] != 0) & (np.abs(beta[1:]) * x.std(axis=0) < FAINT * spread))
        beta[0] += float(beta[1 + faint] @ x[:, faint].mean(axis=0))
        beta[1 + faint] = 0.0
    return beta


def _stats(
    z: Standardised, weights: np.ndarray | None, rows: np.ndarray, beta: np.ndarray, truth: np.ndarray
) -> NumberStats:
    """The covered rows (by weight), the ``truth``'s mean and spread on them, and the error
    against it of the formula ``beta`` as written (bounded by the rows' least and greatest
    value of ``z``'s target)."""
    w = np.ones(rows.size) if weights is None else weights[rows]
    total = float(w.sum())
    if total <= 0 or rows.size == 0:
        return NumberStats(0 if weights is None else total, float(z.mean[-1]), 0.0, 0.0)
    held = z.y[rows]
    sy, my = z.scale[-1], z.mean[-1]
    predicted = my + sy * np.clip(beta[0] + z.x[rows] @ beta[1:], held.min(), held.max())
    y = truth[rows]
    mean = float(w @ y / total)
    spread = float(np.sqrt(w @ (y - mean) ** 2 / total))
    rmse = float(np.sqrt(w @ (y - predicted) ** 2 / total))
    covered: int | float = int(total) if weights is None else total
    return NumberStats(covered, mean, spread, rmse)


def _summary(model: RuleRegression | Committee) -> str:
    if isinstance(model, Committee):
        rules = sum(len(m.rules) for m in model.members)
        return f"m5rules: a committee of {len(model.members)} lists, {counted(rules, 'rule')} and a default each"
    return f"m5rules: {counted(len(model.rules), 'rule')} and a default, each with a formula"


LEARNER = Learner(
    name="m5rules",
    params=M5RulesParams,
    fit=fit_m5rules,
    summary=_summary,
    help="Learn rules that predict a number, each with a linear formula (M5Rules: separate and conquer over "
    "pruned, smoothed model trees); an ordered list.",
    examples=(
        "rulecli m5rules sample_data/penguins.csv -y body_mass_g -o mass.json",
        "rulecli m5rules sample_data/penguins.csv -y body_mass_g --max-rules 3 --no-smoothing",
    ),
    numeric_target=True,
    class_target=False,
)
