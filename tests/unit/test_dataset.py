"""Preparing a raw table for learning: columns, types, labels, warnings and refusals."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from rulecli.dataset import DataSpec, prepare_dataset, stratified_folds, stratified_holdout, target_label_expr
from rulecli.errors import InputError
from rulecli.schema import Kind

RAW = pl.DataFrame(
    {
        "num": [1.0, 2.0, None, 4.0, 5.0, 6.0],
        "zip": [101, 102, 101, 103, 102, 101],
        "const": ["k"] * 6,
        "empty": [None] * 6,
        "cls": ["b", "a", "b", "a", None, "a"],
    },
    schema_overrides={"empty": pl.String},
)


def test_target_defaults_to_last_column_and_missing_target_rows_are_counted():
    ds = prepare_dataset(RAW, DataSpec())
    assert ds.target == "cls" and ds.classes == ("a", "b")
    assert ds.n_rows == 5
    assert any("1 row with a missing 'cls' is left out" in w for w in ds.warnings)
    assert ds.y.tolist() == [1, 0, 1, 0, 0]


def test_constant_and_empty_columns_are_skipped_with_a_warning():
    ds = prepare_dataset(RAW, DataSpec())
    assert ds.schema.feature_names == ("num", "zip")
    assert any("'const' is constant" in w for w in ds.warnings)
    assert any("'empty' has no values" in w for w in ds.warnings)


def test_type_overrides_and_column_choice():
    ds = prepare_dataset(RAW, DataSpec(categorical=("zip",), exclude=("const",)))
    assert ds.schema.feature("zip").kind == Kind.CATEGORICAL
    assert ds.schema.feature("zip").levels == ("101", "102", "103")
    assert ds.schema.feature("num").kind == Kind.NUMERIC
    only = prepare_dataset(RAW, DataSpec(features=("num",)))
    assert only.schema.feature_names == ("num",)


def test_numeric_override_reports_a_stray_string():
    df = pl.DataFrame({"age": ["1", "2", "three"], "cls": ["a", "b", "a"]})
    with pytest.raises(InputError, match="column 'age' is numeric but holds the value 'three'"):
        prepare_dataset(df, DataSpec(numeric=("age",)))


@pytest.mark.parametrize(
    ("df", "spec", "message"),
    [
        (pl.DataFrame({"a": [1, 2], "cls": ["x", "x"]}), DataSpec(), "single class"),
        (
            pl.DataFrame({"a": [1, 2], "cls": [None, None]}, schema_overrides={"cls": pl.String}),
            DataSpec(),
            "no values",
        ),
        (pl.DataFrame({"a": [1, 2], "cls": ["x", "y"]}), DataSpec(target="nope"), "column 'nope' given with `target`"),
        (pl.DataFrame({"a": [1.0, float("inf")], "cls": ["x", "y"]}), DataSpec(), "infinite value"),
        (pl.DataFrame({"a": list(range(60)), "t": list(range(60))}), DataSpec(), "`target_bins`"),
    ],
)
def test_unusable_data_is_refused_with_the_reason(df, spec, message):
    with pytest.raises(InputError, match=message):
        prepare_dataset(df, spec, source="d.csv")


def test_id_like_columns_are_left_out_and_said_so():
    df = pl.DataFrame(
        {"id": [f"r{i}" for i in range(30)], "x": [1.0, 2.0] * 15, "n": list(range(30)), "cls": ["a", "b"] * 15}
    )
    ds = prepare_dataset(df, DataSpec())
    assert any("column 'id' has a different value on (nearly) every row" in w for w in ds.warnings)
    assert ds.schema.feature_names == ("x", "n") and ds.schema.left_out == (("id", "identifies rows"),)
    # whole numbers counting the rows identify them too, on a longer table
    long = pl.DataFrame({"n": list(range(200)), "x": [1.0, 2.0] * 100, "cls": ["a", "b"] * 100})
    assert prepare_dataset(long, DataSpec()).schema.left_out == (("n", "identifies rows"),)
    assert prepare_dataset(long, DataSpec(use=("n",))).schema.feature_names == ("n", "x")


def test_target_bins_use_quantiles_in_the_seeds_notation():
    df = pl.DataFrame({"x": list(range(8)), "cnt": [22.0, 100, 3152, 3200, 4548, 5000, 5956, 8714]})
    ds = prepare_dataset(df, DataSpec(target_bins=4))
    assert ds.classes[0].startswith("[22,") and ds.classes[-1].endswith(",8714]")
    assert len(ds.classes) == 4
    relabelled = df.select(target_label_expr(ds.schema.target)).to_series()
    assert relabelled.to_list() == ds.frame.get_column("cnt").to_list()


def test_numeric_integer_classes_sort_numerically():
    df = pl.DataFrame({"a": ["x", "y", "z"], "cls": [10, 2, 1]})
    assert prepare_dataset(df, DataSpec()).classes == ("1", "2", "10")


def test_folds_and_holdout_are_stratified_and_seeded():
    y = np.array([0] * 30 + [1] * 10)
    folds = stratified_folds(y, 5, seed=1)
    assert np.array_equal(folds, stratified_folds(y, 5, seed=1))
    for k in range(5):
        assert (y[folds == k] == 1).sum() == 2
    train, held = stratified_holdout(y, 0.3, seed=2)
    assert len(held) == 12 and (y[held] == 1).sum() == 3
    assert sorted([*train, *held]) == list(range(40))


def test_a_stray_string_in_a_numeric_looking_column_is_named():
    values = [str(i) for i in range(30)] + ["n/a"]
    df = pl.DataFrame({"age": values, "cls": ["a", "b"] * 15 + ["a"]})
    ds = prepare_dataset(df, DataSpec(), source="d.csv")
    assert any("column 'age' looks numeric but holds 'n/a'" in w for w in ds.warnings)
    with pytest.raises(InputError, match="column 'age' is numeric but holds the value 'n/a'"):
        prepare_dataset(df, DataSpec(numeric=("age",)))


def test_a_file_with_another_separator_gets_a_hint():
    df = pl.DataFrame({"a;c": ["1;p", "2;q"]})
    with pytest.raises(InputError, match="separated by ';'"):
        prepare_dataset(df, DataSpec(), source="semi.csv")


def test_columns_prepared_in_threads_give_the_serial_dataset_and_notes_in_order(monkeypatch):
    """Large tables prepare their columns in threads: same frame, schema and warnings, in
    column order, as one column after another."""
    import rulecli.dataset as dataset

    rng = np.random.default_rng(3)
    n = 2_000
    df = pl.DataFrame(
        {
            "x": rng.normal(size=n),
            "const": np.ones(n),
            "id": np.arange(n),
            "when": [f"2024-01-{1 + i % 28:02d}" for i in range(n)],
            "c": rng.choice(["a", "b", "c"], n),
            "empty": pl.Series([None] * n, dtype=pl.Float64),
            "num_text": [str(i % 7) if i != 5 else "n/a" for i in range(n)],
            "y": rng.choice(["p", "q"], n),
        }
    )
    monkeypatch.setattr(dataset, "THREADED_CELLS", 10**12)
    serial = prepare_dataset(df, DataSpec(target="y"))
    monkeypatch.setattr(dataset, "THREADED_CELLS", 1)
    threaded = prepare_dataset(df, DataSpec(target="y"))
    assert threaded.frame.equals(serial.frame)
    assert threaded.schema == serial.schema
    assert threaded.warnings == serial.warnings
    assert [f.name for f in serial.schema.features] == ["x", "when", "c", "num_text"]
    assert len(serial.warnings) == 4  # empty, constant, the row numbers, the stray word


def test_a_text_column_is_dates_only_if_every_value_is_one():
    from rulecli.schema import Unit, temporal_unit

    dates = [f"2024-02-{1 + i % 28:02d}" for i in range(3_000)]
    assert temporal_unit(pl.Series(dates)) == Unit.DATE
    late = dates.copy()
    late[2_500] = "soon"  # past the first values looked at
    assert temporal_unit(pl.Series(late)) is None
    assert temporal_unit(pl.Series(["soon", *dates])) is None
