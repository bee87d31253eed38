"""One typing rule for the target, in every command: integer codes are classes, floats and
many distinct integers are numbers; --regression / --classification decide instead."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tests.conftest import run_cli


def _table(tmp_path: Path, y: list[object], name: str = "t.csv") -> str:
    x = np.arange(len(y), dtype=float)
    path = tmp_path / name
    pl.DataFrame({"x": x, "y": y}, strict=False).write_csv(path)
    return str(path)


def _model(tmp_path: Path, *args: str) -> dict[str, object]:
    out = tmp_path / "m.json"
    result = run_cli(*args, "-o", str(out), "-q")
    assert result.code == 0, result.stderr
    return json.loads(out.read_text())


@pytest.mark.parametrize("learner", ["tree", "forest"])
def test_integer_class_codes_are_classes_for_trees_and_forests(tmp_path: Path, learner: str):
    data = _table(tmp_path, [0] * 20 + [1] * 20)
    model = _model(tmp_path, learner, data, "--seed", "1")
    assert model["classes"] == ["0", "1"]
    scored = run_cli("evaluate", str(tmp_path / "m.json"), data, "--json")
    assert json.loads(scored.stdout)["accuracy"] == 1.0
    digits = _table(tmp_path, [i % 10 for i in range(100)], "digits.csv")
    assert _model(tmp_path, learner, digits)["classes"] == [str(i) for i in range(10)]


def test_floats_and_many_integers_are_numbers_for_trees(tmp_path: Path):
    floats = _table(tmp_path, [0.5] * 10 + [1.5] * 10, "floats.csv")
    assert _model(tmp_path, "tree", floats)["classes"] == []
    many = _table(tmp_path, list(range(60)), "many.csv")
    assert _model(tmp_path, "tree", many)["classes"] == []


@pytest.mark.parametrize(
    ("values", "reading"),
    [
        (list(range(11)) * 3, "integers of 11 values"),
        ([0, 5, 10, 25, 100] * 6, "integers of 5 values from 0 to 100"),
        ([0] * 12 + [1] * 8 + [2] * 5 + [3] * 3 + [4, 7], "counts (integers of 6 values, 0 the most frequent)"),
    ],
)
def test_integers_that_count_or_measure_are_numbers_and_the_model_says_why(
    tmp_path: Path, values: list[int], reading: str
):
    model = _model(tmp_path, "tree", _table(tmp_path, values))
    assert model["classes"] == [] and model["schema"]["target"]["reading"] == reading
    refused = run_cli("oner", _table(tmp_path, values))
    assert refused.code == 2 and f"holds {reading}, a number this learner cannot predict" in refused.stderr


@pytest.mark.parametrize(
    ("values", "reading"),
    [
        ([1, 2, 3, 4, 5] * 6, "integer codes of 5 values"),  # ratings
        (list(range(10)) * 3, "integer codes of 10 values"),  # the digits: no value the most frequent
        ([1, 2, 10] * 10, "integer codes of 3 values"),
    ],
)
def test_integer_codes_stay_classes_and_the_model_says_why(tmp_path: Path, values: list[int], reading: str):
    model = _model(tmp_path, "tree", _table(tmp_path, values))
    assert model["classes"] == [str(v) for v in sorted(set(values))]
    assert model["schema"]["target"]["reading"] == reading


def test_regression_and_classification_force_the_type(tmp_path: Path):
    codes = _table(tmp_path, [0] * 10 + [1] * 10, "codes.csv")
    assert _model(tmp_path, "tree", codes, "--regression")["classes"] == []
    floats = _table(tmp_path, [0.5] * 10 + [1.5] * 10, "floats.csv")
    assert _model(tmp_path, "tree", floats, "--classification")["classes"] == ["0.5", "1.5"]
    assert _model(tmp_path, "oner", floats, "--classification")["classes"] == ["0.5", "1.5"]


def test_rule_learners_refuse_a_number_naming_the_ways_out(tmp_path: Path):
    floats = _table(tmp_path, [0.5] * 10 + [1.5] * 10)
    refused = run_cli("oner", floats)
    assert refused.code == 2 and refused.stderr.count("\n") == 1
    assert (
        "holds floats" in refused.stderr
        and "--target-bins K" in refused.stderr
        and "--classification" in refused.stderr
    )
    forced = run_cli("aq", floats, "--regression")
    assert forced.code == 2 and "this learner predicts classes" in forced.stderr
    codes = _table(tmp_path, [0] * 10 + [1] * 10, "codes.csv")
    assert run_cli("oner", codes).code == 0
