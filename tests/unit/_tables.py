"""Small generated tables, and a fit by both paths, for the tests that hold a compiled path
to its NumPy one."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import polars as pl
import pytest

from rulecli.counting import encoded
from rulecli.model.serde import dumps


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


def by_numpy_and_by_kernel(fit: Callable[[], Any], *also: ModuleType) -> tuple[str, str]:
    """The model file ``fit`` makes with every compiled kernel off (``also``: modules that
    hold their own reference to ``compiled_kernel``), and with them on at any size."""
    with pytest.MonkeyPatch.context() as patch:
        for module in (encoded, *also):
            patch.setattr(module, "compiled_kernel", lambda cells: None)
        by_numpy = dumps(fit())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(encoded, "KERNEL_CELLS", 0)
        by_kernel = dumps(fit())
    return by_numpy, by_kernel
