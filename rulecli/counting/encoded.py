"""Training data encoded once for the covering learners: arrays, sorted orders, masks.

Every covering learner asks the same question many times — for the rows still in play,
how many of each class would each candidate condition keep? — so the data is turned
into NumPy arrays once: numeric features as the rank of each value among the feature's
distinct values, categorical features as level codes (``len(levels)`` = missing), the
class as codes ``0..K-1``. Row subsets are index arrays; conditions become boolean masks,
a range of ranks being a range of values; the class counts of every threshold of a
feature over a subset are one ``bincount`` of ranks and a cumulative sum — no sorting per
subset.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from rulecli.dataset import Dataset
from rulecli.model.core import Closed, Condition, Op
from rulecli.model.ops import OPS, Shape, ends
from rulecli.schema import Feature, Kind
from rulecli.stats import distinct_values


@dataclass(frozen=True)
class Encoded:
    names: tuple[str, ...]
    kinds: tuple[Kind, ...]
    levels: tuple[tuple[str, ...], ...]
    distinct: tuple[np.ndarray | None, ...]  # sorted distinct values (numeric only)
    # every feature's values as slots, a feature a row — numeric features first (the
    # value's rank among the feature's distinct values, len(distinct) for a missing one),
    # then categorical ones (the level code, len(levels) for a missing one) — each feature
    # given a range of its own in the counts by its offset, so that the label counts of
    # every feature over a subset are one pass over it (:func:`label_counts`).
    # Feature-major, so that a feature's counts read one short array, and in the narrowest
    # unsigned type that holds every feature's slots: a table of at most 65,535 distinct
    # values a feature is read as uint16 (RIPPER's label counts of 52,000 of 700,000 rows,
    # 20 features: 5.4 -> 3.1 ms against int32). Conditions are tested on them too: the
    # table's values as float64 beside them were a fifth of RIPPER's memory on 700,000 rows
    slots: np.ndarray  # (len(slot_features), n_rows) uint8, uint16, uint32 or uint64
    slot_offsets: np.ndarray  # (len(slot_features) + 1,) where each feature's range of counts starts
    slot_features: tuple[int, ...]  # the feature of each row of slots
    numeric_features: tuple[int, ...]
    y: np.ndarray
    classes: tuple[str, ...]
    level_codes: tuple[dict[str, int], ...] = ()  # per feature: level -> code (categorical only)
    # each row's weight, or None (every row counts once): every count below is weighted by it
    w: np.ndarray | None = None
    # the least value of each numeric slot where features are binned (``distinct`` then holds
    # each bin's greatest value); None: each slot is one value
    lows: np.ndarray | None = None

    @classmethod
    def from_dataset(cls, ds: Dataset, max_values: int | None = None) -> Encoded:
        """``ds`` encoded; a numeric feature with more than ``max_values`` distinct values
        (if given) is cut into that many bins of about equal rows, each a slot: its rules'
        thresholds are then the bins' greatest values (``x <= v``) and least (``x >= v``),
        still values of the data, and a count costs a slot per bin, not per value."""
        features = ds.schema.features
        numeric_features, slot_features = slot_layout(features)
        # each feature's slots are written as soon as they are known (a table's worth of
        # int64 ranks held for every feature at once was the peak of a long table's memory),
        # narrowed once every feature's count of slots is known
        slots = np.empty((len(slot_features), ds.n_rows), dtype=np.uint64 if ds.n_rows >= 1 << 32 else np.uint32)
        distinct: list[np.ndarray | None] = [None] * len(features)
        lows: list[np.ndarray] = []
        sizes = []
        for row, j in enumerate(slot_features):
            feature = features[j]
            if feature.kind == Kind.NUMERIC:
                x = ds.numeric(feature.name, keep=False)
                missing = np.isnan(x)
                values, inverse = distinct_values(x[~missing])
                low = values
                if max_values is not None and values.size > max_values:
                    values, low, inverse = _binned(values, inverse, max_values)
                slots[row, missing] = values.size
                slots[row, ~missing] = inverse
                distinct[j] = values
                lows.append(np.append(low, np.nan))
                sizes.append(values.size + 1)
            else:
                slots[row] = ds.codes(feature.name, keep=False)
                sizes.append(len(feature.levels) + 1)
        offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        narrow = next(
            t for t in (np.uint8, np.uint16, np.uint32, np.uint64) if max(sizes, default=0) <= 1 + np.iinfo(t).max
        )
        return cls(
            names=ds.schema.feature_names,
            kinds=tuple(f.kind for f in ds.schema.features),
            levels=tuple(f.levels for f in ds.schema.features),
            distinct=tuple(distinct),
            slots=slots.astype(narrow, copy=False),
            slot_offsets=offsets,
            slot_features=slot_features,
            numeric_features=numeric_features,
            level_codes=level_codes(features),
            y=ds.y,
            classes=ds.classes,
            w=ds.weights,
            lows=np.concatenate(lows) if max_values is not None and lows else None,
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

    def _line(self, j: int) -> tuple[np.ndarray, int]:
        """Feature ``j``'s row of slots and its count of values (its last slot, numbered so,
        holds the missing values)."""
        row = self.slot_row[j]
        return self.slots[row], int(self.slot_offsets[row + 1] - self.slot_offsets[row]) - 1

    def values(self, j: int) -> np.ndarray:
        """Feature ``j``'s values over all rows, read back from its slots: float64 with NaN
        for a missing one (numeric; -0.0 reads as 0.0, which compares alike), or level codes
        with ``len(levels)`` for a missing one (categorical)."""
        line, _ = self._line(j)
        if self.kinds[j] == Kind.CATEGORICAL:
            return line.astype(np.int64)
        values = self.distinct[j]
        assert values is not None
        return np.append(values, np.nan)[line]

    def missing_mask(self, j: int) -> np.ndarray:
        """Rows whose value of feature ``j`` is missing."""
        line, size = self._line(j)
        return line == size

    def has_missing(self, j: int) -> bool:
        return bool(self.missing_mask(j).any())

    def distinct_count(self, j: int) -> int:
        """How many distinct values numeric feature ``j`` takes."""
        values = self.distinct[j]
        assert values is not None
        return int(values.size)

    @functools.cached_property
    def slot_row(self) -> dict[int, int]:
        """Each feature's row of ``slots`` (the numeric features' rows are their order)."""
        return {j: row for row, j in enumerate(self.slot_features)}

    @functools.cached_property
    def slot_values(self) -> np.ndarray:
        """The value of each numeric slot (NaN for a feature's missing-value slot)."""
        parts = [np.append(self.distinct[j], np.nan) for j in self.numeric_features]
        return np.concatenate(parts) if parts else np.zeros(0)

    @property
    def slot_lows(self) -> np.ndarray:
        """The least value of each numeric slot: its value, where a slot is one value (a
        bin's or an engine's slot may be a range of values, ``slot_values`` then holding the
        greatest)."""
        return self.slot_values if self.lows is None else self.lows

    def count_labels(self, rows: np.ndarray, row_labels: np.ndarray, n_labels: int) -> np.ndarray:
        """:func:`label_counts` of these arrays (an engine counts where its rows are)."""
        n_slots = int(self.slot_offsets[-1])
        kernel = compiled_kernel(rows.size * self.slots.shape[0])
        if kernel is not None:
            return kernel.label_counts(self.slots, self.slot_offsets, rows, row_labels, n_labels, n_slots, self.w)
        keys = self.slots[:, rows] + self.slot_offsets[:-1, None] + row_labels.astype(np.int64) * n_slots
        weights = None if self.w is None else np.tile(self.w[rows], self.slots.shape[0])
        return np.bincount(keys.ravel(), weights=weights, minlength=n_labels * n_slots).reshape(n_labels, n_slots)

    def count_classes(self, row_sets: list[np.ndarray]) -> list[np.ndarray]:
        """The (n_classes, n_slots) class counts of each of several row sets (an engine counts
        them in one pass)."""
        return [self.count_labels(rows, self.y[rows], self.n_classes) for rows in row_sets]

    def slot_range(self, cond: Condition) -> tuple[int, int] | None:
        """The slots of its feature where ``cond`` holds, [a, b), where they are one range (a
        numeric feature's values in order, then its missing values' slot; a categorical
        feature's levels in code order): every test but '!=' and a set of levels."""
        j = self.index(cond.column)
        _, size = self._line(j)
        spec = OPS[cond.op]
        if spec.shape == Shape.MISSING:
            return (0, size) if spec.negated else (size, size + 1)
        if self.kinds[j] == Kind.CATEGORICAL:
            if cond.op != Op.EQ:
                return None
            code = self.level_codes[j].get(str(cond.value))
            return (0, 0) if code is None else (code, code + 1)
        values = self.distinct[j]
        assert values is not None

        def rank(v: float, equal_below: bool) -> int:
            """How many values lie below ``v`` (and, with ``equal_below``, at it)."""
            return int(np.searchsorted(values, v, side="right" if equal_below else "left"))

        if spec.shape == Shape.INTERVAL:
            assert isinstance(cond.value, tuple)
            low, high = float(cond.value[0]), float(cond.value[1])
            with_low, with_high = ends(Closed(cond.closed))
            a, b = rank(low, not with_low), rank(high, with_high)
            return a, max(a, b)  # (v, v) open: empty
        v = float(cond.value)  # type: ignore[arg-type]  # finite: a condition holds no NaN
        below, at_most = rank(v, False), rank(v, True)
        ranges = {
            Op.LE: (0, at_most),
            Op.LT: (0, below),
            Op.GE: (below, size),
            Op.GT: (at_most, size),
            Op.EQ: (below, at_most),
        }
        return ranges.get(cond.op)

    def condition_mask(self, cond: Condition, rows: np.ndarray | None = None) -> np.ndarray:
        """Which rows (of ``rows``, or all rows) satisfy ``cond``; a missing value satisfies
        only ``is missing``."""
        j = self.index(cond.column)
        line, size = self._line(j)
        here = line if rows is None else line[rows]
        where = self.slot_range(cond)
        if where is not None:
            a, b = where
            # one comparison: slots below a wrap round to the top of the unsigned type
            return (here - here.dtype.type(a)) < b - a
        # '!=' and sets of levels: which slots satisfy it, looked up (np.isin took 45× as long)
        wanted = np.zeros(size + 1, dtype=bool)  # the missing values' slot last, never wanted
        if self.kinds[j] == Kind.CATEGORICAL:
            lookup = self.level_codes[j]
            values = cond.value if isinstance(cond.value, tuple) else (cond.value,)
            wanted[[lookup[str(v)] for v in values if str(v) in lookup]] = True
            if OPS[cond.op].negated or cond.op == Op.NE:
                wanted[:size] = ~wanted[:size]
        else:  # a number's '!=': all present values but those equal to it
            assert cond.op == Op.NE
            wanted[:size] = True
            equal = self.slot_range(Condition(cond.column, Op.EQ, cond.value))
            assert equal is not None
            wanted[equal[0] : equal[1]] = False
        return wanted[here]

    def rows_where(self, cond: Condition, rows: np.ndarray) -> np.ndarray:
        """The ``rows`` (indices) that satisfy ``cond``, in their order."""
        where = self.slot_range(cond)
        if where is not None and (kernel := compiled_kernel(0)) is not None:
            return kernel.rows_in_slots(self.slots[self.slot_row[self.index(cond.column)]], rows, *where)
        return rows[self.condition_mask(cond, rows)]

    def rule_mask(self, conditions: tuple[Condition, ...], rows: np.ndarray | None = None) -> np.ndarray:
        """Rows (of ``rows``, or of all rows) satisfying every condition."""
        mask = np.ones(self.n_rows if rows is None else rows.size, dtype=bool)
        for cond in conditions:
            mask &= self.condition_mask(cond, rows)
        return mask


def _binned(values: np.ndarray, inverse: np.ndarray, bins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted distinct ``values`` (each row's position among them: ``inverse``) cut into at
    most ``bins`` runs of about equal rows: each bin's greatest and least value, and each
    row's bin."""
    below = np.cumsum(np.bincount(inverse, minlength=values.size))
    ends = np.unique(np.searchsorted(below, below[-1] * np.arange(1, bins + 1) / bins - 1e-9))
    starts = np.r_[0, ends[:-1] + 1]
    return values[ends], values[starts], np.searchsorted(ends, np.arange(values.size))[inverse]


def slot_layout(features: Sequence[Feature]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The numeric features, and every feature in the order of the slots' rows: the numeric
    ones first, then the categorical ones."""
    numeric = tuple(j for j, f in enumerate(features) if f.kind == Kind.NUMERIC)
    return numeric, numeric + tuple(j for j in range(len(features)) if j not in numeric)


def level_codes(features: Sequence[Feature]) -> tuple[dict[str, int], ...]:
    """Per feature, level -> code (empty for a numeric feature)."""
    return tuple({level: code for code, level in enumerate(f.levels)} for f in features)


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

    values: np.ndarray  # (G,) ``x <= v`` ends at ``values``
    at_most: np.ndarray  # (G, K)
    at_least: np.ndarray  # (G, K)
    missing: np.ndarray  # (K,)
    lows: np.ndarray  # (G,) ``x >= v`` starts at ``lows`` (the same values in memory)


@dataclass(frozen=True)
class Thresholds:
    """:class:`NumericCandidates` of every numeric feature side by side, so that a learner
    can score them all in one pass: the i-th numeric feature's candidates are
    ``bounds[i]:bounds[i + 1]``."""

    values: np.ndarray  # (P,) the greatest value of each candidate's slot: ``x <= v`` ends there
    at_most: np.ndarray  # (K, P)
    at_least: np.ndarray  # (K, P)
    missing: np.ndarray  # (K, n_numeric)
    bounds: np.ndarray  # (n_numeric + 1,)
    position: dict[int, int]  # numeric feature -> i (its row of the slots)
    lows: np.ndarray  # (P,) the least value of each candidate's slot: ``x >= v`` starts there

    def __getitem__(self, j: int) -> NumericCandidates:
        i = self.position[j]
        start, stop = int(self.bounds[i]), int(self.bounds[i + 1])
        return NumericCandidates(
            self.values[start:stop],
            self.at_most[:, start:stop].T,
            self.at_least[:, start:stop].T,
            self.missing[:, i],
            self.lows[start:stop],
        )


# below this many (row, feature) cells a count stays with NumPy until Numba is imported:
# the import costs about 0.3 s, which a table of a few thousand rows never earns back
KERNEL_CELLS = 1 << 20


def compiled_kernel(cells: int) -> ModuleType | None:
    """:mod:`rulecli.counting.kernel` where it pays: once loaded, or for a count of so many
    (row, feature) cells that it pays for loading it."""
    kernel = sys.modules.get("rulecli.counting.kernel")
    if kernel is None and cells >= KERNEL_CELLS:
        from rulecli.counting import kernel
    return kernel


def label_counts(enc: Encoded, rows: np.ndarray, row_labels: np.ndarray, n_labels: int) -> np.ndarray:
    """(n_labels, n_slots) counts of every slot of every feature among ``rows`` whose label
    (the class, or positive/negative) is ``row_labels``, each row counted by its weight.

    Every slot's rows are added in the order of ``rows``, by either path, so the weighted
    sums are the same to the bit.
    """
    return enc.count_labels(rows, row_labels, n_labels)


def numeric_candidates(enc: Encoded, counts: np.ndarray) -> Thresholds:
    """Threshold candidates of every numeric feature from ``counts`` (of :func:`label_counts`).

    Candidates are the distinct values present among the counted rows.
    """
    offsets = enc.slot_offsets[: len(enc.numeric_features) + 1]
    missing = counts[:, offsets[1:] - 1]  # each feature's last slot holds its missing values
    position = enc.slot_row
    kernel = compiled_kernel(0)
    if kernel is not None and offsets[-1] > 0:
        present, bounds, at_most, at_least = kernel.thresholds(counts, offsets)
        return Thresholds(
            enc.slot_values[present], at_most, at_least, missing, bounds, position, enc.slot_lows[present]
        )
    counts = counts[:, : offsets[-1]]
    totals = counts.sum(axis=0)
    totals[offsets[1:] - 1] = 0
    present = np.flatnonzero(totals != 0)
    present_counts = counts[:, present]
    cum = np.cumsum(present_counts, axis=1)
    # where each feature's present slots start and end among all present slots
    bounds = np.searchsorted(present, offsets)
    values, lows = enc.slot_values[present], enc.slot_lows[present]
    if present.size == 0:
        return Thresholds(values, cum, cum, missing, bounds, position, lows)
    sizes = np.diff(bounds)
    # a feature's running counts start at its first slot: less what the features before it hold
    before = np.where(bounds[:-1] > 0, cum[:, np.maximum(bounds[:-1] - 1, 0)], 0)
    at_most = cum - np.repeat(before, sizes, axis=1)
    total = at_most[:, np.maximum(bounds[1:] - 1, 0)]  # a feature's last running count: all its rows
    at_least = np.repeat(total, sizes, axis=1) - at_most + present_counts
    return Thresholds(values, at_most, at_least, missing, bounds, position, lows)


def categorical_candidates(enc: Encoded, j: int, counts: np.ndarray) -> np.ndarray:
    """Label counts per level of categorical feature ``j`` from ``counts`` (of
    :func:`label_counts`), one row per level and a last row for the missing values."""
    row = enc.slot_row[j]
    return counts[:, enc.slot_offsets[row] : enc.slot_offsets[row + 1]].T
