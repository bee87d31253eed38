"""Cut-point methods and their labels."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rulecli.discretize import compute_cuts, cut_between, cut_between_one, interval_labels, label_expr
from rulecli.errors import ParamError
from rulecli.schema import Cuts


def test_equal_width_and_frequency():
    x = np.array([0.0, 1, 2, 3, 4, 5, 6, 7, 8, 10, np.nan])
    assert compute_cuts("x", x, "equal-width", bins=2).edges == (5.0,)
    assert compute_cuts("x", x, "equal-frequency", bins=2).edges == (4.5,)


def test_equal_frequency_collapses_ties():
    x = np.array([1.0] * 8 + [2.0, 3.0])
    # the three quartiles are all 1.0: one cut, two intervals
    assert compute_cuts("x", x, "equal-frequency", bins=4).edges == (1.0,)


def test_mdlp_finds_the_class_boundaries_and_ignores_noise():
    x = np.arange(60, dtype=float)
    y = np.array([0] * 20 + [1] * 20 + [2] * 20)
    assert compute_cuts("x", x, "mdlp", y=y, n_classes=3).edges == (19.5, 39.5)
    rng = np.random.default_rng(0)
    noise = rng.integers(0, 2, 60)
    assert compute_cuts("x", x, "mdlp", y=noise, n_classes=2).edges == ()


def test_min_bucket_merges_like_weka():
    # classes along x: a a a b a a a b b b b b ; with min bucket 3 the lone b is absorbed
    x = np.arange(12, dtype=float)
    y = np.array([0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1])
    cuts = compute_cuts("x", x, "min-bucket", bins=3, y=y, n_classes=2)
    assert cuts.edges == (6.5,) and not cuts.right_closed


def test_supervised_methods_need_a_target():
    with pytest.raises(ParamError, match="needs a target"):
        compute_cuts("x", np.array([1.0, 2.0]), "mdlp")


def test_labels_use_the_seeds_notation_and_label_expr_applies_them():
    cuts = Cuts("age", (27.2, 41.4), True, 12.9, 84.1)
    assert interval_labels(cuts) == ["[12.9,27.2]", "(27.2,41.4]", "(41.4,84.1]"]
    df = pl.DataFrame({"age": [12.9, 27.2, 27.3, 90.0, None]})
    out = df.select(label_expr(cuts)).to_series().to_list()
    assert out == ["[12.9,27.2]", "[12.9,27.2]", "(27.2,41.4]", "(41.4,84.1]", None]
    left = Cuts("x", (1.0,), False, 0.0, 2.0)
    assert interval_labels(left) == ["[0,1)", "[1,2]"]


@settings(max_examples=400, deadline=None)
@given(
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
)
def test_one_cut_equals_the_array_cut_bit_for_bit(a: float, b: float):
    assume(a != b)
    low, high = min(a, b), max(a, b)
    one = cut_between_one(low, high)
    assert np.float64(one).tobytes() == cut_between(np.array([low]), np.array([high]))[0].tobytes()
    assert low < one <= high


def test_one_cut_on_everyday_and_extreme_pairs():
    rng = np.random.default_rng(0)
    rounded = [float(np.round(v, d)) for v, d in zip(rng.normal(size=2000), rng.integers(0, 6, 2000), strict=True)]
    low = np.array([*rounded, -1.7e308, 1e-300, 0.1, 5e-324])
    high = low + np.abs(rng.normal(size=low.size)) * 10.0 ** rng.integers(-8, 4, low.size)
    high = np.where(high > low, high, np.nextafter(low, np.inf))
    many = cut_between(low, high)
    assert [cut_between_one(float(a), float(b)) for a, b in zip(low, high, strict=True)] == many.tolist()
    # a cut that rounds to zero from below keeps its sign, as NumPy's rint does
    for a, b in ((-1.0, 0.98), (-0.5, 0.49), (-0.3, 0.25)):
        assert np.float64(cut_between_one(a, b)).tobytes() == cut_between(np.array([a]), np.array([b]))[0].tobytes()
