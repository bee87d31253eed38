"""Small generated tables for the tests that hold a compiled path to its NumPy one."""

from __future__ import annotations

import numpy as np
import polars as pl


def features(n: int, seed: int) -> tuple[np.random.Generator, np.ndarray, dict[str, object]]:
    """The generator (for a test's own target and weights), ``x`` and the columns: ``x``
    rounded to one digit, 10 % missing; ``c`` of four levels; ``z`` whole numbers, 30 % missing."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n).round(1)
    columns: dict[str, object] = {
        "x": pl.Series(x).set(pl.Series(rng.random(n) < 0.1), None),
        "c": rng.choice(["a", "b", "c", "d"], n),
        "z": pl.Series(rng.integers(0, 40, n).astype(float)).set(pl.Series(rng.random(n) < 0.3), None),
    }
    return rng, x, columns
