"""Training data encoded once for the covering learners: arrays, sorted orders, masks.

Every covering learner asks the same question many times — for the rows still in play,
how many of each class would each candidate condition keep? — so the data is turned
into NumPy arrays once: numeric features as float64 (NaN = missing) plus the rank of each
value among the feature's distinct values, categorical features as level codes
(``len(levels)`` = missing), the class as codes ``0..K-1``. Row subsets are index arrays;
conditions become boolean masks; the class counts of every threshold of a feature over a
subset are one ``bincount`` of ranks and a cumulative sum — no sorting per subset.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from rulecli.dataset import Dataset
from rulecli.model.core import Closed, Condition, Op
from rulecli.model.ops import OPS, Shape, ends
from rulecli.schema import Kind


@dataclass(frozen=True)
class Encoded:
    names: tuple[str, ...]
    kinds: tuple[Kind, ...]
    levels: tuple[tuple[str, ...], ...]
    columns: tuple[np.ndarray, ...]  # float64 (numeric) or int64 codes (categorical)
    distinct: tuple[np.ndarray | None, ...]  # sorted distinct values (numeric only)
    ranks: tuple[np.ndarray | None, ...]  # index into distinct; len(distinct) = missing
    # every numeric feature's ranks side by side, each shifted into its own slot range, so
    # the counts of all numeric features over a subset are one gather and one bincount
    rank_matrix: np.ndarray  # (n_rows, n_numeric) int64
    rank_offsets: np.ndarray  # (n_numeric + 1,) slot range of each numeric feature
    numeric_features: tuple[int, ...]
    y: np.ndarray
    classes: tuple[str, ...]
    level_codes: tuple[dict[str, int], ...] = ()  # per feature: level -> code (categorical only)
    # each row's weight, or None (every row counts once): every count below is weighted by it
    w: np.ndarray | None = None

    @classmethod
    def from_dataset(cls, ds: Dataset) -> Encoded:
        columns, distinct, ranks = [], [], []
        for feature in ds.schema.features:
            if feature.kind == Kind.NUMERIC:
                x = ds.numeric(feature.name)
                missing = np.isnan(x)
                values, inverse = np.unique(x[~missing], return_inverse=True)
                rank = np.full(x.size, values.size, dtype=np.int64)
                rank[~missing] = inverse
                columns.append(x)
                distinct.append(values)
                ranks.append(rank)
            else:
                columns.append(ds.codes(feature.name))
                distinct.append(None)
                ranks.append(None)
        numeric_features = tuple(j for j, r in enumerate(ranks) if r is not None)
        sizes = [distinct[j].size + 1 for j in numeric_features]  # type: ignore[union-attr]
        offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        matrix = np.empty((ds.n_rows, len(numeric_features)), dtype=np.int64)
        for col, j in enumerate(numeric_features):
            matrix[:, col] = ranks[j] + offsets[col]  # type: ignore[operator]
        return cls(
            names=ds.schema.feature_names,
            kinds=tuple(f.kind for f in ds.schema.features),
            levels=tuple(f.levels for f in ds.schema.features),
            columns=tuple(columns),
            distinct=tuple(distinct),
            ranks=tuple(ranks),
            rank_matrix=matrix,
            rank_offsets=offsets,
            numeric_features=numeric_features,
            level_codes=tuple({level: code for code, level in enumerate(f.levels)} for f in ds.schema.features),
            y=ds.y,
            classes=ds.classes,
            w=ds.weights,
        )

    @property
    def n_rows(self) -> int:
        return int(self.y.size)

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    def class_counts(self, rows: np.ndarray) -> np.ndarray:
        """Rows of each class among ``rows``, each counted by its weight."""
        w = None if self.w is None else self.w[rows]
        return np.bincount(self.y[rows], weights=w, minlength=self.n_classes)

    def total(self, rows: np.ndarray | None = None, where: np.ndarray | None = None) -> float:
        """How many rows ``rows`` (indices; all rows if None) are — those ``where`` (a mask
        over them) holds, if given — each counted by its weight."""
        if self.w is None:
            size = self.n_rows if rows is None else rows.size
            return float(size if where is None else np.count_nonzero(where))
        w = self.w if rows is None else self.w[rows]
        return float(w.sum() if where is None else w[where].sum())

    def index(self, name: str) -> int:
        return self.names.index(name)

    def missing_mask(self, j: int) -> np.ndarray:
        """Rows whose value of feature ``j`` is missing (computed once per feature)."""
        return self._missing[j]

    @functools.cached_property
    def _missing(self) -> tuple[np.ndarray, ...]:
        return tuple(
            column == len(levels) if kind == Kind.CATEGORICAL else np.isnan(column)
            for column, levels, kind in zip(self.columns, self.levels, self.kinds, strict=True)
        )

    def condition_mask(self, cond: Condition) -> np.ndarray:
        """Rows satisfying ``cond``; a missing value satisfies only ``is missing``."""
        j = self.index(cond.column)
        column = self.columns[j]
        spec = OPS[cond.op]
        categorical = self.kinds[j] == Kind.CATEGORICAL
        missing = self.missing_mask(j)
        if spec.shape == Shape.MISSING:
            return ~missing if spec.negated else missing
        if categorical:
            lookup = self.level_codes[j]
            values = cond.value if isinstance(cond.value, tuple) else (cond.value,)
            inside = np.isin(column, [lookup[str(v)] for v in values if str(v) in lookup])
            return ~inside & ~missing if spec.negated or cond.op == Op.NE else inside
        with np.errstate(invalid="ignore"):
            if spec.shape == Shape.INTERVAL:
                assert isinstance(cond.value, tuple)
                low, high = float(cond.value[0]), float(cond.value[1])
                with_low, with_high = ends(Closed(cond.closed))
                left = column >= low if with_low else column > low
                right = column <= high if with_high else column < high
                return left & right
            assert spec.apply is not None
            return spec.apply(column, float(cond.value)) & ~missing  # type: ignore[arg-type]

    def rule_mask(self, conditions: tuple[Condition, ...], rows: np.ndarray | None = None) -> np.ndarray:
        """Rows (of ``rows``, or of all rows) satisfying every condition."""
        mask = np.ones(self.n_rows if rows is None else rows.size, dtype=bool)
        for cond in conditions:
            full = self.condition_mask(cond)
            mask &= full if rows is None else full[rows]
        return mask


def across(a: np.ndarray, ufunc: np.ufunc) -> np.ndarray:
    """``ufunc`` over each row of an (m, K) array, a column at a time: NumPy reduces a short
    last axis several times slower. The result is the same: integers and maxima in any
    order, and NumPy adds fewer than 8 floats in order too."""
    if a.shape[1] == 0 or (a.shape[1] >= 8 and a.dtype.kind == "f" and ufunc is np.add):
        return ufunc.reduce(a, axis=1)
    out = a[:, 0].copy()
    for c in range(1, a.shape[1]):
        ufunc(out, a[:, c], out=out)
    return out


@dataclass(frozen=True)
class NumericCandidates:
    """For each distinct value ``v`` of a feature among some rows, the class counts of the
    rows with ``x <= v`` and of those with ``x >= v`` (missing values in neither), and the
    class counts of the rows where the feature is missing."""

    values: np.ndarray  # (G,)
    at_most: np.ndarray  # (G, K)
    at_least: np.ndarray  # (G, K)
    missing: np.ndarray  # (K,)


def numeric_candidates(
    enc: Encoded, rows: np.ndarray, row_labels: np.ndarray, n_labels: int
) -> dict[int, NumericCandidates]:
    """Threshold candidates of every numeric feature over ``rows``: one gather, one bincount.

    Candidates are the distinct values present among ``rows``; ``row_labels`` gives the
    label code (the class, or positive/negative) of each of ``rows``.
    """
    slots = int(enc.rank_offsets[-1])
    keys = enc.rank_matrix[rows] + (row_labels * slots)[:, None]
    weights = None if enc.w is None else np.repeat(enc.w[rows], keys.shape[1])
    counts = np.bincount(keys.ravel(), weights=weights, minlength=n_labels * slots).reshape(n_labels, slots)
    missing = counts[:, enc.rank_offsets[1:] - 1]  # each feature's last slot holds its missing values
    totals = counts.sum(axis=0)
    totals[enc.rank_offsets[1:] - 1] = 0
    present = np.flatnonzero(totals)
    present_counts = counts[:, present]
    cum = np.cumsum(present_counts, axis=1)
    # where each feature's present slots start and end among all present slots
    bounds = np.searchsorted(present, enc.rank_offsets)
    out = {}
    for col, j in enumerate(enc.numeric_features):
        start, stop = int(bounds[col]), int(bounds[col + 1])
        values = enc.distinct[j]
        assert values is not None
        base = cum[:, start - 1 : start] if start > 0 else 0
        feature_cum = cum[:, start:stop] - base
        total = feature_cum[:, -1:] if stop > start else np.zeros((n_labels, 1), dtype=counts.dtype)
        at_least = total - feature_cum + present_counts[:, start:stop]
        out[j] = NumericCandidates(
            values[present[start:stop] - enc.rank_offsets[col]], feature_cum.T, at_least.T, missing[:, col]
        )
    return out


def categorical_candidates(enc: Encoded, j: int, rows: np.ndarray, row_labels: np.ndarray, n_labels: int) -> np.ndarray:
    """Label counts per level of categorical feature ``j`` over ``rows``, one row per level
    and a last row for the missing values."""
    n_levels = len(enc.levels[j])
    codes = enc.columns[j][rows]
    weights = None if enc.w is None else enc.w[rows]
    flat = np.bincount(codes * n_labels + row_labels, weights=weights, minlength=(n_levels + 1) * n_labels)
    return flat.reshape(n_levels + 1, n_labels)
