"""The jumping min-bucket walk equals a literal step-by-step transcription of Weka's loop."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from rulecli.discretize import compute_cuts


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
