"""Meeting a rule budget by dropping rules from a finished decision list."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from rulecli.search.selection import kept_rules


def _right_rows(masks: np.ndarray, right: np.ndarray, keep: list[int]) -> int:
    """Rows a list of the ``keep`` rules (and the default, the last line of ``right``) predicts right."""
    said = np.full(masks.shape[1], right.shape[0] - 1)
    for rule in reversed(keep):
        said[masks[rule]] = rule
    return int(right[said, np.arange(masks.shape[1])].sum())


def test_the_rule_whose_rows_the_next_rules_predict_as_well_goes_first():
    # rule 0 is right on rows 0-1; rule 1 matches rows 0-3 and is right on all of them, so
    # without rule 0 nothing is lost; rule 2 alone is right on rows 4-5
    masks = np.array([[1, 1, 0, 0, 0, 0], [1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1]], dtype=bool)
    right = np.array([[1, 1, 0, 0, 0, 0], [1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0]], dtype=bool)
    assert kept_rules(masks, right, None, 2) == [1, 2]
    assert kept_rules(masks, right, None, 1) == [1]
    assert kept_rules(masks, right, None, 0) == []


def test_weights_count_rows():
    masks = np.array([[1, 0], [0, 1]], dtype=bool)
    right = np.array([[1, 0], [0, 1], [0, 0]], dtype=bool)
    assert kept_rules(masks, right, np.array([1.0, 3.0]), 1) == [1]
    assert kept_rules(masks, right, np.array([3.0, 1.0]), 1) == [0]


@settings(max_examples=60, deadline=None)
@given(
    masks=arrays(bool, st.tuples(st.integers(2, 6), st.integers(1, 30))),
    seed=st.integers(0, 2**32 - 1),
)
def test_one_rule_dropped_is_the_best_single_drop(masks: np.ndarray, seed: int):
    rng = np.random.default_rng(seed)
    right = rng.random((masks.shape[0] + 1, masks.shape[1])) < 0.5
    rules = list(range(masks.shape[0]))
    kept = kept_rules(masks, right, None, len(rules) - 1)
    best = max(_right_rows(masks, right, [r for r in rules if r != gone]) for gone in rules)
    assert len(kept) == len(rules) - 1 and kept == sorted(kept)
    assert _right_rows(masks, right, kept) == best
