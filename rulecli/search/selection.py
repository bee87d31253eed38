"""A rule budget met by dropping rules from a finished decision list, not by stopping early.

A covering learner that stops at its n-th rule spends the budget in the order it learns:
RIPPER learns the rarest class first, so a tight budget goes to the rare classes and the
common ones fall to the default. Learning the whole list and then dropping, one at a time,
the rule whose loss costs the fewest correctly predicted training rows (backward
elimination) keeps the n rules that matter most to the list as a whole.
"""

from __future__ import annotations

import numpy as np


def kept_rules(masks: np.ndarray, right: np.ndarray, weights: np.ndarray | None, budget: int) -> list[int]:
    """The positions, in list order, of the ``budget`` rules to keep.

    ``masks[r]``: the rows rule ``r`` matches; ``right[r]``: the rows rule ``r`` predicts
    correctly, with one more line for the default rule (rows no kept rule matches). A row
    goes to the first kept rule that matches it, so dropping a rule moves only its own rows,
    each to the next kept rule that matches it or to the default. Of rules that cost as much,
    the one matching the fewest rows goes (the first of those).
    """
    n_rules, n_rows = masks.shape
    w = np.ones(n_rows) if weights is None else weights
    keep = list(range(n_rules))
    sizes = masks @ w
    # each row's place in ``keep`` of the rule it goes to, kept up to date as rules go
    first = _first_match(masks, keep, np.arange(n_rows))
    while len(keep) > budget:
        order = np.argsort(first, kind="stable")
        bounds = np.searchsorted(first[order], np.arange(len(keep) + 1))
        losses = np.empty(len(keep))
        moves = []
        for j, rule in enumerate(keep):
            rows = order[bounds[j] : bounds[j + 1]]
            later = keep[j + 1 :]
            fallback = _first_match(masks, later, rows)
            to = np.array([*later, n_rules])[fallback]
            losses[j] = w[rows] @ (right[rule, rows].astype(np.float64) - right[to, rows])
            moves.append((rows, fallback))
        least = np.flatnonzero(losses == losses.min())
        gone = int(least[np.argmin(sizes[[keep[j] for j in least]])])
        rows, fallback = moves[gone]
        first[first > gone] -= 1
        first[rows] = gone + fallback
        keep.pop(gone)
    return keep


def _first_match(masks: np.ndarray, keep: list[int], rows: np.ndarray) -> np.ndarray:
    """Per row of ``rows``: the place in ``keep`` of the first rule matching it, or ``len(keep)``."""
    if not keep:
        return np.zeros(rows.size, dtype=np.int64)
    hits = masks[np.ix_(keep, rows)]
    return np.where(hits.any(axis=0), hits.argmax(axis=0), len(keep))
