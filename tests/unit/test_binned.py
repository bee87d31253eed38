"""A numeric feature's bins: each row's code is where its value falls among the cuts."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rulecli.counting.binned import _bin_numeric


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 400), max_bins=st.sampled_from([2, 5, 255]))
def test_each_value_is_coded_by_the_cut_it_passes(seed: int, n: int, max_bins: int):
    """Codes are taken per distinct value and gathered; they must be the search of every
    row's own value: ties, -0.0 beside 0.0, infinities and missing values included."""
    rng = np.random.default_rng(seed)
    pool = np.array([-np.inf, -1.5, -0.0, 0.0, 0.25, 3.0, np.inf, np.nan])
    x = np.where(rng.random(n) < 0.5, rng.choice(pool, n), rng.normal(size=n).round(1))
    code, cuts = _bin_numeric(x, max_bins)
    present = ~np.isnan(x)
    assert np.array_equal(code[present], np.searchsorted(cuts, x[present], side="right"))
    assert (code[~present] == cuts.size + 1).all()
