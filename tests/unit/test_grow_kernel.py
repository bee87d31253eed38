"""Tree growth counts its cells and deals its rows by NumPy on small tables and by the
compiled kernel on large ones: both must grow the same trees, to the bit."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rulecli.counting import encoded
from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.learners.forest import ForestParams, fit_forest
from rulecli.learners.tree import TreeParams, fit_tree
from tests.unit._tables import by_numpy_and_by_kernel, features


def _table(n: int, seed: int, weighted: bool, classes: tuple[str, ...] = ("p", "q", "r")) -> pl.DataFrame:
    rng, _, columns = features(n, seed)
    columns["y"] = ["p", "q", *rng.choice(classes, n - 2)]
    if weighted:  # fractional weights, some 0: sums that depend on their order
        columns["w"] = np.where((rng.random(n) < 0.1) & (np.arange(n) > 1), 0.0, rng.random(n) * 3 + 0.01)
    return pl.DataFrame(columns)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 400), seed=st.integers(0, 2**16), weighted=st.booleans(), depth=st.sampled_from([None, 3]))
def test_a_tree_grows_the_same_by_numpy_and_by_the_kernel(n: int, seed: int, weighted: bool, depth: int | None):
    ds = prepare_dataset(_table(n, seed, weighted), DataSpec(target="y", weights="w" if weighted else None))
    by_numpy, by_kernel = by_numpy_and_by_kernel(lambda: fit_tree(ds, TreeParams(ccp_alpha=0.0, max_depth=depth)))
    assert by_numpy == by_kernel


@settings(max_examples=20, deadline=None)
@given(
    n=st.integers(2, 400),
    seed=st.integers(0, 2**16),
    weighted=st.booleans(),
    leaf=st.sampled_from([1, 5]),
    criterion=st.sampled_from(["gini", "entropy"]),
)
def test_a_two_class_tree_scans_its_cuts_the_same_by_numpy_and_by_the_kernel(
    n: int, seed: int, weighted: bool, leaf: int, criterion: str
):
    """Two classes and Gini: the cuts' gains come from one compiled scan (entropy stays NumPy's)."""
    table = _table(n, seed, weighted, ("p", "q"))
    ds = prepare_dataset(table, DataSpec(target="y", weights="w" if weighted else None))
    params = TreeParams(ccp_alpha=0.0, min_samples_leaf=leaf, criterion=criterion)
    by_numpy, by_kernel = by_numpy_and_by_kernel(lambda: fit_tree(ds, params))
    assert by_numpy == by_kernel


@settings(max_examples=15, deadline=None)
@given(n=st.integers(2, 300), seed=st.integers(0, 2**16), classes=st.sampled_from([("p", "q"), ("p", "q", "r")]))
def test_a_forest_grows_the_same_by_numpy_and_by_the_kernel(n: int, seed: int, classes: tuple[str, ...]):
    ds = prepare_dataset(_table(n, seed, False, classes), DataSpec(target="y"))
    by_numpy, by_kernel = by_numpy_and_by_kernel(lambda: fit_forest(ds, ForestParams(trees=4, jobs=1, seed=seed)))
    assert by_numpy == by_kernel


def test_each_path_is_the_one_taken():
    """The comparisons above mean something only if ``by_numpy_and_by_kernel`` really takes both paths."""
    from rulecli.counting import kernel

    ds = prepare_dataset(_table(200, 1, True, ("p", "q")), DataSpec(target="y", weights="w"))
    calls = []
    with pytest.MonkeyPatch.context() as patch:
        for name in ("cells", "directions", "deal", "gini_cuts", "record_winners", "numeric_splits"):
            original = getattr(kernel, name)
            patch.setattr(kernel, name, lambda *a, _f=original, _n=name: calls.append(_n) or _f(*a))
        patch.setattr(encoded, "KERNEL_CELLS", 0)
        fit_tree(ds, TreeParams(ccp_alpha=0.0))
        # numeric features: one fused call; categorical ones: the count, scan and winners apart
        assert {"cells", "directions", "deal", "gini_cuts", "record_winners", "numeric_splits"} <= set(calls)
        calls.clear()
        patch.setattr(encoded, "compiled_kernel", lambda cells: None)
        fit_tree(ds, TreeParams(ccp_alpha=0.0))
        assert not calls


def test_weighted_rows_do_not_split_past_the_last_threshold():
    """Fractional weights leave a rounding after a node's last cell, which was taken for
    rows on the right of a cut past the last threshold: an IndexError (found by a search
    over generated tables; this one did)."""
    ds = prepare_dataset(_table(1386, 11379, True), DataSpec(target="y", weights="w"))
    nodes = fit_tree(ds, TreeParams(ccp_alpha=0.0)).nodes
    split = nodes.feature >= 0
    numeric = split & ~np.isnan(nodes.threshold)
    assert numeric.any()
    assert np.isposinf(nodes.threshold[numeric]).any()  # the cut after the last cell: present values left


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    nodes=st.integers(1, 6),
    classes=st.sampled_from([2, 3, 5]),
    orders=st.sampled_from([1, 3]),
    whole=st.booleans(),
    missing=st.booleans(),
    leaf=st.sampled_from([1.0, 2.0, 4.5]),
)
def test_the_compiled_scan_gives_numpys_gains_and_winners_to_the_bit(
    seed: int, nodes: int, classes: int, orders: int, whole: bool, missing: bool, leaf: float
):
    """Each cut's gain, side of the missing values and parting, and then each node's
    winning cut, bit for bit: a model file rounds its gains, so a last-bit difference would
    pass the model comparisons unseen. More than two classes are compiled only for
    whole-number sums, which any order of addition gives exactly."""
    from rulecli.counting import kernel
    from rulecli.search.grow import Best, Grower, GrowParams, _record_winners, impurity

    assume(whole or classes == 2)
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 12, nodes)
    cell_node = np.repeat(np.arange(nodes), sizes)
    cells = rng.integers(0, 6, (orders, cell_node.size, classes)).astype(float)
    if not whole:  # fractional weights: sums whose order shows in their last bits
        cells *= rng.random(cells.shape) * 2.7
    for o in range(1, orders):  # the same cells, each node's in another order
        cells[o] = cells[0][np.lexsort((rng.random(cell_node.size), cell_node))]
    missing_sums = (
        rng.integers(0, 4, (nodes, classes)).astype(float) * (rng.random((nodes, 1)) < 0.6)
        if missing
        else np.zeros((nodes, classes))
    )
    node_stats = np.stack([cells[0][cell_node == k].sum(axis=0) for k in range(nodes)]) + missing_sums
    node_impurity = impurity(node_stats, "gini")
    cell_bin = np.stack([rng.permutation(cell_node.size) for _ in range(orders)])
    grower = Grower.__new__(Grower)
    grower.params, grower.regression, grower.whole_sums = GrowParams(min_samples_leaf=leaf), False, whole
    found_before = np.where(rng.random(nodes) < 0.5, -np.inf, rng.random(nodes) * 0.1)
    results = []
    for compiled in (None, kernel):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(encoded, "compiled_kernel", lambda cells, _k=compiled: _k)
            cuts = grower._cut_gains(cell_node, cells, missing_sums, node_stats, node_impurity)
            if cuts is None:
                results.append(None)
                continue
            best = Best.none(nodes)
            best.gain[:] = found_before
            _record_winners(best, 2, cuts, cell_node, cell_bin, nodes, 2)
        results.append(
            [np.atleast_2d(a).tobytes() for a in (cuts.gain, cuts.miss_left, cuts.apart)]
            + [a.tobytes() for a in (best.gain, best.feature, best.bin, best.missing_left, best.apart)]
            + [sorted(best.left_codes.items()), sorted(best.right_codes.items())]
        )
    assert results[0] == results[1]


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_bins=st.sampled_from([1, 2, 63, 64, 65, 200, 255, 300]),
    nodes=st.integers(1, 5),
    unit=st.booleans(),
)
def test_the_compiled_cells_are_numpys_cells(seed: int, n_bins: int, nodes: int, unit: bool):
    """Each node's non-empty cells in ascending order of bin, with their sums, and its
    missing values' sums: bins across the bitmap's 64-bit words, byte and int32 codes, and
    rows of weight 0 (a cell they reach is kept, empty of weight, as NumPy keeps it)."""
    from rulecli.counting import kernel

    rng = np.random.default_rng(seed)
    n_rows, n_labels = 300, 3
    codes = rng.integers(0, n_bins + 1, n_rows).astype(np.uint8 if n_bins < 256 else np.int32)
    sizes = rng.integers(0, 60, nodes)
    starts = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    data_rows = rng.choice(n_rows, int(starts[-1]))
    labels = rng.integers(0, n_labels, data_rows.size)
    weights = np.where(rng.random(data_rows.size) < 0.2, 0.0, rng.random(data_rows.size))
    take = rng.random(nodes) < 0.8
    keys, sums, missing = kernel.cells(codes, data_rows, labels, weights, unit, starts, take, n_bins, n_labels)
    w = np.ones(data_rows.size) if unit else weights
    want_keys, want_sums = [], []
    for q in np.flatnonzero(take):
        rows = slice(starts[q], starts[q + 1])
        code = codes[data_rows[rows]].astype(np.int64)
        flat = np.bincount(code * n_labels + labels[rows], w[rows], (n_bins + 1) * n_labels)
        cell = flat.reshape(n_bins + 1, n_labels)
        reached = np.unique(code[code < n_bins])
        want_keys.extend(q * n_bins + reached)
        want_sums.extend(cell[reached])
        assert np.array_equal(missing[q], cell[n_bins])
    assert np.array_equal(keys, np.array(want_keys, dtype=np.int64))
    assert np.array_equal(sums, np.array(want_sums).reshape(-1, n_labels))
    assert not missing[~take].any()
