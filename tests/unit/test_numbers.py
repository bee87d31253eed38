"""The column-wise number writers give, for every value, the text Python's ``json`` writes
(for the ten-digit cut, the text :func:`rulecli.model.numbers.short_text` writes one value at
a time; tests/unit/test_model.py holds that to ``json``)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rulecli.model import numbers


def _json(values: list[float]) -> list[str]:
    return [json.dumps(v) for v in values]


def _count(v: float) -> int | float:
    return int(v) if v == math.floor(v) else v


def _awkward(seed: int, n: int = 40_000) -> np.ndarray:
    """Values of every magnitude and sign, whole ones, zeros, and numbers whose tenth and
    eleventh significant digits sit at or next to a rounding tie."""
    rng = np.random.default_rng(seed)
    spread = np.exp(rng.uniform(math.log(1e-310), math.log(1e300), n)) * rng.choice([-1.0, 1.0], n)
    near = 10.0 ** rng.integers(-20, 25, n) * (rng.integers(10**9, 10**10, n) + 0.5) / 1e9
    nudged = np.nextafter(near, rng.choice([-np.inf, np.inf], n))
    small = rng.integers(-(10**6), 10**6, n) / rng.choice([1.0, 2.0, 4.0, 10.0, 1000.0, 3.0], n)
    return np.concatenate([spread, near, nudged, small, [0.0, -0.0, 1e-4, 1e16, 5e-324, 1.7e308]])


@pytest.mark.parametrize("seed", [0, 1])
def test_every_writer_gives_jsons_text_of_each_value(seed: int) -> None:
    values = _awkward(seed)
    assert numbers.float_texts(values).to_list() == _json(values.tolist())
    assert numbers.short_texts(values).to_list() == [numbers.short_text(v) for v in values.tolist()]
    assert numbers.count_texts(values).to_list() == _json([_count(v) for v in values.tolist()])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(min_value=-1.7e308, max_value=1.7e308), min_size=1, max_size=50))
def test_short_and_float_texts_of_any_finite_values(values: list[float]) -> None:
    array = np.array(values)
    assert numbers.short_texts(array).to_list() == [numbers.short_text(v) for v in values]
    assert numbers.float_texts(array).to_list() == _json(values)


def test_python_writes_every_float_where_polars_would_write_them_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    assert numbers.polars_writes_repr.__wrapped__()  # this Polars passes the check itself
    values = _awkward(2, 20_000)
    monkeypatch.setattr(numbers, "polars_writes_repr", lambda: False)
    assert numbers.float_texts(values).to_list() == _json(values.tolist())
    assert numbers.short_texts(values).to_list() == [numbers.short_text(v) for v in values.tolist()]


def test_no_json_number_for_infinity_or_nan() -> None:
    for bad in (math.inf, -math.inf, math.nan):
        with pytest.raises(ValueError, match="no JSON number"):
            numbers.float_texts(np.array([1.0, bad]))


def test_runs_of_texts_become_arrays() -> None:
    texts = numbers.int_texts(np.array([1, -2, 30, 4]))
    assert numbers.arrays(texts, [1, 0, 3]) == ["[1]", "[]", "[-2,30,4]"]
    assert numbers.arrays(texts[:0], [0, 0]) == ["[]", "[]"]
    rows = numbers.rows([numbers.int_texts(np.array([1, 2])), numbers.bool_texts(np.array([True, False]))])
    assert numbers.arrays(rows, [2]) == ["[[1,true],[2,false]]"]
