"""--monotone: the prediction never moves against a constrained feature, all else fixed.

Checked on random tables whose truth is not monotone (so an unconstrained model breaks
the order, as the last test shows), on a grid across and beyond each feature's range,
for every learner that takes the option."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import rulecli
from rulecli.search.monotone import pooled_non_increasing
from tests.conftest import run_cli

MONOTONE = ("tree", "forest", "ripper")  # the learners that take --monotone
FAST = {"tree": {}, "forest": {"trees": 5}, "ripper": {}}


def _table(seed: int, n: int, regression: bool) -> pl.DataFrame:
    """Two numbers (some missing), a category, and a target that rises and falls with both."""
    rng = np.random.default_rng(seed)
    x0, x1 = rng.uniform(-3, 3, n), rng.normal(size=n)
    group = rng.choice(["a", "b", "c"], n)
    score = np.sin(2 * x0) + x1**2 - 1 + (group == "a") + rng.normal(scale=0.5, size=n)
    x0[rng.random(n) < 0.05] = np.nan
    target = score if regression else np.where(score > 0, "yes", "no")
    return pl.DataFrame({"x0": x0, "x1": x1, "group": group, "y": target}).with_columns(pl.col("x0").fill_nan(None))


def _violations(model: rulecli.Predictor, frame: pl.DataFrame, column: str, sign: int) -> int:
    """Rows whose prediction moves against ``sign`` between neighbouring grid values."""
    base = frame.drop("y").head(40)
    grid = np.linspace(-5.0, 5.0, 41)
    rows = pl.concat([base.with_columns(pl.lit(float(g)).alias(column)) for g in grid])
    if getattr(model, "regression", False):
        out = rulecli.predict(model, rows)["prediction"]
    else:
        out = rulecli.predict(model, rows, proba=True)[f"proba_{model.classes[1]}"]
    values = out.cast(pl.Float64).to_numpy().reshape(grid.size, base.height)
    return int((sign * np.diff(values, axis=0) < -1e-9).sum())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    learner=st.sampled_from(MONOTONE),
    seed=st.integers(0, 2**16),
    n=st.integers(80, 400),
    signs=st.tuples(st.sampled_from((1, -1, 0)), st.sampled_from((1, -1, 0))),
    regression=st.booleans(),
)
def test_the_prediction_never_moves_against_a_constraint(
    learner: str, seed: int, n: int, signs: tuple[int, int], regression: bool
):
    assume(any(signs))
    assume(not (regression and learner == "ripper"))  # ripper learns classes only
    frame = _table(seed, n, regression)
    assume(regression or frame["y"].n_unique() == 2)
    spec = ",".join(f"x{j}:{'+' if s > 0 else '-'}" for j, s in enumerate(signs) if s)
    model = rulecli.fit(learner, frame, target="y", monotone=spec, seed=seed, **FAST[learner])
    for j, sign in enumerate(signs):
        if sign:
            assert _violations(model, frame, f"x{j}", sign) == 0, (spec, f"x{j}")


@pytest.mark.parametrize("learner", MONOTONE)
def test_without_the_constraint_the_same_table_breaks_the_order(learner: str):
    frame = _table(7, 600, regression=False)
    options = {"ccp_alpha": 0.0} if learner == "tree" else FAST[learner]
    free = rulecli.fit(learner, frame, target="y", **options)
    bound = rulecli.fit(learner, frame, target="y", monotone="x0:+,x1:-", **options)
    assert _violations(free, frame, "x0", 1) + _violations(free, frame, "x1", -1) > 0
    assert _violations(bound, frame, "x0", 1) == _violations(bound, frame, "x1", -1) == 0
    assert bound.info.params["monotone"] == "x0:+,x1:-"


def test_a_regression_tree_keeps_its_constraint_through_pruning():
    frame = _table(3, 500, regression=True)
    model = rulecli.fit("tree", frame, target="y", monotone="x1:+", ccp_alpha=0.05)
    assert _violations(model, frame, "x1", 1) == 0 and model.nodes.n_nodes > 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("tree", "--monotone", "group:+"), "--monotone 'group' is categorical"),
        (("tree", "--monotone", "age:+"), "--monotone 'age' is not a feature of this table"),
        (("forest", "--monotone", "x0:up"), "--monotone 'x0:up' is not COLUMN:+ or COLUMN:-"),
        (("tree", "--monotone", "x0:+,x0:-"), "--monotone 'x0' is constrained twice"),
        (("ripper", "--unordered", "--monotone", "x0:+"), "--monotone takes an ordered list"),
    ],
)
def test_a_constraint_that_cannot_hold_is_refused(tmp_path: Path, args: tuple[str, ...], message: str):
    data = tmp_path / "t.csv"
    _table(1, 200, regression=False).write_csv(data)
    learner, *options = args
    refused = run_cli(learner, str(data), "-y", "y", *options, "-o", str(tmp_path / "m.json"))
    assert refused.code == 2 and refused.stderr.startswith(f"Error: {message}"), refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("learner", ["cn2", "aq", "brl"])
def test_a_learner_whose_search_cannot_honour_it_says_why(tmp_path: Path, learner: str):
    data = tmp_path / "t.csv"
    _table(1, 200, regression=False).write_csv(data)
    refused = run_cli(learner, str(data), "-y", "y", "--monotone", "x0:+", "-o", str(tmp_path / "m.json"))
    assert refused.code == 2 and refused.stderr.startswith("Error: --monotone is refused here: "), refused.stderr
    assert "(ripper, tree and forest take it)" in refused.stderr and not (tmp_path / "m.json").exists()


def test_three_classes_have_no_one_share_to_constrain(tmp_path: Path):
    data = tmp_path / "t.csv"
    frame = _table(1, 300, regression=True)
    score = frame["y"].to_numpy()
    grade = np.where(score < -0.5, "low", np.where(score < 0.5, "mid", "high"))
    frame.with_columns(pl.Series("y", grade)).write_csv(data)
    refused = run_cli("tree", str(data), "-y", "y", "--monotone", "x0:+")
    assert refused.code == 2 and "--monotone needs a numeric target or two classes; 'y' has 3" in refused.stderr


def test_pooling_keeps_order_and_weighted_means():
    pooled = pooled_non_increasing(np.array([0.9, 0.6, 0.7, 0.2, 0.3]), np.array([10.0, 1.0, 3.0, 1.0, 1.0]))
    assert pooled.tolist() == pytest.approx([0.9, 0.675, 0.675, 0.25, 0.25])
    assert np.all(np.diff(pooled) <= 0)
