"""Every feature as a few cells: its levels, or its intervals after discretising, then missing.

Learners that work on discrete values (reduct's decision table, BRL's items) share this
view: per feature the code of each row's cell and the condition that describes each cell,
the last cell being "is missing"; numeric features carry the cuts in their schema entry so
the model can state them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from rulecli.dataset import Dataset
from rulecli.discretize import compute_cuts, interval_codes
from rulecli.model.core import Condition, Op, interval_conditions
from rulecli.schema import Feature, Kind
from rulecli.stats import distinct_values


@dataclass(frozen=True)
class FeatureCells:
    feature: Feature  # numeric features with their cuts
    codes: np.ndarray  # cell per row; the last cell (n_cells - 1) is missing
    n_cells: int

    @cached_property
    def conditions(self) -> tuple[Condition, ...]:
        """Each cell's condition, built when first asked: OneR scores every feature by its
        cells' counts, and a million-row feature can have hundreds of thousands of intervals
        whose conditions only the chosen feature needs."""
        f = self.feature
        if f.kind == Kind.CATEGORICAL:
            values = [Condition(f.name, Op.EQ, v) for v in f.levels]
        else:
            assert f.cuts is not None
            values = interval_conditions(f.name, f.cuts)
        return (*values, Condition(f.name, Op.MISSING))


def feature_cells(ds: Dataset, method: str, bins: int) -> list[FeatureCells]:
    """Each feature of ``ds`` as cells; numeric ones cut by ``method`` (supervised ones use the class)."""
    return [cells_of(ds, feature, method, bins) for feature in ds.schema.features]


def cells_of(ds: Dataset, feature: Feature, method: str, bins: int) -> FeatureCells:
    """One feature as cells (see :func:`feature_cells`)."""
    if feature.kind == Kind.CATEGORICAL:
        return FeatureCells(feature, ds.codes(feature.name), len(feature.levels) + 1)
    x = ds.numeric(feature.name)
    # the minimum-bucket cuts sort the values: their order also numbers each row's interval
    distinct = distinct_values(x[~np.isnan(x)]) if method == "min-bucket" else None
    cuts = compute_cuts(
        feature.name, x, method, bins=bins, y=ds.y, n_classes=len(ds.classes), weights=ds.weights, distinct=distinct
    )
    cut = Feature(feature.name, feature.kind, feature.levels, cuts)
    return FeatureCells(cut, interval_codes(cuts, x, distinct), len(cuts.edges) + 2)
