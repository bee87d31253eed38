"""The covering learners' compiled passes (RIPPER's seeded grow/prune split, rows kept by
a comparison) must give what their NumPy paths give: the same rows, the same random
draws after them, the same rule files."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rulecli.counting import bits, encoded, kernel
from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.learners import ripper
from rulecli.learners.cn2 import CN2Params, fit_cn2
from rulecli.learners.ripper import RipperParams, fit_ripper
from rulecli.model.core import Closed, Condition, Op
from rulecli.model.ops import ends
from tests.unit._tables import by_numpy_and_by_kernel, features


def _numpy_split(rng: np.random.Generator, rows: np.ndarray, labels: np.ndarray, folds: int, ordered: bool):
    """The split as the NumPy calls draw it (the reference the kernel follows)."""
    prune = np.zeros(rows.size, dtype=bool)
    for c in np.flatnonzero(np.bincount(labels)):
        members = np.flatnonzero(labels == c)
        rng.shuffle(members)
        prune[members[: members.size // folds]] = True
    if ordered:
        order = rng.permutation(rows.size)
        return rows[order][~prune[order]], rows[order][prune[order]]
    rng.shuffle(np.zeros(rows.size, dtype=np.uint8))
    return rows[~prune], rows[prune]


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 700),
    n_labels=st.integers(1, 4),
    folds=st.integers(2, 5),
    seed=st.integers(0, 2**32),
    ordered=st.booleans(),
    half_waiting=st.booleans(),
)
def test_the_split_draws_what_numpy_draws(n, n_labels, folds, seed, ordered, half_waiting):
    data = np.random.default_rng(seed)
    labels = data.integers(0, n_labels, n)
    rows = np.sort(data.choice(3 * n + 1, n, replace=False))
    by_numpy, by_kernel = np.random.default_rng(seed), np.random.default_rng(seed)
    if half_waiting:  # a 32-bit draw leaves half of a 64-bit output for the next one
        for rng in (by_numpy, by_kernel):
            rng.integers(0, 7, dtype=np.uint32)
    expected = _numpy_split(by_numpy, rows, labels, folds, ordered)
    got = kernel.stratified_split(by_kernel, rows, labels, n_labels, folds, ordered)
    assert got is not None
    for a, b in zip(expected, got, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    assert by_numpy.bit_generator.state == by_kernel.bit_generator.state


def test_a_generator_other_than_pcg64_is_left_to_numpy():
    rng = np.random.Generator(np.random.MT19937(1))
    assert kernel.stratified_split(rng, np.arange(5), np.zeros(5, dtype=np.int64), 1, 3, False) is None


_VALUES = [np.nan, -0.0, 0.0, 1.5, -2.0, 7.25]  # a table to learn from holds no infinity
_COMPARISONS = {
    Op.LE: np.less_equal,
    Op.LT: np.less,
    Op.GE: np.greater_equal,
    Op.GT: np.greater,
    Op.EQ: np.equal,
    Op.NE: np.not_equal,
}


def _ranked(seed: int) -> tuple[encoded.Encoded, np.ndarray, np.ndarray]:
    """A column of the awkward values (missing, both zeros) encoded as ranks,
    its values as read, and some of its rows."""
    rng = np.random.default_rng(seed)
    frame = pl.DataFrame({"x": rng.choice(_VALUES, 5000), "y": rng.choice(["a", "b"], 5000)})
    ds = prepare_dataset(frame, DataSpec(target="y"))
    return encoded.Encoded.from_dataset(ds), ds.numeric("x"), np.sort(rng.choice(5000, 3000, replace=False))


def _kept(enc: encoded.Encoded, cond: Condition, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows ``cond`` keeps, by NumPy and by the compiled pass."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(encoded, "compiled_kernel", lambda cells: None)
        by_numpy = enc.rows_where(cond, rows)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(encoded, "KERNEL_CELLS", 0)
        by_kernel = enc.rows_where(cond, rows)
    return by_numpy, by_kernel


@pytest.mark.parametrize("op", list(_COMPARISONS))
def test_a_comparison_made_on_ranks_keeps_the_rows_whose_values_compare_so(op):
    """Tests on a number are made on its rank among the column's values: the same rows as
    comparing the values themselves, where a missing value fails every test."""
    enc, x, rows = _ranked(3)
    assert np.isnan(x).any()
    for value in (-0.0, 0.0, 1.5, -2.0, 7.25, 3.0, 1e300, -1e-300, -1e300):
        cond = Condition("x", op, value)
        with np.errstate(invalid="ignore"):
            holds = _COMPARISONS[op](x, value) & ~np.isnan(x)
        np.testing.assert_array_equal(enc.condition_mask(cond), holds)
        np.testing.assert_array_equal(enc.condition_mask(cond, rows), holds[rows])
        for kept in _kept(enc, cond, rows):
            np.testing.assert_array_equal(kept, rows[holds[rows]])


@pytest.mark.parametrize("closed", list(Closed))
def test_an_interval_made_on_ranks_keeps_the_rows_whose_values_lie_in_it(closed):
    enc, x, rows = _ranked(4)
    with_low, with_high = ends(closed)
    for low, high in [(-2.0, 1.5), (0.0, 0.0), (-0.0, 7.25), (-1e300, 1e300), (1.5, 1.5), (-3.0, 2.0), (8.0, 9.0)]:
        cond = Condition("x", Op.INTERVAL, (low, high), closed=closed)
        with np.errstate(invalid="ignore"):
            holds = (x >= low if with_low else x > low) & (x <= high if with_high else x < high)
        np.testing.assert_array_equal(enc.condition_mask(cond), holds)
        for kept in _kept(enc, cond, rows):
            np.testing.assert_array_equal(kept, rows[holds[rows]])
    missing = Condition("x", Op.MISSING)
    np.testing.assert_array_equal(enc.condition_mask(missing), np.isnan(x))
    np.testing.assert_array_equal(enc.condition_mask(Condition("x", Op.PRESENT)), ~np.isnan(x))
    assert all(np.array_equal(kept, rows[np.isnan(x[rows])]) for kept in _kept(enc, missing, rows))


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    sizes=st.lists(st.integers(1, 60), min_size=1, max_size=5),
    weighted=st.booleans(),
    prior=st.floats(0.01, 0.99),
    ties=st.booleans(),
)
def test_the_threshold_survivors_hold_each_features_best_gain(seed, sizes, weighted, prior, ties):
    """What RIPPER picks among the survivors is what it picks among all candidates, with
    their counts to the bit."""
    rng = np.random.default_rng(seed)
    offsets = np.concatenate(([0], np.cumsum(np.array(sizes) + 1))).astype(np.int64)  # + the missing slot
    counts = rng.integers(0, 3 if ties else 40, (2, int(offsets[-1]))) * (rng.random((2, int(offsets[-1]))) < 0.7)
    if weighted:
        counts = counts * rng.random((2, int(offsets[-1]))) * 3
    log_prior = float(np.log2(prior))
    values = np.arange(offsets[-1], dtype=np.float64)  # a slot's value: its number
    enc = SimpleNamespace(slot_offsets=offsets, numeric_features=tuple(range(len(sizes))), slot_values=values)
    enc.slot_lows = values
    enc.slot_row = {j: j for j in range(len(sizes))}
    full = encoded.numeric_candidates(enc, counts)
    # whole counts' logarithms from a table of them, weighted ones' computed
    logs = np.zeros(0) if weighted else np.log2(np.arange(1.0, counts.sum() + 2.0))
    slots, bounds, le_p, le_t, ge_p, ge_t = kernel.foil_candidates(counts, offsets, log_prior, logs)

    def picks(v, lp, lt, gp, gt, b):
        le = lp * (np.log2((lp + 1.0) / (lt + 1.0)) - log_prior)
        ge = gp * (np.log2((gp + 1.0) / (gt + 1.0)) - log_prior)
        gain = np.where(le > ge, le, ge)
        out = []
        for i in range(len(sizes)):
            if b[i + 1] > b[i]:
                k = b[i] + int(np.argmax(gain[b[i] : b[i + 1]]))
                out.append((v[k], le[k] > ge[k], gain[k], lp[k], lt[k], gp[k], gt[k]))
            else:
                out.append(None)
        return out

    at_most, at_least = full.at_most, full.at_least
    expected = picks(
        full.values,
        at_most[1].astype(np.float64),
        (at_most[0] + at_most[1]).astype(np.float64),
        at_least[1].astype(np.float64),
        (at_least[0] + at_least[1]).astype(np.float64),
        full.bounds,
    )
    assert picks(values[slots], le_p, le_t, ge_p, ge_t, bounds) == expected


def _table(n: int, seed: int, weights: str | None) -> pl.DataFrame:
    rng, x, columns = features(n, seed)
    columns["y"] = ["p", "q", *np.where(x[2:] + rng.normal(0, 0.5, n - 2) > 0, "p", rng.choice(["q", "r"], n - 2))]
    if weights == "whole":
        columns["w"] = rng.integers(1, 4, n)
    elif weights == "fractional":
        columns["w"] = rng.random(n) * 3 + 0.01
    return pl.DataFrame(columns)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(2, 400),
    seed=st.integers(0, 2**16),
    weights=st.sampled_from([None, "whole", "fractional"]),
    learner=st.sampled_from(["ripper", "cn2"]),
)
def test_rules_are_learned_the_same_by_numpy_and_by_the_kernel(n, seed, weights, learner):
    ds = prepare_dataset(_table(n, seed, weights), DataSpec(target="y", weights="w" if weights else None))
    if learner == "ripper":
        by_numpy, by_kernel = by_numpy_and_by_kernel(lambda: fit_ripper(ds, RipperParams(seed=seed)), ripper)
    else:
        by_numpy, by_kernel = by_numpy_and_by_kernel(lambda: fit_cn2(ds, CN2Params()), ripper)
    assert by_numpy == by_kernel


def test_each_path_is_the_one_taken():
    """The comparison above means something only if ``by_numpy_and_by_kernel`` really takes both paths."""
    ds = prepare_dataset(_table(300, 1, None), DataSpec(target="y"))
    calls = []
    with pytest.MonkeyPatch.context() as patch:
        for name in ("stratified_split", "rows_in_slots"):
            original = getattr(kernel, name)
            patch.setattr(kernel, name, lambda *a, _f=original, _n=name: calls.append(_n) or _f(*a))
        patch.setattr(encoded, "KERNEL_CELLS", 0)
        fit_ripper(ds, RipperParams())
        assert {"stratified_split", "rows_in_slots"} <= set(calls)
        calls.clear()
        patch.setattr(encoded, "compiled_kernel", lambda cells: None)
        patch.setattr(ripper, "compiled_kernel", lambda cells: None)
        fit_ripper(ds, RipperParams())
        assert not calls


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 400), seed=st.integers(0, 2**16), optimizations=st.integers(0, 2))
def test_grow_rows_counted_by_subtraction_are_counted_as_they_would_be_outright(n, seed, optimizations):
    """RIPPER counts a split's grow rows as the split rows' counts (from the last set
    counted, less what it has lost since) less the prune rows': the same as counting them."""
    ds = prepare_dataset(_table(n, seed, None), DataSpec(target="y"))
    asked = []
    grow_counts = ripper._ClassLearner._grow_counts

    def counted_outright(self, rows, prune_rows):
        counts = grow_counts(self, rows, prune_rows)
        grow_rows = np.setdiff1d(bits.indices(rows, self.enc.n_rows), prune_rows)
        np.testing.assert_array_equal(counts, self._counts(grow_rows))
        asked.append(counts.dtype)
        return counts

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ripper._ClassLearner, "_grow_counts", counted_outright)
        fit_ripper(ds, RipperParams(seed=seed, optimizations=optimizations))
    assume(asked)
    assert set(asked) == {np.dtype(np.int64)}


@given(
    rule=st.lists(st.booleans(), min_size=1, max_size=300),
    seed=st.integers(0, 2**16),
)
def test_a_rules_counts_in_one_pass_are_those_of_its_bit_sets(rule, seed):
    rng = np.random.default_rng(seed)
    n = len(rule)
    rule_bits, rows, positive = (bits.pack(m) for m in (np.array(rule), rng.random(n) < 0.6, rng.random(n) < 0.5))
    cover, covered_positive, positives, total, rest = kernel.rule_counts(rule_bits, rows, positive)
    assert cover == bits.count(rule_bits & rows)
    assert covered_positive == bits.count(rule_bits & rows & positive)
    assert positives == bits.count(rows & positive)
    assert total == bits.count(rows)
    np.testing.assert_array_equal(rest, rows & ~rule_bits)
