"""Frequent patterns: conjunctions of feature = value items, mined exactly on bitsets.

The mining is Apriori's level-wise search on a vertical layout (as Eclat does): each item
is the packed bitset of the rows that hold it, a pattern's rows are the AND of its items'
bitsets, and its support is a popcount. A pattern of length k+1 extends a frequent
pattern of length k by an item of a later feature, so no two items share a feature and no
pattern is produced twice; all extensions of one pattern are counted with one vectorised
AND and popcount. Every frequent pattern up to ``max_length`` is found (the method is
exact, like FP-growth); the class is never looked at.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rulecli.counting.bits import weighted_counts
from rulecli.errors import ResourceLimitError


@dataclass(frozen=True)
class Items:
    feature: np.ndarray  # per item: its feature number
    bits: np.ndarray  # (n_items, words) uint64: the rows holding the item


@dataclass(frozen=True)
class Patterns:
    items: tuple[tuple[int, ...], ...]  # item numbers, ascending
    bits: np.ndarray  # (n_patterns, words)
    support: np.ndarray  # rows per pattern (counted by weight)

    @property
    def size(self) -> int:
        return len(self.items)

    @property
    def cardinality(self) -> np.ndarray:
        return np.array([len(p) for p in self.items], dtype=np.int64)


BIT_BUDGET = 1 << 30  # bytes of pattern bit vectors mining may hold


def mine(items: Items, min_count: int, max_length: int, weights: np.ndarray | None = None) -> Patterns:
    """Every conjunction of items of distinct features held by at least ``min_count`` rows
    (rows counted by ``weights`` if given).

    Refuses, naming the options that help, when the patterns' bit vectors would pass
    ``BIT_BUDGET`` (a wide table with a low support finds millions of pairs).
    """
    limit = max(1, BIT_BUDGET // max(1, items.bits.shape[1] * 8))
    support = _support(items.bits, weights)
    frequent = np.flatnonzero(support >= min_count)
    found_items: list[tuple[int, ...]] = [(int(i),) for i in frequent]
    found_bits: list[np.ndarray] = [items.bits[i] for i in frequent]
    found_support: list[float] = [support[i] for i in frequent]
    level = list(range(len(found_items)))
    for _ in range(2, max_length + 1):
        next_level = []
        for p in level:
            last = found_items[p][-1]
            # items of features after the pattern's last feature: each pattern is built once
            candidates = frequent[items.feature[frequent] > items.feature[last]]
            if candidates.size == 0:
                continue
            joint = items.bits[candidates] & found_bits[p]
            counts = _support(joint, weights)
            keep = np.flatnonzero(counts >= min_count)
            if len(found_items) + keep.size > limit:
                raise ResourceLimitError(
                    f"pattern mining passed {limit:,} patterns of up to {max_length} conditions (their bit vectors "
                    "would take over 1 GB): raise `min_support` or lower `max_rule_length`"
                )
            for i in keep.tolist():
                next_level.append(len(found_items))
                found_items.append((*found_items[p], int(candidates[i])))
                found_bits.append(joint[i])
                found_support.append(counts[i])
        level = next_level
        if not level:
            break
    words = items.bits.shape[1]
    bits = np.stack(found_bits) if found_bits else np.zeros((0, words), dtype=np.uint64)
    return Patterns(tuple(found_items), bits, np.array(found_support, dtype=support.dtype))


def _support(bitsets: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    if weights is None:
        return np.bitwise_count(bitsets).sum(axis=1).astype(np.int64)
    return weighted_counts(bitsets, weights)
