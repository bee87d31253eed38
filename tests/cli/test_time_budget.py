"""--time-budget: a learner that runs out of time keeps what it has learned, says what it
cut, exits 0, and its model predicts like any other."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from rulecli import learners
from tests.conftest import SAMPLE, run_cli

PENGUINS = str(SAMPLE / "penguins.csv")
# far less than any learner needs, so every check a learner makes finds the budget spent
NO_TIME = "0.000001"


def _noisy(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    x = {f"x{j}": rng.normal(size=n).round(3) for j in range(6)}
    score = x["x0"] - 0.5 * x["x1"] + rng.normal(0, 0.7, n)
    return pl.DataFrame({**x, "y": np.where(score > 0.2, "pos", "neg")})


@pytest.mark.parametrize("learner", learners.names("classes"))
def test_every_learner_out_of_time_still_writes_a_model_that_predicts(learner: str, tmp_path: Path):
    model = tmp_path / "m.json"
    result = run_cli(learner, PENGUINS, "-y", "species", "--time-budget", NO_TIME, "-o", str(model))
    assert result.code == 0, result.stderr
    scored = run_cli("evaluate", str(model), PENGUINS, "--json")
    assert scored.code == 0 and 0 <= json.loads(scored.stdout)["accuracy"] <= 1
    cut = json.loads(model.read_text())["training"].get("time_budget")
    if cut is not None:  # oner makes one pass and has nothing to cut
        assert cut["seconds"] == float(NO_TIME) and cut["cut"]
        warning = "Warning: the time budget (1e-06 s) ran out, and the model is what was learned by then: "
        assert warning in result.stderr


def test_a_long_ripper_is_cut_to_the_rules_it_has(tmp_path: Path):
    data, model = tmp_path / "d.parquet", tmp_path / "m.json"
    _noisy(4000, 1).write_parquet(data)
    whole = run_cli("ripper", str(data), "-y", "y", "-q", "--json")
    assert whole.code == 0 and "time_budget" not in json.loads(whole.stdout)["training"]
    result = run_cli("ripper", str(data), "-y", "y", "--time-budget", NO_TIME, "-o", str(model))
    assert result.code == 0, result.stderr
    saved = json.loads(model.read_text())
    assert saved["training"]["time_budget"]["cut"] == [
        "ripper: rules for class 'pos' stopped after 0",
        "ripper: optimisation passes skipped",
    ]
    assert saved["rules"] == [] and saved["default"]["prediction"] == "neg"


def test_a_long_forest_keeps_the_trees_it_grew(tmp_path: Path):
    # a forest this long grows in batches of a few dozen trees (a small one is one batch)
    data, model = tmp_path / "d.parquet", tmp_path / "f.json"
    _noisy(4000, 2).write_parquet(data)
    result = run_cli("forest", str(data), "-y", "y", "--trees", "600", "--time-budget", NO_TIME, "-o", str(model))
    assert result.code == 0, result.stderr
    saved = json.loads(model.read_text())
    grown = saved["training"]["trees"]
    assert 1 <= grown < 600 and len(saved["trees"]) == grown
    assert saved["training"]["time_budget"]["cut"] == [f"forest: {grown} of 600 trees grown"]
    scored = json.loads(run_cli("evaluate", str(model), str(data), "--json").stdout)
    assert scored["accuracy"] > 0.7


def test_with_cv_each_fold_and_the_final_fit_get_a_share(tmp_path: Path):
    model = tmp_path / "m.json"
    result = run_cli("tree", PENGUINS, "-y", "species", "--cv", "3", "--time-budget", "0.000004", "-o", str(model))
    assert result.code == 0, result.stderr
    assert json.loads(model.read_text())["training"]["time_budget"]["seconds"] == 0.000001


@pytest.mark.parametrize("seconds", ["0", "1e9"])
def test_a_budget_out_of_range_is_refused_before_reading(seconds: str):
    result = run_cli("ripper", "no-such-file.csv", "-y", "y", "--time-budget", seconds)
    assert result.code == 2 and result.stderr.startswith("Error: --time-budget must be a number of seconds above 0")


def test_the_python_api_takes_a_time_budget():
    from rulecli import api

    model = api.fit("ripper", PENGUINS, target="species", time_budget=1e-6)
    assert "ripper: optimisation passes skipped" in model.info.training["time_budget"]["cut"]
    assert "time_budget" not in api.fit("ripper", PENGUINS, target="species").info.training
