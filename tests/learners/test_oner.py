"""OneR against the seeds' worked example, Weka's discretisation and its own options."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.errors import ParamError
from rulecli.learners.oner import OneRParams, fit_oner
from rulecli.model.core import Closed, Condition, Op
from rulecli.model.serde import dumps
from tests.conftest import ROOT, SAMPLE


def _house():
    return prepare_dataset(pl.read_csv(SAMPLE / "house.csv"), DataSpec(target="value"))


def test_house_example_from_the_seeds():
    model = fit_oner(_house(), OneRParams())
    assert model.info.training["errors"] == {"location": 4, "size": 3, "pets": 4}
    assert model.info.training["feature"] == "size"
    rules = {r.conditions[0].value: (r.prediction, r.stats.covered, r.stats.correct) for r in model.rules}
    assert rules == {"small": ("low", 4, 2), "medium": ("medium", 4, 3), "big": ("high", 2, 2)}


def test_cross_table_counts_are_the_seeds_table():
    model = fit_oner(_house(), OneRParams())
    counts = {r.conditions[0].value: r.stats.class_counts for r in model.rules}
    # classes are alphabetical: high, low, medium; seed table lists low, medium, high
    assert counts == {"big": (2, 0, 0), "medium": (0, 1, 3), "small": (1, 2, 1)}


def test_ties_go_to_the_first_feature_or_the_smallest_chi2_p_value():
    # both make 2/8 errors; 'four' (first) has chi2 = 4 on 3 dof (p = 0.26),
    # 'two' has chi2 = 2 on 1 dof (p = 0.16)
    df = pl.DataFrame(
        {
            "four": ["w", "w", "x", "x", "y", "y", "z", "z"],
            "two": ["a", "a", "b", "b", "a", "a", "b", "b"],
            "cls": ["p", "p", "n", "n", "p", "n", "p", "n"],
        }
    )
    ds = prepare_dataset(df, DataSpec())
    first = fit_oner(ds, OneRParams(ties="first"))
    assert first.info.training["errors"] == {"four": 2, "two": 2}
    assert first.info.training["feature"] == "four"
    chi2 = fit_oner(ds, OneRParams(ties="chi2"))
    assert chi2.info.training["feature"] == "two"
    p_values = chi2.info.training["chi2_p_value"]
    assert p_values["two"] == pytest.approx(0.1573, abs=1e-4)
    assert p_values["four"] == pytest.approx(0.2615, abs=1e-4)


def test_missing_values_are_their_own_value():
    df = pl.DataFrame({"f": ["a", None, None, "a", "b"], "cls": ["x", "y", "y", "x", "y"]})
    model = fit_oner(prepare_dataset(df, DataSpec()), OneRParams())
    missing = [r for r in model.rules if r.conditions[0].op == Op.MISSING]
    assert len(missing) == 1 and missing[0].prediction == "y" and missing[0].stats.covered == 2


def test_numeric_feature_uses_wekas_min_bucket_intervals():
    iris = pl.read_csv(ROOT / "tests" / "data" / "iris.csv")
    model = fit_oner(prepare_dataset(iris, DataSpec(target="class")), OneRParams())
    # Weka 3.6 `OneR -B 6` on iris.arff: petalwidth < 0.8, < 1.75, >= 1.75 (144/150 correct)
    assert model.info.training["feature"] == "petalwidth"
    assert [r.conditions[0] for r in model.rules] == [
        Condition("petalwidth", Op.LT, 0.8),
        Condition("petalwidth", Op.INTERVAL, (0.8, 1.75), Closed.LEFT),
        Condition("petalwidth", Op.GE, 1.75),
    ]
    assert sum(r.stats.correct for r in model.rules) == 144


def test_other_discretisers_give_right_closed_intervals():
    iris = pl.read_csv(ROOT / "tests" / "data" / "iris.csv")
    ds = prepare_dataset(iris, DataSpec(target="class"))
    model = fit_oner(ds, OneRParams(discretize="equal-width", bins=3))
    ops = [r.conditions[0].op for r in model.rules]
    assert ops == [Op.LE, Op.INTERVAL, Op.GT]
    assert model.info.schema.feature(model.info.training["feature"]).cuts.method == "equal-width"


def test_validation_fraction_chooses_on_held_out_rows():
    rng = np.random.default_rng(1)
    n = 400
    signal = rng.integers(0, 2, n)
    cls = np.where(rng.random(n) < 0.85, signal, 1 - signal)
    df = pl.DataFrame(
        {
            "row_id": [f"r{i}" for i in range(n)],  # perfect on training rows, useless on new ones
            "signal": signal.astype(str),
            "cls": cls.astype(str),
        }
    )
    ds = prepare_dataset(df, DataSpec(use=("row_id",)))  # an ID is left out unless asked for
    assert fit_oner(ds, OneRParams()).info.training["feature"] == "row_id"
    held = fit_oner(ds, OneRParams(validation_fraction=0.3, seed=3))
    assert held.info.training["feature"] == "signal"
    assert held.info.training["judged_rows"] == 120


def test_validation_fraction_scores_a_feature_whose_rules_all_predict_one_class():
    """Such a feature's rules compile to one literal class: it is still judged on every
    held-out row (1 of 6,000 before)."""
    rng = np.random.default_rng(2)
    n = 600
    df = pl.DataFrame({"flat": rng.choice(["a", "b"], n), "cls": np.where(rng.random(n) < 0.8, "p", "q")})
    model = fit_oner(prepare_dataset(df, DataSpec()), OneRParams(validation_fraction=0.3, seed=1))
    assert model.info.training["judged_rows"] == 180
    assert {r.prediction for r in model.rules} == {"p"}


def test_same_input_same_bytes():
    a = dumps(fit_oner(_house(), OneRParams(seed=5)))
    b = dumps(fit_oner(_house(), OneRParams(seed=5)))
    assert a == b
    assert '"seed": 5' in a


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"min_bucket": 0}, "min_bucket"),
        ({"discretize": "magic"}, "discretize"),
        ({"ties": "random"}, "ties"),
        ({"validation_fraction": 1.0}, "validation_fraction"),
    ],
)
def test_bad_parameters_name_the_parameter(kwargs, message):
    with pytest.raises(ParamError, match=message):
        OneRParams(**kwargs)
