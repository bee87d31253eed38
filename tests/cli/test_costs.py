"""evaluate --costs: the mean cost per row from a cost table, and --max-cost as a gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import SAMPLE, run_cli

PENGUINS = str(SAMPLE / "penguins.csv")
COSTS = "truth,Adelie,Chinstrap,Gentoo\nAdelie,0,1,1\nChinstrap,10,0,10\nGentoo,1,1,0\n"
# the same costs in the long form most cost tables are kept in (a right prediction costs 0)
LONG = (
    "true,predicted,cost\nAdelie,Chinstrap,1\nAdelie,Gentoo,1\nChinstrap,Adelie,10\nChinstrap,Gentoo,10\n"
    "Gentoo,Adelie,1\nGentoo,Chinstrap,1\n"
)


@pytest.fixture
def oner(tmp_path: Path) -> Path:
    model = tmp_path / "oner.json"
    assert run_cli("oner", PENGUINS, "-y", "species", "-q", "-o", str(model)).code == 0
    return model


def test_the_mean_cost_per_row_is_the_confusion_matrix_weighed_by_the_costs(oner: Path, tmp_path: Path):
    costs = tmp_path / "costs.csv"
    costs.write_text(COSTS)
    result = run_cli("evaluate", str(oner), PENGUINS, "--costs", str(costs), "--json")
    assert result.code == 0, result.stderr
    payload = json.loads(result.stdout)
    matrix = payload["confusion"]["matrix"]  # rows: truth, columns: predicted (Adelie, Chinstrap, Gentoo)
    # by hand: a Chinstrap called anything else costs 10, every other mistake 1
    by_hand = (matrix[0][1] + matrix[0][2] + 10 * (matrix[1][0] + matrix[1][2]) + matrix[2][0] + matrix[2][1]) / 344
    assert payload["expected_cost"] == pytest.approx(by_hand) and payload["expected_cost"] > 1


def test_max_cost_is_a_gate(oner: Path, tmp_path: Path):
    costs = tmp_path / "costs.csv"
    costs.write_text(COSTS)
    failing = run_cli("evaluate", str(oner), PENGUINS, "--costs", str(costs), "--max-cost", "0.5", "-q")
    assert failing.code == 1 and "quality gate failed: expected_cost 1.5988 > 0.5000 (--max-cost)" in failing.stderr
    passing = run_cli("evaluate", str(oner), PENGUINS, "--costs", str(costs), "--max-cost", "2", "-q")
    assert passing.code == 0, passing.stderr


@pytest.mark.parametrize(
    ("table", "args", "message"),
    [
        ("truth,Adelie,Gentoo\nAdelie,0,1\nGentoo,1,0\n", [], "the cost table has no row for 'Chinstrap'"),
        (COSTS.replace("10,0,10", "ten,0,10"), [], "the cost of predicting 'Adelie' for 'Chinstrap' is not a number"),
        (None, ["--max-cost", "1"], "--max-cost holds the mean cost per row against a bound: give the costs"),
        (LONG.replace("Gentoo,Chinstrap,1\n", ""), [], "no row for (true 'Gentoo', predicted 'Chinstrap')"),
        (LONG + "Gentoo,Chinstrap,2\n", [], "gives (true 'Gentoo', predicted 'Chinstrap') twice"),
    ],
)
def test_a_cost_table_that_does_not_fit_is_refused(oner: Path, tmp_path: Path, table, args, message):
    costs = tmp_path / "costs.csv"
    if table is not None:
        costs.write_text(table)
        args = [*args, "--costs", str(costs)]
    result = run_cli("evaluate", str(oner), PENGUINS, *args)
    assert result.code == 2 and message in result.stderr and result.stderr.count("\n") == 1, result.stderr


FLIP = "x,y\n" + "a,no\n" * 6 + "a,yes\n" * 4 + "b,yes\n" * 3 + "b,no\n"
MISSED_YES_COSTS_5 = "truth,no,yes\nno,0,1\nyes,5,0\n"


def test_a_learners_rules_predict_their_class_of_least_expected_cost(tmp_path: Path):
    data, costs, plain, costed = (tmp_path / n for n in ("d.csv", "c.csv", "plain.json", "costed.json"))
    data.write_text(FLIP)
    costs.write_text(MISSED_YES_COSTS_5)
    assert run_cli("oner", str(data), "-y", "y", "--min-bucket", "1", "-q", "-o", str(plain)).code == 0
    result = run_cli("oner", str(data), "-y", "y", "--min-bucket", "1", "--costs", str(costs), "-o", str(costed))
    assert result.code == 0, result.stderr
    # x = a holds 6 no and 4 yes: 'no' would cost 4 x 5 = 20, 'yes' 6 x 1 = 6
    assert "IF x = 'a' THEN y = 'no'  (covers 10, correct 6)" in run_cli("show", str(plain)).stdout
    assert "IF x = 'a' THEN y = 'yes'  (covers 10, correct 4)" in result.stdout
    saved = json.loads(costed.read_text())["training"]
    assert saved["rules_relabelled_by_costs"] == 1 and saved["costs"]["yes"]["no"] == 5
    cost_of = {
        m: json.loads(run_cli("evaluate", str(m), str(data), "--costs", str(costs), "--json").stdout)["expected_cost"]
        for m in (plain, costed)
    }
    assert cost_of[costed] == pytest.approx(7 / 14) and cost_of[plain] == pytest.approx(21 / 14)


def test_costs_apply_to_the_cross_validation_folds_too(tmp_path: Path):
    costs = tmp_path / "c.csv"
    costs.write_text(COSTS)
    result = run_cli("ripper", PENGUINS, "-y", "species", "--costs", str(costs), "--cv", "3", "--json", "-q")
    assert result.code == 0, result.stderr
    assert "rules_relabelled_by_costs" in json.loads(result.stdout)["training"]


@pytest.mark.parametrize("learner", ["tree", "forest"])
def test_a_tree_or_forest_learns_with_the_costs_as_class_weights(learner: str, tmp_path: Path):
    data, costs = tmp_path / "d.csv", tmp_path / "c.csv"
    data.write_text(FLIP)
    costs.write_text(MISSED_YES_COSTS_5)
    options = ["--max-depth", "1", "--min-samples-leaf", "3"] + (["-B", "40"] if learner == "forest" else [])
    options += ["--ccp-alpha", "0"] if learner == "tree" else []

    def predicted(*more: str) -> list[str]:
        model = tmp_path / f"{learner}{len(more)}.json"
        assert run_cli(learner, str(data), "-y", "y", *options, *more, "-q", "-o", str(model)).code == 0
        out = run_cli("predict", str(model), str(data)).stdout.splitlines()[1:]
        return [line.rsplit(",", 1)[-1] for line in out]

    # x = a holds 6 no and 4 yes: a 'yes' missed costs 5, so the costed leaf weighs 6 x 1 against 4 x 5
    assert predicted()[:10] == ["no"] * 10
    assert predicted("--costs", str(costs))[:10] == ["yes"] * 10
    model = tmp_path / f"{learner}2.json"
    training = json.loads(model.read_text())["training"]
    assert training["costs"]["yes"]["no"] == 5 and training["weights"] == "costs"


def test_costs_need_classes(tmp_path: Path):
    costs = tmp_path / "c.csv"
    costs.write_text(COSTS)
    result = run_cli("tree", PENGUINS, "-y", "body_mass_g", "--costs", str(costs))
    assert result.code == 2 and "Error: --costs needs classes; this target is a number" in result.stderr


def test_a_long_cost_table_is_the_wide_one(oner: Path, tmp_path: Path):
    wide, long = tmp_path / "wide.csv", tmp_path / "long.csv"
    wide.write_text(COSTS)
    long.write_text(LONG)
    costs = [
        json.loads(run_cli("evaluate", str(oner), PENGUINS, "--costs", str(t), "--json").stdout)["expected_cost"]
        for t in (wide, long)
    ]
    assert costs[0] == costs[1] > 1
    learned = [run_cli("tree", PENGUINS, "-y", "species", "--costs", str(t), "-q").stdout for t in (wide, long)]
    assert learned[0] == learned[1] and learned[0]
