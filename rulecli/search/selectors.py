"""CN2's atomic selectors: every one-condition specialisation of a rule, with the counts of
the rows each keeps, from the counts of every slot over the rule's rows.

Selectors are ``a = v`` for categorical features, ``x <= v`` / ``x >= v`` at data values for
numeric ones (at most one of each per feature and rule, so intervals arise) and ``a is
missing``. The counts are whatever the caller counted per slot: class counts, or a numeric
target's weight, sum and sum of squares (:mod:`rulecli.search.number_rules`); ``size_of``
reads the rows a table of them stands for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from rulecli.counting.encoded import Encoded, categorical_candidates, numeric_candidates
from rulecli.model.core import Condition, Op
from rulecli.schema import Kind

# a numeric feature with more values than this offers a rule QUANTILES thresholds (see spread)
MAX_THRESHOLDS = 1024
QUANTILES = 256

Sizes = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Selectors:
    """All one-selector specialisations of a parent, as parallel arrays."""

    blocks: list[tuple[int, Op, np.ndarray]]  # (feature, op, values or level codes)
    counts: np.ndarray  # (m, K)

    def condition(self, enc: Encoded, index: int) -> Condition:
        for j, op, values in self.blocks:
            if index < values.size:
                if op == Op.EQ:
                    return Condition(enc.names[j], op, enc.levels[j][int(values[index])])
                if op == Op.MISSING:
                    return Condition(enc.names[j], op)
                return Condition(enc.names[j], op, float(values[index]))
            index -= values.size
        raise IndexError(index)


def spread(below: np.ndarray) -> slice | np.ndarray:
    """Which of a numeric feature's thresholds (given the rows at or below each, in value
    order) are tried: all of them up to ``MAX_THRESHOLDS``; beyond, those at ``QUANTILES``
    quantiles of the rows. The search's cost is its candidates, and a long table's feature
    offers thousands of values where the 256th parts of its rows are as fine a cut as a rule
    needs (LightGBM's 255 bins; XGBoost's proposal of candidate splits, Chen & Guestrin
    2016); on at most ``MAX_THRESHOLDS`` rows every value is tried."""
    if below.shape[0] <= MAX_THRESHOLDS:
        return slice(None)
    targets = below[-1] * np.arange(1, QUANTILES + 1) / QUANTILES
    picks = np.searchsorted(below, targets - 1e-9)  # ascending: a repeat stands beside its twin
    return picks[np.r_[True, picks[1:] != picks[:-1]]]


def selectors(
    enc: Encoded, conditions: tuple[Condition, ...], counts: np.ndarray, size_of: Sizes, *, missing: bool = True
) -> Selectors:
    """Every one-selector specialisation of a rule of ``conditions`` with its counts, from
    the counts of every slot over the rule's rows (``counts``, (K, n_slots)); ``missing``:
    offer ``is missing`` tests."""
    used = {(c.column, c.op) for c in conditions}
    thresholds = numeric_candidates(enc, counts)
    # the numeric features' candidates are slices of these (thresholds[j] would build
    # each feature's view afresh, twice per feature and beam member)
    at_most, at_least, bounds = thresholds.at_most.T, thresholds.at_least.T, thresholds.bounds.tolist()
    blocks: list[tuple[int, Op, np.ndarray]] = []
    tables: list[np.ndarray] = []
    tested = {c.column for c in conditions}
    for j, name in enumerate(enc.names):
        categorical = enc.kinds[j] == Kind.CATEGORICAL
        # the level counts end with the missing values' row; the threshold counts carry them too
        table = categorical_candidates(enc, j, counts) if categorical and name not in tested else None
        i = -1 if categorical else thresholds.position[j]
        if missing and name not in tested:
            # a missing value can carry information (an item not bought, a test not run)
            absent = table[-1] if table is not None else thresholds.missing[:, i]
            if size_of(absent[None, :])[0] > 0:
                blocks.append((j, Op.MISSING, np.zeros(1, dtype=np.int64)))
                tables.append(absent[None, :])
        if categorical:
            if table is None:
                continue
            levels = table[:-1]
            present = np.flatnonzero(size_of(levels))
            blocks.append((j, Op.EQ, present))
            tables.append(levels[present])
            continue
        start, stop = bounds[i], bounds[i + 1]
        picks = spread(size_of(at_most[start:stop]))
        if (name, Op.LE) not in used:
            blocks.append((j, Op.LE, thresholds.values[start:stop][picks]))
            tables.append(at_most[start:stop][picks])
        if (name, Op.GE) not in used:
            blocks.append((j, Op.GE, thresholds.lows[start:stop][picks]))
            tables.append(at_least[start:stop][picks])
    table = np.vstack(tables) if tables else np.zeros((0, counts.shape[0]), dtype=counts.dtype)
    return Selectors(blocks, table)


def ranked(quality: np.ndarray, support: np.ndarray, tiebreak: np.ndarray, top: int) -> Iterator[int]:
    """Candidate positions best first: higher quality, then larger support, then earlier.

    The search rarely looks past the first few, so the ``top`` best (and everything tied
    with the last of them) are sorted first; the rest only if the search gets there.
    """
    m = quality.size
    if top < m:
        threshold = np.partition(quality, m - top)[m - top]
        head = np.flatnonzero(quality >= threshold)
        yield from head[np.lexsort((tiebreak[head], -support[head], -quality[head]))]
        if head.size == m:
            return
        order = np.lexsort((tiebreak, -support, -quality))
        yield from order[head.size :]
        return
    yield from np.lexsort((tiebreak, -support, -quality))


@dataclass(frozen=True)
class Complex:
    """A rule under construction: its conditions, the rows it covers, its quality and the
    counts of those rows (class counts, or a numeric target's moments)."""

    conditions: tuple[Condition, ...]
    rows: np.ndarray  # covered rows of the current training set (indices)
    quality: float
    counts: np.ndarray


@dataclass(frozen=True)
class Level:
    """Every one-selector specialisation of a beam's complexes, side by side: candidate i
    specialises ``parents[owner[i]]`` by selector ``local[i]`` of ``cands[owner[i]]``."""

    parents: list[Complex]
    cands: list[Selectors]
    counts: np.ndarray  # (m, K)
    owner: np.ndarray
    local: np.ndarray

    @classmethod
    def of(cls, parents: list[Complex], cands: list[Selectors]) -> Level:
        return cls(
            parents,
            cands,
            np.vstack([c.counts for c in cands]),
            np.concatenate([np.full(c.counts.shape[0], i) for i, c in enumerate(cands)]),
            np.concatenate([np.arange(c.counts.shape[0]) for c in cands]),
        )

    @property
    def families(self) -> int:
        """The (feature, operator) families tried at this level (for a Bonferroni bound)."""
        return sum(len(c.blocks) for c in self.cands)

    def next_beam(
        self,
        enc: Encoded,
        keep: np.ndarray,
        quality: np.ndarray,
        support: np.ndarray,
        significant: np.ndarray,
        width: int,
        seen: set[frozenset[Condition]],
    ) -> tuple[list[Complex], Complex | None]:
        """CN2's step: the ``width`` best new complexes among the candidates ``keep`` (by
        ``quality``, then ``support``), and the best of them that is ``significant`` (None if
        none is); a complex ``seen`` before is skipped. The candidates are looked at best
        first, and only until the beam is full and its best significant one found."""
        beam: list[Complex] = []
        level_best: Complex | None = None
        significant_left = int(np.count_nonzero(significant))
        for i in ranked(quality, support[keep], keep, 8 * width):
            if len(beam) >= width and (level_best is not None or significant_left == 0):
                break
            significant_left -= int(significant[i])
            row = keep[i]
            parent = self.parents[self.owner[row]]
            cond = self.cands[self.owner[row]].condition(enc, int(self.local[row]))
            conditions = (*parent.conditions, cond)
            key = frozenset(conditions)
            if key in seen:
                continue
            seen.add(key)
            cpx = Complex(conditions, enc.rows_where(cond, parent.rows), float(quality[i]), self.counts[row])
            if len(beam) < width:
                beam.append(cpx)
            if level_best is None and significant[i]:
                level_best = cpx
        return beam, level_best
