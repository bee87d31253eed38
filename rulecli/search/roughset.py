"""Pawlak's rough sets over a decision table: indiscernibility, approximations, reducts.

Pawlak (1982, 1991) defines the pieces. Objects are *indiscernible* on an attribute
set B when they agree on every attribute of B; the classes of that relation are the
granules. For a decision class X: the lower approximation is the union of granules inside
X, the upper approximation the union of granules meeting X, the boundary their
difference. The positive region POS_B(D) is the union of the lower approximations, and
the dependency degree γ(B) = |POS_B(D)| / |U|. A *reduct* is a minimal B with
γ(B) = γ(A) (it discerns the decisions as well as all attributes do); the *core* is the
set of attributes no reduct can do without (those whose removal lowers γ).

Ziarko's *variable precision* (VPRS, 1993) relaxes "inside X" to "at least a share β of
the granule in X" (β in (0.5, 1]): the β-lower approximation holds the granules whose rows
are at least β of X, the β-upper approximation those more than 1 − β of X, and γ_β counts
the granules whose majority decision holds at least β of their rows. β = 1 is Pawlak's
model. On noisy tables every coarse granule holds a few rows of another decision, so
Pawlak's γ is near 0 for every attribute set and the reduct comes out empty; γ_β still
tells the attributes that separate the decisions from those that do not.

Every γ is one Polars group-by over the attribute codes: group the rows by B, count the
distinct decisions per group (or each decision's rows, below β = 1), and add up the
positive groups. Attribute values are small integer codes (numeric attributes discretised
first, missing one more value).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from rulecli.errors import ParamError
from rulecli.stats import tally

DECISION = "__decision"
MAX_ALL_ATTRIBUTES = 20
MAX_ALL_PAIRS = 20_000_000


@dataclass(frozen=True)
class DecisionTable:
    names: tuple[str, ...]
    codes: np.ndarray  # (n_rows, n_attributes) int32
    y: np.ndarray  # decision codes
    n_classes: int
    w: np.ndarray | None = None  # each object's weight (None: each counts once)

    @property
    def n_rows(self) -> int:
        return int(self.codes.shape[0])

    @property
    def size(self) -> int | float:
        """|U|: the objects, each counted by its weight."""
        return self.n_rows if self.w is None else float(self.w.sum())

    def class_counts(self, groups: np.ndarray, n_groups: int) -> np.ndarray:
        """(n_groups, K) objects of each decision per group, counted by weight."""
        flat = np.bincount(groups * self.n_classes + self.y, weights=self.w, minlength=n_groups * self.n_classes)
        return flat.reshape(n_groups, self.n_classes)

    @property
    def n_attributes(self) -> int:
        return len(self.names)


def positive_granules(counts: np.ndarray, precision: float) -> np.ndarray:
    """Which granules, given their (granules, K) decision counts, are positive at β: one
    decision holds at least β of their rows (all of them at β = 1)."""
    return counts.max(axis=1) >= precision * counts.sum(axis=1) - 1e-9


class RoughSets:
    """γ and approximations of attribute subsets at precision β, each one group-by (results cached)."""

    def __init__(self, table: DecisionTable, precision: float = 1.0) -> None:
        self.table = table
        self.precision = precision
        self.columns = [np.ascontiguousarray(table.codes[:, j], dtype=np.int64) for j in range(table.n_attributes)]
        self.cardinality = table.codes.max(axis=0).astype(np.int64) + 1 if table.n_rows else np.ones(0, np.int64)
        self._gamma: dict[frozenset[int], float] = {}

    def positive_count(
        self, attributes: frozenset[int] | tuple[int, ...], precision: float | None = None
    ) -> int | float:
        """|POS_B(D)|: rows whose B-granule is positive (one decision, or at least β of it), at
        this table's β unless ``precision`` is given (uncached: γ's cache is at this β)."""
        precision = self.precision if precision is None else precision
        if not attributes:
            counts = self.table.class_counts(np.zeros(self.table.n_rows, dtype=np.int64), 1)
            return self.table.size if self.table.n_rows and positive_granules(counts, precision)[0] else 0
        words, _ = self._packed(sorted(attributes))
        return self._positive_of(words, precision)

    def _positive_of(self, words: list[np.ndarray], precision: float | None = None) -> int | float:
        """|POS| of the granules that rows with equal ``words`` form (rows counted by weight)."""
        precision = self.precision if precision is None else precision
        frame = pl.DataFrame({**{f"k{i}": w for i, w in enumerate(words)}, DECISION: self.table.y})
        keys = [f"k{i}" for i in range(len(words))]
        if self.table.w is not None:
            # Polars' threads would add fractional weights in the order they finish, a
            # rounding apart from run to run (and γ's ties break on it): granules numbered
            # by their keys' rank, their weights added by NumPy in row order
            granule = frame.select(pl.struct(keys).rank("dense")).to_series().to_numpy().astype(np.int64) - 1
            n_granules = int(granule.max()) + 1 if granule.size else 0
            counts = self.table.class_counts(granule, n_granules)
            if precision >= 1.0:  # one decision among the granule's rows, whatever they weigh
                rows = np.bincount(granule * self.table.n_classes + self.table.y, minlength=counts.size)
                positive_ones = (rows.reshape(counts.shape) > 0).sum(axis=1) == 1
            else:
                positive_ones = positive_granules(counts, precision)
            return float(counts.sum(axis=1)[positive_ones].sum())
        size = pl.len()
        if precision >= 1.0:
            groups = frame.group_by(keys).agg(pl.col(DECISION).n_unique().alias("k"), size.alias("n"))
            positive = groups.filter(pl.col("k") == 1).get_column("n").sum()
        else:
            cells = frame.group_by([*keys, DECISION]).agg(size.alias("n"))
            groups = cells.group_by(keys).agg(pl.col("n").max().alias("top"), pl.col("n").sum().alias("n"))
            positive = groups.filter(pl.col("top") >= precision * pl.col("n") - 1e-9).get_column("n").sum()
        return int(positive)

    def _packed(self, attributes: list[int]) -> tuple[list[np.ndarray], dict[int, tuple[int, int]]]:
        """The codes of ``attributes`` packed positionally into as few int64 words as their value
        counts allow (hashing one or two integer columns is several times faster than hashing
        thirty), and each attribute's (word, place value). Zeroing one attribute's digit
        (subtracting code × place value) leaves a key of the others: dropping an attribute
        costs one subtraction, not a repacking."""
        layout: dict[int, tuple[int, int]] = {}
        word, room = 0, 1
        for j in attributes:
            radix = int(self.cardinality[j])
            if room * radix >= 1 << 62:
                word, room = word + 1, 1
            layout[j] = (word, room)
            room *= radix
        words = [np.zeros(self.table.n_rows, dtype=np.int64) for _ in range(word + 1)]
        for j, (w, place) in layout.items():
            words[w] += self.columns[j] * place
        return words, layout

    def granule_count(self, attributes: list[int]) -> int:
        """How many distinct descriptions the rows have on ``attributes``."""
        if not attributes or not self.table.n_rows:
            return min(1, self.table.n_rows)
        words, _ = self._packed(sorted(attributes))
        return pl.DataFrame({f"k{i}": w for i, w in enumerate(words)}).n_unique()

    def held_out_agreement(self, attributes: list[int]) -> float:
        """The rows whose granule on ``attributes``, without the row itself, has the row's
        decision as its majority (a tie counts half; a row alone in its granule is judged
        by the table's majority decision): the leave-one-out accuracy of the granules as a
        lookup table, rows counted once each whatever they weigh. Unlike γ, which a finer
        granulation always raises, it falls once the granules are too small to say anything."""
        words, _ = self._packed(sorted(attributes)) if attributes else ([np.zeros(self.table.n_rows, np.int64)], {})
        keys = [f"k{i}" for i in range(len(words))]
        frame = pl.DataFrame({**dict(zip(keys, words, strict=True)), DECISION: self.table.y})
        majority = int(np.argmax(np.bincount(self.table.y, minlength=self.table.n_classes)))
        n, top = pl.col("n"), pl.col("n").max().over(keys)
        others = (
            pl.when((n < top) | ((n == top).sum().over(keys) > 1))
            .then(top)
            .otherwise(pl.when(n < top).then(n).max().over(keys).fill_null(0))
        )
        right = (
            pl.when(n.sum().over(keys) == 1)
            .then(n * (pl.col(DECISION) == majority))
            .when(n - 1 > others)
            .then(n)
            .when(n - 1 == others)
            .then(n * 0.5)
            .otherwise(0)
        )
        cells = frame.group_by([*keys, DECISION]).agg(pl.len().alias("n"))
        return float(cells.select(right.sum()).item())

    def gamma(self, attributes: frozenset[int] | tuple[int, ...]) -> float:
        key = frozenset(attributes)
        if key not in self._gamma:
            self._gamma[key] = self.positive_count(key) / self.table.size
        return self._gamma[key]

    @property
    def all_attributes(self) -> frozenset[int]:
        return frozenset(range(self.table.n_attributes))

    def approximations(self) -> dict[int, dict[str, int | float]]:
        """Per decision class: sizes (objects counted by weight) of the (β-)lower and upper
        approximations and the boundary."""
        words, _ = self._packed(sorted(self.all_attributes))
        keys = pl.DataFrame({f"k{i}": w for i, w in enumerate(words)})
        granule = keys.select(pl.struct(keys.columns).rank("dense").alias("g")).get_column("g").to_numpy() - 1
        counts = self.table.class_counts(granule.astype(np.int64), int(granule.max()) + 1 if granule.size else 0)
        sizes = counts.sum(axis=1)
        out: dict[int, dict[str, int | float]] = {}
        for cls in range(self.table.n_classes):
            inside = counts[:, cls] >= self.precision * sizes - 1e-9
            meets = counts[:, cls] > (1.0 - self.precision) * sizes + 1e-9 if self.precision < 1 else counts[:, cls] > 0
            lower, upper = tally(sizes[inside].sum()), tally(sizes[meets].sum())
            out[cls] = {"lower": lower, "upper": upper, "boundary": tally(upper - lower)}
        return out

    def _fill_without_each(self) -> None:
        """γ(A − {a}) for every attribute a, each by one subtraction from A's packed key."""
        everything = self.all_attributes
        if all(everything - {j} in self._gamma for j in everything):
            return
        words, layout = self._packed(sorted(everything))
        for j, (w, place) in layout.items():
            rest = everything - {j}
            if rest in self._gamma:
                continue
            without = list(words)
            without[w] = words[w] - self.columns[j] * place
            count = self._positive_of(without) if rest else self.positive_count(rest)
            self._gamma[rest] = count / self.table.size

    def core(self) -> list[int]:
        """Attributes whose removal lowers γ."""
        full = self.gamma(self.all_attributes)
        self._fill_without_each()
        return [j for j in range(self.table.n_attributes) if self.gamma(self.all_attributes - {j}) < full]

    def eliminate(self, order: list[int], start: frozenset[int] | None = None) -> list[int]:
        """Elimination (Pawlak 1991): in ``order``, drop each attribute whose removal keeps γ."""
        full = self.gamma(self.all_attributes)
        kept = set(self.all_attributes if start is None else start)
        if not kept:
            return []
        words, layout = self._packed(sorted(kept))
        for j in order:
            if j not in kept:
                continue
            w, place = layout[j]
            without = list(words)
            without[w] = words[w] - self.columns[j] * place
            rest = frozenset(kept - {j})
            if rest not in self._gamma:
                self._gamma[rest] = (
                    self._positive_of(without) if rest else self.positive_count(rest)
                ) / self.table.size
            if self._gamma[rest] >= full:
                kept.discard(j)
                words = without
        return sorted(kept)

    def quick_reduct(self, order: list[int]) -> list[int]:
        """Greedy forward selection by γ (QuickReduct, Chouchoulas & Shen 2001), then the
        elimination pass, since the greedy set may hold attributes others made redundant."""
        full = self.gamma(self.all_attributes)
        chosen: set[int] = set()
        while self.gamma(frozenset(chosen)) < full:
            best = max(
                (j for j in order if j not in chosen),
                key=lambda j: (self.gamma(frozenset(chosen | {j})), -order.index(j)),
            )
            chosen.add(best)
        return self.eliminate(order, frozenset(chosen))

    def significance(self) -> dict[int, float]:
        """σ(a) = γ(A) − γ(A − {a})."""
        full = self.gamma(self.all_attributes)
        self._fill_without_each()
        return {j: full - self.gamma(self.all_attributes - {j}) for j in range(self.table.n_attributes)}

    def all_reducts(self) -> list[list[int]]:
        """Every reduct, as the prime implicants of the discernibility function.

        Clauses come from pairs of distinct object descriptions that must stay discerned:
        one of them in the positive region and the other not positive with its (majority)
        decision. A subset is a reduct when it meets every clause and no smaller reduct is
        inside it.
        """
        d = self.table.n_attributes
        if d > MAX_ALL_ATTRIBUTES:
            raise ParamError(
                f"`all_reducts` enumerates subsets of {d} attributes (2^{d}); the limit is {MAX_ALL_ATTRIBUTES}: "
                "use `n_reducts` K for reducts from K random orders"
            )
        descriptions, inverse = np.unique(self.table.codes, axis=0, return_inverse=True)
        m = descriptions.shape[0]
        if m * (m - 1) // 2 > MAX_ALL_PAIRS:
            raise ParamError(
                f"`all_reducts` would compare {m * (m - 1) // 2:,} pairs of distinct objects "
                f"(limit {MAX_ALL_PAIRS:,}): use `n_reducts` K for reducts from K random orders"
            )
        decisions = self.table.class_counts(inverse.ravel().astype(np.int64), m)
        positive = positive_granules(decisions, self.precision)
        single = np.where(positive, decisions.argmax(axis=1), -1)
        weights = (1 << np.arange(d)).astype(np.int64)
        clauses: set[int] = set()
        for i in np.flatnonzero(positive):
            others = np.arange(m)
            # v must be discerned from u unless v is positive with u's decision
            needs = ~(positive & (single == single[i]))
            needs[i] = False
            masks = ((descriptions[others[needs]] != descriptions[i]) * weights).sum(axis=1)
            clauses.update(int(x) for x in np.unique(masks))
        clauses.discard(0)  # identical descriptions cannot be discerned by any subset
        masks = np.arange(1 << d, dtype=np.int64)
        covers = np.ones(masks.size, dtype=bool)
        for clause in clauses:
            covers &= (masks & clause) != 0
        minimal = covers.copy()
        for j in range(d):
            has = ((masks >> j) & 1).astype(bool)
            minimal &= ~(has & covers[masks ^ (1 << j)])
        reducts = np.flatnonzero(minimal).tolist()
        reducts.sort(key=lambda r: (bin(r).count("1"), [j for j in range(d) if r >> j & 1]))
        return [[j for j in range(d) if r >> j & 1] for r in reducts]
