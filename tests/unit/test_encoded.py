"""The covering learners' counts: the compiled kernel and NumPy give the same, to the bit."""

from __future__ import annotations

import sys

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from rulecli.counting import bits, encoded
from rulecli.counting.encoded import Encoded, categorical_candidates, label_counts, numeric_candidates
from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.model.core import Condition, Op


def _encoded(n: int, seed: int, weighted: bool) -> Encoded:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n).round(1)  # repeated values: several rows a slot
    columns = {
        "x": pl.Series(x).set(pl.Series(rng.random(n) < 0.1), None),
        "c": rng.choice(["a", "b", "c"], n),
        "z": pl.Series(rng.integers(0, 5, n).astype(float)).set(pl.Series(rng.random(n) < 0.3), None),
        "y": ["p", "q", *rng.choice(["p", "q", "r"], n - 2)],
    }
    if weighted:  # fractional weights, some 0: sums that depend on their order
        columns["w"] = np.where((rng.random(n) < 0.1) & (np.arange(n) > 1), 0.0, rng.random(n) * 3 + 0.01)
    ds = prepare_dataset(pl.DataFrame(columns), DataSpec(target="y", weights="w" if weighted else None))
    return Encoded.from_dataset(ds)


def _both(compute):
    """``compute()`` by NumPy, then by the compiled kernel."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(encoded, "compiled_kernel", lambda cells: None)
        by_numpy = compute()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(encoded, "KERNEL_CELLS", 0)
        by_kernel = compute()
    return by_numpy, by_kernel


@given(
    n=st.integers(2, 300),
    seed=st.integers(0, 2**16),
    weighted=st.booleans(),
    share=st.floats(0.0, 1.0),
    shuffled=st.booleans(),
    binary=st.booleans(),
)
def test_kernel_counts_what_numpy_counts_in_the_same_order(
    n: int, seed: int, weighted: bool, share: float, shuffled: bool, binary: bool
):
    enc = _encoded(n, seed, weighted)
    assume("x" in enc.names and "c" in enc.names)  # a column of one value is no feature
    rng = np.random.default_rng(seed + 1)
    rows = np.flatnonzero(rng.random(enc.n_rows) < share)
    assume(rows.size > 0)
    if shuffled:
        rows = rng.permutation(rows)
    labels = (enc.y[rows] == 0).astype(np.uint8) if binary else enc.y[rows]  # as RIPPER counts
    n_labels = 2 if binary else enc.n_classes

    def compute():
        counts = label_counts(enc, rows, labels, n_labels)
        return counts, numeric_candidates(enc, counts)

    (counts, th), (k_counts, k_th) = _both(compute)
    assert counts.dtype == k_counts.dtype and np.array_equal(counts, k_counts)
    for field in ("values", "at_most", "at_least", "missing", "bounds"):
        a, b = getattr(th, field), getattr(k_th, field)
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), field
    # and what they count is right: per label, the rows' weights with x <= v and x >= v
    w = np.ones(enc.n_rows) if enc.w is None else enc.w
    x = enc.values(enc.index("x"))[rows]
    cand = th[enc.index("x")]
    for i, v in enumerate(cand.values):
        for label in range(n_labels):
            mine = labels == label
            assert cand.at_most[i, label] == pytest.approx(w[rows][mine & (x <= v)].sum())
            assert cand.at_least[i, label] == pytest.approx(w[rows][mine & (x >= v)].sum())
    present = ~np.isnan(x)
    assert np.array_equal(np.sort(cand.values), np.unique(x[present & (w[rows] > 0)]))
    levels = categorical_candidates(enc, enc.index("c"), counts)
    for code in range(levels.shape[0]):
        for label in range(n_labels):
            inside = (enc.values(enc.index("c"))[rows] == code) & (labels == label)
            assert levels[code, label] == pytest.approx(w[rows][inside].sum())


def test_condition_masks_of_a_subset_are_the_masks_of_all_rows_taken_there():
    enc = _encoded(200, 3, False)
    rows = np.random.default_rng(0).permutation(200)[:80]
    for cond in (
        Condition("x", Op.LE, 0.1),
        Condition("x", Op.NE, 0.1),
        Condition("x", Op.GT, 0.1),
        Condition("x", Op.MISSING),
        Condition("x", Op.PRESENT),
        Condition("c", Op.EQ, "a"),
        Condition("c", Op.NE, "a"),
        Condition("c", Op.NOT_IN, ("a", "b")),
    ):
        full = enc.condition_mask(cond)
        assert np.array_equal(enc.condition_mask(cond, rows), full[rows]), cond
    x = enc.values(enc.index("x"))
    # a missing value satisfies neither a comparison nor its negation
    assert not enc.condition_mask(Condition("x", Op.NE, 0.1))[np.isnan(x)].any()
    assert not enc.condition_mask(Condition("c", Op.NE, "a"))[enc.missing_mask(enc.index("c"))].any()


@given(st.lists(st.booleans(), max_size=300))
def test_the_rows_of_a_bit_set_are_listed_alike_by_numpy_and_by_the_kernel(mask: list[bool]):
    from rulecli.counting import kernel  # loaded: bits.indices uses it

    packed = bits.pack(np.array(mask, dtype=bool))
    expected = np.flatnonzero(np.array(mask, dtype=bool))
    np.testing.assert_array_equal(bits.indices(packed, len(mask)), expected)
    assert bits.indices(packed, len(mask)).dtype == np.int64
    with pytest.MonkeyPatch.context() as patch:
        patch.delitem(sys.modules, kernel.__name__)
        np.testing.assert_array_equal(bits.indices(packed, len(mask)), expected)


@given(st.lists(st.booleans(), min_size=1, max_size=200), st.randoms(use_true_random=False), st.floats(0.01, 1))
def test_a_bit_set_answers_for_any_rows(mask: list[bool], random, share: float):
    # a few rows are looked up bit by bit, many by unpacking the set once
    rows = random.sample(range(len(mask)), max(1, int(share * len(mask))))
    packed = bits.pack(np.array(mask))
    assert bits.test(packed, np.array(rows)).tolist() == [mask[r] for r in rows]


def test_labels_of_a_byte_each_are_counted_into_slots_past_the_bytes_range():
    rng = np.random.default_rng(0)
    frame = pl.DataFrame({"x": rng.normal(size=600), "y": rng.choice(["p", "q"], 600)})
    enc = Encoded.from_dataset(prepare_dataset(frame, DataSpec(target="y")))
    assert enc.slot_offsets[-1] > 256
    rows = np.arange(0, 600, 2)
    labels = (enc.y[rows] == 0).astype(np.uint8)
    by_numpy, by_kernel = _both(lambda: label_counts(enc, rows, labels, 2))
    np.testing.assert_array_equal(by_numpy, by_kernel)
    np.testing.assert_array_equal(by_numpy.sum(axis=1), np.bincount(labels, minlength=2))
