"""tree and forest through the real command: learn, save, predict, evaluate, gates, pipes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl

from tests.conftest import SAMPLE, run_cli

PENGUINS = str(SAMPLE / "penguins.csv")


def test_tree_learn_save_predict_evaluate(tmp_path: Path):
    model_json, model_txt = tmp_path / "t.json", tmp_path / "t.txt"
    learned = run_cli("tree", PENGUINS, "-y", "species", "--max-depth", "3", "-o", str(model_json))
    assert learned.code == 0, learned.stderr
    assert learned.stdout.startswith("# tree for species: ")
    assert "|--- (flipper_length_mm < 206.5 or missing)" in learned.stdout
    assert "\nIF (flipper_length_mm < 206.5 or missing) AND " in learned.stdout
    body = json.loads(model_json.read_text())
    assert body["kind"] == "tree" and body["algorithm"] == "cart" and body["params"]["criterion"] == "gini"
    assert run_cli("tree", PENGUINS, "-y", "species", "--max-depth", "3", "-o", str(model_txt), "-q").code == 0
    predicted = run_cli("predict", str(model_json), PENGUINS, "--proba", "--explain")
    assert predicted.code == 0, predicted.stderr
    header = predicted.stdout.splitlines()[0]
    assert header == "prediction,proba_Adelie,proba_Chinstrap,proba_Gentoo,rule,rule_text"
    from_json = json.loads(run_cli("evaluate", str(model_json), PENGUINS, "--json").stdout)
    from_text = json.loads(run_cli("evaluate", str(model_txt), PENGUINS, "--json").stdout)
    assert from_json["accuracy"] == from_text["accuracy"] > 0.95
    # per-leaf statistics: the text form adds its (never used) default rule
    assert [r["covered"] for r in from_json["rules"]] == [r["covered"] for r in from_text["rules"]][:-1]
    # the model on stdout is itself a model: a pipe
    piped = run_cli("predict", "-", PENGUINS, stdin=learned.stdout)
    assert piped.code == 0 and piped.stdout == run_cli("predict", str(model_json), PENGUINS).stdout


def test_regression_tree_and_gates(tmp_path: Path):
    model = tmp_path / "r.json"
    learned = run_cli("tree", PENGUINS, "-y", "body_mass_g", "--max-depth", "3", "-o", str(model))
    assert learned.code == 0, learned.stderr
    assert json.loads(model.read_text())["classes"] == []
    metrics = json.loads(run_cli("evaluate", str(model), PENGUINS, "--json").stdout)
    assert set(metrics) >= {"mae", "rmse", "r2"} and metrics["rows"] == 342
    assert 0.8 < metrics["r2"] < 1
    failed = run_cli("evaluate", str(model), PENGUINS, "--max-rmse", "10")
    assert (
        failed.code == 1 and "quality gate failed: rmse" in failed.stderr and "(--max-rmse), over by" in failed.stderr
    )
    assert run_cli("evaluate", str(model), PENGUINS, "--max-rmse", "1000", "--min-r2", "0.5").code == 0
    wrong = run_cli("evaluate", str(model), PENGUINS, "--min-accuracy", "0.5")
    assert wrong.code == 2 and "--min-accuracy does not apply" in wrong.stderr
    refused = run_cli("tree", PENGUINS, "-y", "body_mass_g", "-o", str(tmp_path / "r.txt"))
    assert refused.code == 2 and "saved as .json" in refused.stderr
    assert not (tmp_path / "r.txt").exists()
    proba = run_cli("predict", str(model), PENGUINS, "--proba")
    assert proba.code == 2 and "--proba needs classes" in proba.stderr
    # --json pipes a regression tree
    piped = run_cli("tree", PENGUINS, "-y", "body_mass_g", "--max-depth", "3", "--json", "-q")
    predicted = run_cli("predict", "-", PENGUINS, stdin=piped.stdout)
    assert predicted.code == 0 and len(predicted.stdout.splitlines()) == 345
    binned = run_cli("tree", PENGUINS, "-y", "body_mass_g", "--target-bins", "3", "--max-depth", "2", "-q", "--json")
    assert json.loads(binned.stdout)["classes"][0].startswith("[2700")


def test_forest_jobs_seed_oob_and_partial_dependence(tmp_path: Path):
    one, two = tmp_path / "f1.json", tmp_path / "f2.json"
    pd_out = tmp_path / "pd.csv"
    common = ["-y", "species", "--trees", "12", "--seed", "3"]
    first = run_cli(
        "forest",
        PENGUINS,
        *common,
        "-o",
        str(one),
        "--partial-dependence",
        "bill_length_mm",
        "--class",
        "Gentoo",
        "--pd-out",
        str(pd_out),
    )
    assert first.code == 0, first.stderr
    assert first.stdout.startswith("# random forest for species: 12 trees, 2 features tried per node")
    assert "# OOB error rate: " in first.stdout and "importance D_j" in first.stdout
    assert "partial dependence on bill_length_mm: f_Gentoo" in first.stderr
    assert run_cli("forest", PENGUINS, *common, "-o", str(two), "--jobs", "2", "-q").code == 0
    assert one.read_bytes() == two.read_bytes()
    curve = pl.read_csv(pd_out)
    assert curve.columns == ["bill_length_mm", "f_Gentoo"] and curve.height >= 10
    training = json.loads(one.read_text())["training"]
    assert 0 <= training["oob_error"] < 0.1 and set(training["importance"]) >= {"bill_length_mm", "island"}
    predicted = run_cli("predict", str(one), PENGUINS, "--proba", "--keep", "species")
    assert predicted.code == 0, predicted.stderr
    frame = pl.read_csv(predicted.stdout.encode())
    assert frame.columns == ["species", "prediction", "proba_Adelie", "proba_Chinstrap", "proba_Gentoo"]
    assert (frame["species"] == frame["prediction"]).mean() > 0.95
    explain = run_cli("predict", str(one), PENGUINS, "--explain")
    assert explain.code == 2 and "a forest has none" in explain.stderr
    # a third of the truth relabelled, so the forest cannot score 1 and the gate can fail
    relabelled = tmp_path / "relabelled.csv"
    truth = pl.read_csv(PENGUINS)
    truth.with_columns(
        pl.when(pl.int_range(pl.len()) % 3 == 0).then(pl.lit("Gentoo")).otherwise("species").alias("species")
    ).write_csv(relabelled)
    accuracy = json.loads(run_cli("evaluate", str(one), str(relabelled), "--json").stdout)["accuracy"]
    assert accuracy < 0.9
    assert run_cli("evaluate", str(one), str(relabelled), "--min-accuracy", str(accuracy)).code == 0
    above = run_cli("evaluate", str(one), str(relabelled), "--min-accuracy", str(accuracy + 0.001))
    assert above.code == 1 and "quality gate failed: accuracy" in above.stderr
    refused = run_cli("forest", PENGUINS, "-y", "species", "--trees", "2", "-o", str(tmp_path / "f.txt"))
    assert refused.code == 2 and "saved as .json" in refused.stderr


def test_forest_regression_cv_and_permutation_importance(tmp_path: Path):
    metrics = tmp_path / "cv.json"
    result = run_cli(
        "forest",
        PENGUINS,
        "-y",
        "body_mass_g",
        "--trees",
        "10",
        "--cv",
        "3",
        "--metrics-out",
        str(metrics),
        "--importance",
        "permutation",
        "--json",
        "-q",
    )
    assert result.code == 0, result.stderr
    model = json.loads(result.stdout)
    assert model["kind"] == "forest" and model["training"]["max_features"] == 2  # 7 features // 3
    assert set(model["training"]["permutation_importance"]) == set(model["features"])
    folds = json.loads(metrics.read_text())["cv"]
    assert len(folds["folds"]) == 3 and folds["summary"]["r2"]["mean"] > 0.7


def test_tree_bad_options_are_one_line_errors():
    for args, message in [
        (["--criterion", "mse"], "--criterion mse needs a numeric target"),
        (["--criterion", "purity"], "--criterion must be one of"),
        (["--max-leaf-nodes", "1"], "--max-leaf-nodes"),
    ]:
        result = run_cli("tree", PENGUINS, "-y", "species", *args)
        assert result.code == 2 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    result = run_cli("tree", PENGUINS, "-y", "body_mass_g", "--criterion", "gini")
    assert result.code == 2 and "needs classes" in result.stderr
    result = run_cli("forest", PENGUINS, "-y", "species", "--max-features", "lots")
    assert result.code == 2 and "--max-features must be" in result.stderr
    result = run_cli("forest", PENGUINS, "-y", "species", "--trees", "3", "--partial-dependence", "nope")
    assert result.code == 2 and "'nope' is not a feature" in result.stderr


def test_reduct_prints_for_pipelines_and_learns_rules(tmp_path: Path):
    house = str(SAMPLE / "house.csv")
    reducts = run_cli("reduct", house, "-y", "value", "--all", "--print", "reducts")
    assert reducts.code == 0, reducts.stderr
    assert reducts.stdout == "location,size,pets\n"
    assert "the table is inconsistent" in reducts.stderr and "γ = 0.8000" in reducts.stderr
    assert run_cli("reduct", house, "-y", "value", "--print", "gamma", "-q").stdout == "0.8\n"
    assert run_cli("reduct", house, "-y", "value", "--print", "core", "-q").stdout == "location,size,pets\n"
    approximations = run_cli("reduct", house, "-y", "value", "--print", "approximations", "-q").stdout
    assert approximations.splitlines()[0] == "class,lower,upper,boundary,accuracy"
    model = tmp_path / "r.json"
    learned = run_cli("reduct", PENGUINS, "-y", "species", "--vote", "support", "-o", str(model))
    assert learned.code == 0 and learned.stdout.startswith("RULESET VOTE weighted")
    metrics = json.loads(run_cli("evaluate", str(model), PENGUINS, "--json").stdout)
    assert metrics["accuracy"] > 0.95
    # a feature list for the next command of a pipeline
    columns = run_cli("reduct", PENGUINS, "-y", "species", "--print", "reducts", "-q").stdout.strip()
    narrowed = run_cli("tree", PENGUINS, "-y", "species", "--features", columns, "--max-depth", "2", "-q", "--json")
    assert narrowed.code == 0 and set(json.loads(narrowed.stdout)["features"]) == set(columns.split(","))
    bad = run_cli("reduct", house, "-y", "value", "--print", "everything")
    assert bad.code == 2 and "--print must be one of" in bad.stderr


def test_brl_learn_predict_proba_and_reproducibility(tmp_path: Path):
    labor = str(SAMPLE / "labor.csv")
    one, two = tmp_path / "b1.json", tmp_path / "b2.json"
    args = ["--iterations", "2000", "--seed", "4"]
    learned = run_cli("brl", labor, *args, "-o", str(one))
    assert learned.code == 0, learned.stderr
    assert "# P(bad) = " in learned.stdout and learned.stdout.rstrip().splitlines()[-1].startswith("ELSE class = ")
    assert run_cli("brl", labor, *args, "-o", str(two), "-q").code == 0
    assert one.read_bytes() == two.read_bytes()
    body = json.loads(one.read_text())
    assert body["algorithm"] == "brl" and body["training"]["patterns"] > 0 and "rhat" in body["training"]
    first = body["rules"][0]
    assert abs(sum(first["probabilities"]) - 1) < 1e-9
    predicted = pl.read_csv(run_cli("predict", str(one), labor, "--proba").stdout.encode())
    shares = {tuple(r["probabilities"]) for r in [*body["rules"], body["default"]]}
    assert {(a, b) for a, b in predicted.select("proba_bad", "proba_good").iter_rows()} <= shares
    # the text form parses back (the probabilities are a comment) and predicts alike
    text = tmp_path / "b.txt"
    assert run_cli("brl", labor, *args, "-o", str(text), "-q").code == 0
    assert run_cli("predict", str(text), labor).stdout == run_cli("predict", str(one), labor).stdout
    bad = run_cli("brl", labor, "--min-support", "0")
    assert bad.code == 2 and "--min-support must be in (0, 1]" in bad.stderr


def test_a_tree_splits_present_from_missing_values_of_a_one_level_column(tmp_path: Path):
    # market-basket data: a column holds 't' or nothing, and that decides the class
    rng = np.random.default_rng(0)
    bought = rng.random(400) < 0.4
    noise = rng.random(400) < 0.3
    frame = pl.DataFrame(
        {
            "bread": ["t" if b else None for b in bought],
            "milk": ["t" if n else None for n in noise],
            "total": ["high" if b else "low" for b in bought],
        }
    )
    data = tmp_path / "basket.csv"
    frame.write_csv(data)
    shown = run_cli("tree", str(data), "-y", "total")
    assert shown.code == 0, shown.stderr
    assert "IF bread in {'t'} THEN total = 'high'" in shown.stdout
    assert "IF (bread not in {'t'} or missing) THEN total = 'low'" in shown.stdout
    model = tmp_path / "t.json"
    assert run_cli("tree", str(data), "-y", "total", "-o", str(model), "-q").code == 0
    accuracy = json.loads(run_cli("evaluate", str(model), str(data), "--json").stdout)["accuracy"]
    assert accuracy == 1.0


def _missing_decides(n: int = 400) -> pl.DataFrame:
    # a number that is missing for a reason: absent readings are the 'flag' rows, and no
    # threshold on the present values separates anything
    rng = np.random.default_rng(1)
    gone = rng.random(n) < 0.3
    reading = rng.normal(size=n).round(2)
    return pl.DataFrame(
        {
            "reading": pl.Series([None if g else float(r) for g, r in zip(gone, reading, strict=True)]),
            "other": rng.normal(size=n).round(2),
            "status": ["flag" if g else "ok" for g in gone],
        }
    )


def test_trees_and_forests_split_present_from_missing_numbers(tmp_path: Path):
    data = tmp_path / "readings.csv"
    _missing_decides().write_csv(data)
    shown = run_cli("tree", str(data), "-y", "status")
    assert shown.code == 0, shown.stderr
    assert "|--- reading is not missing" in shown.stdout
    assert "IF reading is missing THEN status = 'flag'" in shown.stdout
    for learner in ("tree", "forest"):
        model = tmp_path / f"{learner}.json"
        assert run_cli(learner, str(data), "-y", "status", "-o", str(model), "-q").code == 0
        accuracy = json.loads(run_cli("evaluate", str(model), str(data), "--json").stdout)["accuracy"]
        assert accuracy == 1.0, learner
    text = tmp_path / "tree.txt"
    assert run_cli("tree", str(data), "-y", "status", "-o", str(text), "-q").code == 0
    assert (
        run_cli("predict", str(text), str(data)).stdout
        == run_cli("predict", str(tmp_path / "tree.json"), str(data)).stdout
    )


def _checkerboard(n: int, seed: int) -> pl.DataFrame:
    """Twelve bands of x0 crossed with four of x1, alternating classes, 10 % of labels
    flipped: the best accuracy is 0.9, and a tree needs about fifty leaves to reach it."""
    rng = np.random.default_rng(seed)
    x = rng.random((n, 4))
    y = ((np.floor(x[:, 0] * 12) + np.floor(x[:, 1] * 4)) % 2).astype(int)
    y = np.where(rng.random(n) < 0.1, 1 - y, y)
    return pl.DataFrame({**{f"x{j}": x[:, j].round(4) for j in range(4)}, "y": np.array(["a", "b"])[y]})


def test_a_longer_table_never_gets_a_worse_default_tree(tmp_path: Path):
    # the pruning strength was chosen on a 2,000-row sample and applied to the whole table:
    # on 40,000 rows it cut this tree to 54 leaves and 0.825 (0.834 from 10,000 rows)
    _checkerboard(20_000, 99).write_parquet(tmp_path / "test.parquet")
    accuracy, chosen_by = {}, {}
    for n in (10_000, 40_000):
        _checkerboard(n, 1).write_parquet(tmp_path / f"{n}.parquet")
        model = tmp_path / f"{n}.json"
        assert run_cli("tree", str(tmp_path / f"{n}.parquet"), "-y", "y", "-q", "-o", str(model)).code == 0
        evaluated = run_cli("evaluate", str(model), str(tmp_path / "test.parquet"), "--json")
        accuracy[n] = json.loads(evaluated.stdout)["accuracy"]
        chosen_by[n] = json.loads(model.read_text())["training"]["ccp_alpha_chosen_by"]
    assert accuracy[40_000] >= accuracy[10_000] and accuracy[40_000] > 0.87, accuracy
    assert chosen_by == {10_000: "3-fold cross-validation", 40_000: "a held-out quarter of the rows"}
