"""Every feature as a few cells: its levels, or its intervals after discretising, then missing.

Learners that work on discrete values (reduct's decision table, BRL's items) share this
view: per feature the code of each row's cell and the condition that describes each cell,
the last cell being "is missing"; numeric features carry the cuts in their schema entry so
the model can state them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from rulecli.dataset import Dataset
from rulecli.discretize import compute_cuts, interval_codes, interval_counts, value_counts
from rulecli.model.core import Condition, Op, interval_conditions
from rulecli.schema import Feature, Kind
from rulecli.stats import class_counts_by_value, distinct_values


@dataclass(frozen=True)
class FeatureCells:
    feature: Feature  # numeric features with their cuts
    codes: np.ndarray  # cell per row; the last cell (n_cells - 1) is missing
    n_cells: int

    @cached_property
    def conditions(self) -> tuple[Condition, ...]:
        """Each cell's condition, built when first asked (see :func:`cell_conditions`)."""
        return cell_conditions(self.feature)


def cell_conditions(feature: Feature) -> tuple[Condition, ...]:
    """Each cell's condition: its level or interval, then missing. Built only where asked:
    OneR scores every feature by its cells' counts, and a million-row feature can have
    hundreds of thousands of intervals whose conditions only the chosen feature needs."""
    if feature.kind == Kind.CATEGORICAL:
        values = [Condition(feature.name, Op.EQ, v) for v in feature.levels]
    else:
        assert feature.cuts is not None
        values = interval_conditions(feature.name, feature.cuts)
    return (*values, Condition(feature.name, Op.MISSING))


def feature_cells(ds: Dataset, method: str, bins: int) -> list[FeatureCells]:
    """Each feature of ``ds`` as cells; numeric ones cut by ``method`` (supervised ones use the class)."""
    return [cells_of(ds, feature, method, bins) for feature in ds.schema.features]


def cells_of(ds: Dataset, feature: Feature, method: str, bins: int) -> FeatureCells:
    """One feature as cells (see :func:`feature_cells`)."""
    if feature.kind == Kind.CATEGORICAL:
        return FeatureCells(feature, ds.codes(feature.name), len(feature.levels) + 1)
    x = ds.numeric(feature.name)
    n_classes = len(ds.classes)
    distinct, counted = None, None
    if method == "min-bucket":  # its cuts sort the values: their order also numbers each row's interval
        present = ~np.isnan(x)
        distinct = distinct_values(x[present])
        w = None if ds.weights is None else ds.weights[present]
        counted = value_counts(distinct, ds.y[present], n_classes, w)
    cuts = compute_cuts(
        feature.name, x, method, bins=bins, y=ds.y, n_classes=n_classes, weights=ds.weights, counted=counted
    )
    return FeatureCells(replace(feature, cuts=cuts), interval_codes(cuts, x, distinct), len(cuts.edges) + 2)


def class_table(ds: Dataset, feature: Feature, method: str, bins: int) -> tuple[Feature, np.ndarray]:
    """The feature (numeric ones with their cuts) and its cells' rows of each class, counted
    by weight: one row per cell of :func:`cells_of`, in its order. What OneR scores each
    feature by."""
    n_classes = len(ds.classes)
    if feature.kind == Kind.NUMERIC and method == "min-bucket" and ds.weights is None:
        # whole counts do not depend on the order they are added in: they come from each
        # distinct value's counts, sorted class by class, without a cell number per row
        x = ds.numeric(feature.name)
        values, counts, missing = class_counts_by_value(x, ds.y, n_classes, ds.class_groups)
        cuts = compute_cuts(feature.name, x, method, bins=bins, y=ds.y, n_classes=n_classes, counted=(values, counts))
        table = np.vstack([interval_counts(cuts, values, counts), missing])
        return replace(feature, cuts=cuts), table
    cells = cells_of(ds, feature, method, bins)
    flat = np.bincount(cells.codes * n_classes + ds.y, weights=ds.weights, minlength=cells.n_cells * n_classes)
    return cells.feature, flat.reshape(cells.n_cells, n_classes)
