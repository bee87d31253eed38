""":class:`~rulecli.counting.encoded.Encoded` with the features left in an engine.

A covering learner asks two things of its data: which rows a condition keeps, and the
label counts of every candidate condition over a set of rows. Here the engine answers
both from its binned copy of the features, and the rows stay in memory as what they cost
least as: the class of each row (one integer) and row sets as bits (one bit a row). The
learner's own logic — its row sets, its random splits, its scores — runs unchanged, so on
a table whose numeric features have few values the model is the in-memory engine's.

A numeric feature with more values than ``max_values`` is binned at the engine's
approximate quantiles: its candidate thresholds are then the bins' greatest values (for
``x <= v``) and least values (for ``x >= v``), still values of the data.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from rulecli.counting import bits
from rulecli.counting.encoded import Encoded, level_codes, slot_layout
from rulecli.engines import Bins, CoveringCounts
from rulecli.model.core import Condition, Op
from rulecli.schema import Kind

MAX_VALUES = 1024  # a numeric feature's values listed one by one: the rest are binned
CACHED_BITS = 256 << 20  # bytes of conditions' row bits kept for asking again


@dataclass(frozen=True)
class EngineEncoded(Encoded):
    table: CoveringCounts | None = field(default=None, repr=False)
    bins: Bins | None = field(default=None, repr=False)
    lows: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    missing: tuple[bool, ...] = ()
    n_distinct: tuple[int, ...] = ()
    cache: OrderedDict[Condition, np.ndarray] = field(default_factory=OrderedDict, repr=False)

    @classmethod
    def from_table(cls, table: CoveringCounts, max_values: int = MAX_VALUES) -> EngineEncoded:
        bins = table.bins(max_values)
        missing, distinct, lows, highs = table.value_summary(bins, max_values)
        # a bin without rows is never a candidate; it takes its neighbours' ends so that the
        # ends stay sorted for looking conditions up
        highs = [np.fmax.accumulate(np.where(np.isnan(h), -np.inf, h)) + 0.0 for h in highs]
        lows = [np.fmin.accumulate(np.where(np.isnan(v), np.inf, v)[::-1])[::-1] + 0.0 for v in lows]
        features = table.schema.features
        numeric, slot_features = slot_layout(features)
        sizes = [bins.n_bins[j] + 1 for j in slot_features]  # the last: missing values
        offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        return cls(
            names=table.schema.feature_names,
            kinds=tuple(f.kind for f in features),
            levels=tuple(f.levels for f in features),
            distinct=tuple(highs[j] if j in numeric else None for j in range(len(features))),
            slots=np.zeros((len(slot_features), 0), dtype=np.int32),
            slot_offsets=offsets,
            slot_features=slot_features,
            numeric_features=numeric,
            level_codes=level_codes(features),
            y=table.row_classes(bins),
            classes=table.classes,
            table=table,
            bins=bins,
            lows=np.concatenate([np.append(lows[j], np.nan) for j in numeric]) if numeric else np.zeros(0),
            missing=tuple(bool(m) for m in missing),
            n_distinct=tuple(int(d) for d in distinct),
        )

    @property
    def slot_lows(self) -> np.ndarray:
        return self.lows

    def has_missing(self, j: int) -> bool:
        return self.missing[j]

    def distinct_count(self, j: int) -> int:
        return self.n_distinct[j]

    def count_labels(self, rows: np.ndarray, row_labels: np.ndarray, n_labels: int) -> np.ndarray:
        if n_labels != 2:
            if not np.array_equal(row_labels, self.y[rows]):
                raise ValueError("an engine counts rows by their class or by two labels")
            return self.count_classes([rows])[0]
        labels = bits.from_indices(rows[row_labels == 1], self.n_rows)
        return self._counts([rows], labels, 2)[0]

    def count_classes(self, row_sets: list[np.ndarray]) -> list[np.ndarray]:
        return self._counts(row_sets, None, self.n_classes)

    def _counts(self, row_sets: list[np.ndarray], labels: np.ndarray | None, n_labels: int) -> list[np.ndarray]:
        assert self.table is not None and self.bins is not None
        packed = [bits.from_indices(rows, self.n_rows) for rows in row_sets]
        out = [np.zeros((n_labels, int(self.slot_offsets[-1])), dtype=np.int64) for _ in row_sets]
        histograms = self.table.code_counts(self.bins, packed, labels)
        for row, j in enumerate(self.slot_features):
            h = histograms[j]
            for counts, n in zip(out, h.rows.T, strict=True):
                counts[h.cls, self.slot_offsets[row] + h.code] = n
        return out

    def condition_bits(self, cond: Condition) -> np.ndarray:
        """The rows ``cond`` keeps, as bits (kept for asking again, within ``CACHED_BITS``)."""
        packed = self.cache.get(cond)
        if packed is not None:
            self.cache.move_to_end(cond)
            return packed
        assert self.table is not None
        packed = self.table.row_bits(self.bins, self._code_test(cond))
        self.cache[cond] = packed
        while len(self.cache) > 1 and len(self.cache) * packed.nbytes > CACHED_BITS:
            self.cache.popitem(last=False)
        return packed

    def condition_mask(self, cond: Condition, rows: np.ndarray | None = None) -> np.ndarray:
        return self._mask(self.condition_bits(cond), rows)

    def rows_where(self, cond: Condition, rows: np.ndarray) -> np.ndarray:
        return rows[self.condition_mask(cond, rows)]

    def rule_mask(self, conditions: tuple[Condition, ...], rows: np.ndarray | None = None) -> np.ndarray:
        packed = bits.pack(np.ones(self.n_rows, dtype=bool))
        for cond in conditions:
            packed = packed & self.condition_bits(cond)
        return self._mask(packed, rows)

    def _mask(self, packed: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
        if rows is None:
            return np.unpackbits(packed.view(np.uint8), count=self.n_rows, bitorder="little").view(bool)
        return bits.test(packed, rows)

    def _code_test(self, cond: Condition) -> str:
        """``cond`` as SQL over the bin codes (the conditions the covering learners write)."""
        assert self.bins is not None
        j = self.index(cond.column)
        code, missing = f"b{j}", self.bins.n_bins[j]
        if cond.op == Op.MISSING:
            return f"{code} = {missing}"
        if self.kinds[j] == Kind.CATEGORICAL and cond.op == Op.EQ:
            level = self.level_codes[j].get(str(cond.value))
            return "FALSE" if level is None else f"{code} = {level}"
        start = int(self.slot_offsets[self.slot_row[j]])
        highs, lows = self.slot_values[start : start + missing], self.lows[start : start + missing]
        value = float(cond.value)  # type: ignore[arg-type]
        if cond.op == Op.LE:  # the bins whose greatest value is at most the value
            return f"{code} <= {int(np.searchsorted(highs, value, side='right')) - 1}"
        if cond.op == Op.GE:  # the bins whose least value is at least the value
            return f"{code} >= {int(np.searchsorted(lows, value, side='left'))} AND {code} < {missing}"
        raise ValueError(f"an engine does not test '{cond.op.value}' conditions")
