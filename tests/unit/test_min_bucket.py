"""The jumping min-bucket walk equals a literal step-by-step transcription of Weka's loop,
and the class counts it walks, counted class by class, equal the counts row by row."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rulecli.stats as stats
from rulecli.counting.cells import cells_of, class_table
from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.discretize import compute_cuts, interval_codes, interval_counts
from rulecli.schema import Cuts
from rulecli.stats import class_counts_by_value, class_groups, distinct_values


def weka_steps(x: np.ndarray, y: np.ndarray, n_classes: int, min_bucket: int) -> tuple[float, ...]:
    values, inverse = np.unique(x, return_inverse=True)
    dists = [[0] * n_classes for _ in values]
    for i, cls in zip(inverse, y, strict=True):
        dists[i][cls] += 1
    cuts = list((values[:-1] + values[1:]) / 2.0)

    def first_max(d: list[int]) -> int:
        return d.index(max(d))

    for small in (True, False):
        i = 1
        while i < len(dists):
            old, new = dists[i - 1], dists[i]
            if first_max(new) == first_max(old) or (small and old[first_max(old)] < min_bucket):
                dists[i] = [a + b for a, b in zip(old, new, strict=True)]
                del dists[i - 1]
                del cuts[i - 1]
            else:
                i += 1
    return tuple(float(c) for c in cuts)


@given(
    st.integers(1, 400).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, 60), min_size=n, max_size=n),
            st.lists(st.integers(0, 3), min_size=n, max_size=n),
        )
    ),
    st.integers(1, 10),
    st.integers(2, 4),
)
def test_jumps_equal_steps(data, min_bucket, n_classes):
    raw_x, raw_y = data
    x = np.array(raw_x, dtype=float)
    y = np.array(raw_y) % n_classes
    cuts = compute_cuts("x", x, "min-bucket", bins=min_bucket, y=y, n_classes=n_classes)
    assert cuts.edges == weka_steps(x, y, n_classes, min_bucket)


# the share of distinct values above which the column is ordered whole: never, or always
@pytest.mark.parametrize("many", [2.0, -1.0])
@given(
    st.lists(st.sampled_from([-2.5, -0.0, 0.0, 1.0, 3.25, float("nan")]) | st.floats(-1e3, 1e3), max_size=300),
    st.integers(1, 5),
    st.integers(0, 2**32),
)
def test_class_counts_by_value_are_the_counts_row_by_row(many, raw, n_classes, seed):
    x = np.array(raw, dtype=float)
    y = np.random.default_rng(seed).integers(0, n_classes, x.size)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stats, "MANY_DISTINCT", many)
        values, counts, missing = class_counts_by_value(x, y, n_classes, class_groups(y, n_classes))
    present = ~np.isnan(x)
    expected_values, inverse = distinct_values(x[present])
    expected = np.bincount(inverse * n_classes + y[present], minlength=expected_values.size * n_classes)
    assert values.tobytes() == expected_values.tobytes()  # -0.0 and 0.0 alike written 0.0
    assert counts.dtype == np.int64 and counts.tolist() == expected.reshape(-1, n_classes).tolist()
    assert missing.tolist() == np.bincount(y[~present], minlength=n_classes).tolist()


def test_oners_class_tables_are_the_cells_counted_row_by_row():
    """What OneR scores a feature by: its cells' class counts, here from each distinct
    value's counts where rows count once, equal the cells of every row counted."""
    rng = np.random.default_rng(7)
    n = 5_000
    df = pl.DataFrame(
        {
            "few": rng.choice([-1.0, -0.0, 0.0, 2.0, np.nan], n),
            "many": rng.normal(size=n),
            "c": rng.choice(["u", "v", ""], n).tolist(),
            "w": rng.integers(1, 4, n),
            "y": rng.choice(["p", "q", "r"], n),
        }
    )
    for spec in (DataSpec(target="y", exclude=("w",)), DataSpec(target="y", weights="w")):
        ds = prepare_dataset(df, spec)
        for feature in ds.schema.features:
            cut, table = class_table(ds, feature, "min-bucket", 6)
            cells = cells_of(ds, feature, "min-bucket", 6)
            k = len(ds.classes)
            expected = np.bincount(cells.codes * k + ds.y, weights=ds.weights, minlength=cells.n_cells * k)
            assert cut == cells.feature
            assert table.dtype == expected.dtype and table.tolist() == expected.reshape(-1, k).tolist()


@pytest.mark.parametrize("right_closed", [True, False])
def test_interval_counts_put_a_value_on_an_edge_where_interval_codes_do(right_closed):
    values = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    counts = np.arange(10).reshape(5, 2)
    cuts = Cuts("x", (1.0, 3.0), right_closed, 0.0, 4.0, "equal-width")
    codes = interval_codes(cuts, values)
    expected = [counts[codes == i].sum(axis=0).tolist() for i in range(3)]
    assert interval_counts(cuts, values, counts).tolist() == expected
