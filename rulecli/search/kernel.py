"""The covering learners' one hot loop, compiled: label counts of every feature's slots.

:func:`rulecli.search.encoded.label_counts` in NumPy gathers the rows' slots, adds the
labels' offsets and bincounts the lot: three passes and two temporary arrays the size of
rows × features. Here each feature is one pass over the rows, on every core, into a
count array small enough to stay in cache: 6.6× faster on 467,000 rows × 16
features (43 ms against 6.5 ms).
"""

from __future__ import annotations

import numpy as np

# imported through the forest's kernel, which chooses where Numba caches what it compiles
from rulecli.model.kernel import numba


@numba.njit(cache=True, parallel=True)
def _counts(slots, rows, labels, n_labels, n_slots):
    out = np.zeros((n_labels, n_slots), dtype=np.int64)
    for f in numba.prange(slots.shape[0]):  # features own disjoint slots: no two threads add to one
        line = slots[f]
        for i in range(rows.size):
            out[labels[i], line[rows[i]]] += 1
    return out


@numba.njit(cache=True, parallel=True)
def _weighted(slots, rows, labels, n_labels, n_slots, w):
    out = np.zeros((n_labels, n_slots), dtype=np.float64)
    for f in numba.prange(slots.shape[0]):
        line = slots[f]
        for i in range(rows.size):
            row = rows[i]
            out[labels[i], line[row]] += w[row]
    return out


def label_counts(
    slots: np.ndarray, rows: np.ndarray, labels: np.ndarray, n_labels: int, n_slots: int, w: np.ndarray | None
) -> np.ndarray:
    """(n_labels, n_slots): per slot, the rows (their weights) of each label, added in row order."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    if w is None:
        return _counts(slots, rows, labels, n_labels, n_slots)
    return _weighted(slots, rows, labels, n_labels, n_slots, np.ascontiguousarray(w, dtype=np.float64))


@numba.njit(cache=True)
def thresholds(counts, offsets):
    """:func:`rulecli.search.encoded.numeric_candidates` in one pass over the slots: the
    present slots, where each feature's start among them, and the running counts. Every
    sum is taken in NumPy's order (one running sum over all present slots, less what the
    features before hold), so weighted counts come out the same to the bit."""
    n_labels, n_features = counts.shape[0], offsets.size - 1
    present = np.empty(offsets[-1], dtype=np.int64)
    bounds = np.empty(n_features + 1, dtype=np.int64)
    n_present = 0
    for f in range(n_features):
        bounds[f] = n_present
        for s in range(offsets[f], offsets[f + 1] - 1):  # each feature's last slot: its missing values
            total = counts[0, s]
            for k in range(1, n_labels):
                total += counts[k, s]
            if total != 0:
                present[n_present] = s
                n_present += 1
    bounds[n_features] = n_present
    at_most = np.empty((n_labels, n_present), dtype=counts.dtype)
    at_least = np.empty((n_labels, n_present), dtype=counts.dtype)
    for k in range(n_labels):
        run = counts[k, 0] * 0
        for f in range(n_features):
            before = run
            for q in range(bounds[f], bounds[f + 1]):
                run += counts[k, present[q]]
                at_most[k, q] = run - before
            if bounds[f + 1] > bounds[f]:
                total = at_most[k, bounds[f + 1] - 1]
                for q in range(bounds[f], bounds[f + 1]):
                    at_least[k, q] = total - at_most[k, q] + counts[k, present[q]]
    return present[:n_present], bounds, at_most, at_least
