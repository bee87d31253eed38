"""distill: rules that imitate a forest, their fidelity recorded, and the figure checkable with evaluate."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import SAMPLE, run_cli

PENGUINS = SAMPLE / "penguins.csv"


@pytest.fixture
def halves(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A forest learned on one half of the penguins, and the two halves."""
    # (the file's odd and even rows are not alike: a tree of the even ones scores 0.85 on the odd)
    table = pl.read_csv(PENGUINS).sample(fraction=1.0, shuffle=True, seed=1)
    train, test, forest = tmp_path / "train.csv", tmp_path / "test.csv", tmp_path / "forest.json"
    table.head(172).write_csv(train)
    table.tail(172).write_csv(test)
    assert run_cli("forest", str(train), "-y", "species", "-q", "-o", str(forest)).code == 0
    return forest, train, test


def test_the_fidelity_recorded_is_what_evaluate_finds_against_the_forests_predictions(halves, tmp_path: Path):
    forest, train, test = halves
    rules = tmp_path / "rules.json"
    result = run_cli("distill", str(forest), str(train), "--test", str(test), "--max-rules", "3", "-o", str(rules))
    assert result.code == 0, result.stderr
    saved = json.loads(rules.read_text())
    record = saved["training"]["distilled"]
    assert record["teacher"] == "random-forest" and record["measured_rows"] == pl.read_csv(test).height
    assert 0 < len(saved["rules"]) <= 3
    # the forest's own answers as the class: evaluate's accuracy is the fidelity
    said = tmp_path / "said.csv"
    predicted = run_cli("predict", str(forest), str(test), "-o", str(tmp_path / "p.csv"))
    assert predicted.code == 0, predicted.stderr
    answers = pl.read_csv(tmp_path / "p.csv")["prediction"]
    pl.read_csv(test).with_columns(answers.alias("species")).write_csv(said)
    scored = json.loads(run_cli("evaluate", str(rules), str(said), "--json").stdout)
    assert scored["accuracy"] == pytest.approx(record["fidelity"], abs=1e-12)
    truth = json.loads(run_cli("evaluate", str(rules), str(test), "--json").stdout)
    assert truth["accuracy"] == pytest.approx(record["accuracy"]["rules"], abs=1e-12)
    assert record["accuracy"]["teacher"] > 0.9 and record["fidelity"] > 0.85


def test_without_a_test_table_a_hashed_share_is_held_out(halves, tmp_path: Path):
    forest, train, _ = halves
    result = run_cli("distill", str(forest), str(train), "--learner", "cn2", "--holdout", "0.3", "--json", "-q")
    assert result.code == 0, result.stderr
    record = json.loads(result.stdout)["training"]["distilled"]
    rows = pl.read_csv(train).height
    assert record["rows"] + record["measured_rows"] == rows and 0.2 * rows < record["measured_rows"] < 0.4 * rows
    assert record["measured_on"] == "a hashed 0.3 of the rows"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--learner", "forest"], "Error: --learner must be one of ripper, cn2, oner, aq, brl, reduct, tree, got"),
        (["--learner", "oner", "--max-rules", "2"], "Error: oner has no rule budget; --max-rules goes with"),
        (["--holdout", "1.5"], "Error: --holdout must be a share of the rows in (0, 1), got 1.5"),
    ],
)
def test_what_distill_cannot_do_is_refused(halves, args: list[str], message: str):
    forest, train, _ = halves
    result = run_cli("distill", str(forest), str(train), *args)
    assert result.code == 2 and result.stderr.startswith(message), result.stderr


def test_a_model_of_numbers_is_not_distilled(tmp_path: Path):
    model = tmp_path / "reg.json"
    assert run_cli("tree", str(PENGUINS), "-y", "body_mass_g", "-q", "-o", str(model)).code == 0
    result = run_cli("distill", str(model), str(PENGUINS))
    assert result.code == 2 and result.stderr == "Error: distill imitates a classifier; this model predicts numbers\n"


def test_made_up_rows_labelled_by_the_teacher_are_learned_from_too(halves, tmp_path: Path):
    forest, train, test = halves
    result = run_cli("distill", str(forest), str(train), "--test", str(test), "--json", "-q")
    assert result.code == 0, result.stderr
    record = json.loads(result.stdout)["training"]["distilled"]
    assert record["rows"] == pl.read_csv(train).height and record["synthetic_rows"] == 2 * record["rows"]
    assert record["fidelity"] > 0.85
    none = run_cli("distill", str(forest), str(train), "--test", str(test), "--synthetic", "0", "--json", "-q")
    assert json.loads(none.stdout)["training"]["distilled"]["synthetic_rows"] == 0
