"""Row weights (--weights COLUMN) and class weights (--class-weight) on every learner and on evaluate.

The contract: a row of weight 0 is a row left out, a row of whole weight k is k copies of
the row — the model files are the same but for the record of the weights. Checked for
every registered learner through the command.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rulecli import learners
from rulecli.discretize import compute_cuts
from tests.conftest import QUICK, run_cli

NAMES = learners.names("classes")


def _table(n: int, seed: int) -> pl.DataFrame:
    """Classes from known rules with noise; a numeric feature with missing values."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, n).round(2)
    z = rng.uniform(0, 10, n).round(1)
    c = rng.choice(["red", "green", "blue"], n)
    y = np.where(x > 0.3, "hi", np.where(c == "red", "mid", "lo"))
    noisy = rng.random(n) < 0.1
    y = np.where(noisy, rng.choice(["hi", "mid", "lo"], n), y)
    return pl.DataFrame({"x": pl.Series(x).set(pl.Series(rng.random(n) < 0.05), None), "z": z, "c": c, "y": y})


def _model(path: Path) -> dict[str, object]:
    model = json.loads(path.read_text())
    model["training"].pop("weights", None)
    return model


def _fit(name: str, data: Path, out: Path, *extra: str) -> dict[str, object]:
    run = run_cli(name, str(data), "-y", "y", "-q", "-o", str(out), *QUICK.get(name, []), *extra)
    assert run.code == 0, run.stderr
    return _model(out)


@pytest.mark.parametrize("name", NAMES)
def test_a_whole_weight_k_is_k_copies_of_the_row(name: str, tmp_path: Path):
    df = _table(90, 1)
    w = np.random.default_rng(2).integers(1, 4, df.height)
    df.with_columns(pl.Series("w", w)).write_csv(tmp_path / "weighted.csv")
    df.select(pl.all().repeat_by(pl.Series(w))).explode(pl.all()).write_csv(tmp_path / "copies.csv")
    weighted = _fit(name, tmp_path / "weighted.csv", tmp_path / "a.json", "--weights", "w")
    copies = _fit(name, tmp_path / "copies.csv", tmp_path / "b.json")
    assert weighted == copies
    assert weighted["training"]["rows"] == int(w.sum())  # type: ignore[index]


@pytest.mark.parametrize("name", NAMES)
def test_a_weight_of_zero_is_a_row_left_out(name: str, tmp_path: Path):
    clean = _table(80, 3)
    # the same number of rows again with their labels scrambled and a level the clean rows lack
    rng = np.random.default_rng(4)
    corrupt = _table(80, 5).with_columns(
        pl.Series("y", rng.permutation(clean["y"].to_numpy())), pl.lit("purple").alias("c")
    )
    mixed = pl.concat([clean.with_columns(pl.lit(1).alias("w")), corrupt.with_columns(pl.lit(0).alias("w"))])
    mixed.sample(fraction=1.0, shuffle=True, seed=6).write_csv(tmp_path / "mixed.csv")
    # the clean rows in the order the mixed table holds them
    kept = mixed.sample(fraction=1.0, shuffle=True, seed=6).filter(pl.col("w") == 1).drop("w")
    kept.write_csv(tmp_path / "clean.csv")
    weighted = _fit(name, tmp_path / "mixed.csv", tmp_path / "a.json", "--weights", "w")
    assert weighted == _fit(name, tmp_path / "clean.csv", tmp_path / "b.json")


@pytest.mark.parametrize("name", NAMES)
def test_fractional_weights_weigh_every_count(name: str, tmp_path: Path):
    df = _table(60, 7).with_columns(pl.Series("w", np.linspace(0.5, 2.0, 60)))
    df.write_csv(tmp_path / "t.csv")
    model = tmp_path / "m.json"
    args = (name, str(tmp_path / "t.csv"), "-y", "y", "--weights", "w", "-q", *QUICK.get(name, []))
    run = run_cli(*args, "-o", str(model))
    assert run.code == 0, run.stderr
    saved = json.loads(model.read_text())
    assert saved["training"]["weights"] == "column w"
    assert saved["training"]["rows"] == pytest.approx(float(df["w"].sum()))
    # weighted counts load back from JSON, and from text where the learner writes text
    predicted = run_cli("predict", str(model), str(tmp_path / "t.csv"))
    assert predicted.code == 0, predicted.stderr
    if name != "forest":
        assert run_cli(*args, "-o", str(tmp_path / "m.txt")).code == 0
        again = run_cli("predict", str(tmp_path / "m.txt"), str(tmp_path / "t.csv"))
        assert again.code == 0 and again.stdout == predicted.stdout, again.stderr
    # the same rows unweighted count once each
    plain = run_cli(name, str(tmp_path / "t.csv"), "-y", "y", "--exclude", "w", "-q", "--json", *QUICK.get(name, []))
    assert json.loads(plain.stdout)["training"]["rows"] == df.height


def test_weighted_tree_counts_are_the_weights(tmp_path: Path):
    # one leaf per x value: its weighted class counts are the weights summed
    pl.DataFrame(
        {"x": ["a", "a", "a", "b", "b"], "w": [0.5, 0.25, 2.0, 1.5, 0.75], "y": ["p", "q", "p", "q", "q"]}
    ).write_csv(tmp_path / "t.csv")
    run = run_cli("tree", str(tmp_path / "t.csv"), "--weights", "w", "-q", "--json")
    tree = json.loads(run.stdout)
    leaves = [i for i, left in enumerate(tree["tree"]["left"]) if left < 0]
    samples = sorted(tree["tree"]["n_samples"][i] for i in leaves)
    assert samples == [2.25, 2.75]
    assert tree["training"]["rows"] == 5.0


def test_class_weights_are_row_weights_per_class(tmp_path: Path):
    df = _table(90, 8)
    df.write_csv(tmp_path / "t.csv")
    w = np.where(df["y"].to_numpy() == "mid", 3, 1)
    df.with_columns(pl.Series("w", w)).write_csv(tmp_path / "w.csv")
    by_class = _fit("ripper", tmp_path / "t.csv", tmp_path / "a.json", "--class-weight", "mid=3")
    assert by_class == _fit("ripper", tmp_path / "w.csv", tmp_path / "b.json", "--weights", "w")


def test_balanced_class_weights_find_the_rare_class(tmp_path: Path):
    rng = np.random.default_rng(9)
    n = 400
    x = rng.normal(0, 1, n)
    # a rare class (about 3 %), never the majority of any part of x: a plain tree never predicts it
    y = np.where((x > 1.2) & (rng.random(n) < 0.3), "rare", "common")
    pl.DataFrame({"x": x, "y": y}).write_csv(tmp_path / "t.csv")
    plain = run_cli("tree", str(tmp_path / "t.csv"), "--max-depth", "1", "-q", "--json")
    balanced = run_cli(
        "tree",
        str(tmp_path / "t.csv"),
        "--max-depth",
        "1",
        "--class-weight",
        "balanced",
        "-q",
        "-o",
        str(tmp_path / "b.json"),
    )
    assert plain.code == 0 and balanced.code == 0, balanced.stderr
    assert "rare" not in _predicted(json.loads(plain.stdout))
    assert "rare" in _predicted(json.loads((tmp_path / "b.json").read_text()))
    scored = run_cli("evaluate", str(tmp_path / "b.json"), str(tmp_path / "t.csv"), "--json")
    assert json.loads(scored.stdout)["per_class"]["rare"]["recall"] > 0.5


def _predicted(tree: dict[str, object]) -> set[str]:
    nodes = tree["tree"]
    classes = tree["classes"]
    return {
        classes[int(np.argmax(value))]
        for value, left in zip(nodes["value"], nodes["left"], strict=True)  # type: ignore[index]
        if left < 0
    }


@pytest.mark.parametrize(
    ("column", "message"),
    [
        ([1, -2, 1, 1], "weight column 'w' holds -2 on data row 2; weights are finite numbers of at least 0"),
        ([1, None, 1, 1], "weight column 'w' has no value on data row 2; every row needs a weight (0 leaves it out)"),
        (["1", "2", "heavy", "1"], "weight column 'w' holds 'heavy', which is not a number"),
        (
            [1.0, 1.0, float("inf"), 1.0],
            "weight column 'w' holds inf on data row 3; weights are finite numbers of at least 0",
        ),
        ([0, 0, 0, 0], "every weight in 'w' is 0; there is nothing to learn"),
    ],
)
def test_bad_weights_are_one_error_naming_the_column(column: list[object], message: str, tmp_path: Path):
    path = tmp_path / "t.csv"
    pl.DataFrame({"x": ["a", "b", "a", "b"], "w": column, "y": ["p", "q", "p", "q"]}).write_csv(path)
    for name in ("oner", "tree"):
        run = run_cli(name, str(path), "--weights", "w", "-o", str(tmp_path / "m.json"))
        assert run.code == 2 and run.stderr.strip() == f"Error: {path}: {message}"
        assert not (tmp_path / "m.json").exists()


def test_weight_and_class_weight_options_are_checked(tmp_path: Path):
    path = tmp_path / "t.csv"
    pl.DataFrame({"x": ["a", "b", "a", "b"], "w": [1, 2, 1, 2], "y": ["p", "q", "p", "q"]}).write_csv(path)
    cases = {
        ("--weights", "v"): f"Error: {path}: column 'v' given with --weights is not in the data",
        ("--weights", "y"): "Error: --weights y: that is the target column",
        ("--class-weight", "r=2"): "Error: --class-weight: 'r' is not a class of the target (classes: p, q)",
        ("--class-weight", "p=0"): "Error: --class-weight: the weight of 'p' must be a number above 0, got '0'",
        ("--class-weight", "p"): "Error: --class-weight takes 'balanced' or CLASS=WEIGHT pairs such as a=2,b=1, "
        "got 'p'",
    }
    for args, message in cases.items():
        run = run_cli("oner", str(path), *args)
        assert run.code == 2 and run.stderr.strip().startswith(message), run.stderr
    run = run_cli("tree", str(path), "-y", "w", "--regression", "--class-weight", "balanced")
    assert run.code == 2 and "--class-weight weighs classes, but this target is a number" in run.stderr


def test_weight_column_is_never_a_feature(tmp_path: Path):
    # w alone separates the classes: a model that used it would say so
    path = tmp_path / "t.csv"
    pl.DataFrame({"x": ["a", "b"] * 10, "w": [1, 2] * 10, "y": ["p", "q"] * 5 + ["q", "p"] * 5}).write_csv(path)
    for name in NAMES:
        run = run_cli(name, str(path), "--weights", "w", "-q", "--json", *QUICK.get(name, []))
        assert run.code == 0, run.stderr
        features = [f["name"] for f in json.loads(run.stdout)["schema"]["features"]]
        assert features == ["x"]


def test_evaluate_counts_rows_by_their_weights(tmp_path: Path):
    df = _table(120, 10)
    run_cli("ripper", _write(df, tmp_path / "train.csv"), "-y", "y", "-q", "-o", str(tmp_path / "m.json"))
    w = np.random.default_rng(11).integers(0, 4, df.height)
    _write(df.with_columns(pl.Series("w", w)), tmp_path / "weighted.csv")
    _write(
        df.filter(pl.Series(w > 0)).select(pl.all().repeat_by(pl.Series(w[w > 0]))).explode(pl.all()),
        tmp_path / "copies.csv",
    )
    weighted = run_cli("evaluate", str(tmp_path / "m.json"), str(tmp_path / "weighted.csv"), "--weights", "w", "--json")
    copies = run_cli("evaluate", str(tmp_path / "m.json"), str(tmp_path / "copies.csv"), "--json")
    assert weighted.code == 0 and copies.code == 0, weighted.stderr
    assert json.loads(weighted.stdout) == json.loads(copies.stdout)
    assert json.loads(weighted.stdout)["rows"] == int(w.sum())
    fractional = df.with_columns(pl.Series("w", np.full(df.height, 0.5)))
    half = run_cli(
        "evaluate", str(tmp_path / "m.json"), _write(fractional, tmp_path / "half.csv"), "--weights", "w", "--json"
    )
    plain = json.loads(run_cli("evaluate", str(tmp_path / "m.json"), str(tmp_path / "train.csv"), "--json").stdout)
    assert json.loads(half.stdout)["rows"] == df.height / 2
    assert json.loads(half.stdout)["accuracy"] == pytest.approx(plain["accuracy"])
    missing = run_cli("evaluate", str(tmp_path / "m.json"), str(tmp_path / "train.csv"), "--weights", "w")
    assert missing.code == 2
    assert (
        missing.stderr.strip()
        == f"Error: {tmp_path / 'train.csv'}: weight column 'w' given with --weights is not in the data"
    )


def test_regression_metrics_are_weighted(tmp_path: Path):
    rng = np.random.default_rng(12)
    x = rng.uniform(0, 1, 200)
    df = pl.DataFrame({"x": x, "y": 3 * x + rng.normal(0, 0.3, 200)})
    run_cli("tree", _write(df, tmp_path / "t.csv"), "--max-depth", "2", "-q", "-o", str(tmp_path / "m.json"))
    w = rng.integers(0, 3, 200)
    _write(df.with_columns(pl.Series("w", w)), tmp_path / "w.csv")
    _write(
        df.filter(pl.Series(w > 0)).select(pl.all().repeat_by(pl.Series(w[w > 0]))).explode(pl.all()),
        tmp_path / "copies.csv",
    )
    weighted = json.loads(
        run_cli("evaluate", str(tmp_path / "m.json"), str(tmp_path / "w.csv"), "--weights", "w", "--json").stdout
    )
    copies = json.loads(run_cli("evaluate", str(tmp_path / "m.json"), str(tmp_path / "copies.csv"), "--json").stdout)
    for key in ("rows", "mae", "rmse", "r2", "mean_truth"):
        assert weighted[key] == pytest.approx(copies[key], rel=1e-12)


def test_cross_validation_scores_held_out_rows_by_weight(tmp_path: Path):
    df = _table(90, 13).with_columns(pl.Series("w", np.random.default_rng(14).integers(1, 4, 90)))
    run = run_cli(
        "tree",
        _write(df, tmp_path / "t.csv"),
        "-y",
        "y",
        "--weights",
        "w",
        "--cv",
        "3",
        "-q",
        "--metrics-out",
        str(tmp_path / "m.json"),
        "-o",
        str(tmp_path / "t.json"),
    )
    assert run.code == 0, run.stderr
    folds = json.loads((tmp_path / "m.json").read_text())["cv"]["folds"]
    assert sum(f["rows"] for f in folds) == int(df["w"].sum())


def _write(df: pl.DataFrame, path: Path) -> str:
    df.write_csv(path)
    return str(path)


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.one_of(st.none(), st.integers(-5, 5).map(float), st.floats(-3, 3)), min_size=2, max_size=40),
    data=st.data(),
    method=st.sampled_from(["mdlp", "min-bucket", "equal-frequency", "equal-width"]),
    bins=st.integers(1, 7),
)
def test_weighted_cuts_are_the_cuts_of_the_copies(
    values: list[float | None], data: st.DataObject, method: str, bins: int
):
    x = np.array([np.nan if v is None else v for v in values])
    n = x.size
    y = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    w = np.array(data.draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)), dtype=np.float64)
    weighted = compute_cuts("x", x, method, bins=bins, y=y, n_classes=3, weights=w)
    copies = compute_cuts(
        "x", np.repeat(x, w.astype(int)), method, bins=bins, y=np.repeat(y, w.astype(int)), n_classes=3
    )
    assert weighted == copies


def test_diff_and_report_count_rows_by_weight(tmp_path: Path):
    df = _table(120, 15)
    w = np.random.default_rng(16).integers(0, 4, df.height)
    data = _write(df.with_columns(pl.Series("w", w)), tmp_path / "w.csv")
    copies = _write(
        df.filter(pl.Series(w > 0)).select(pl.all().repeat_by(pl.Series(w[w > 0]))).explode(pl.all()),
        tmp_path / "copies.csv",
    )
    for name, seed in (("old", "1"), ("new", "2")):
        run = run_cli(
            "aq", _write(df, tmp_path / "t.csv"), "-y", "y", "--seed", seed, "-q", "-o", str(tmp_path / f"{name}.json"),
            *QUICK["aq"],
        )  # fmt: skip
        assert run.code == 0, run.stderr
    models = (str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    weighted = json.loads(run_cli("diff", *models, data, "--weights", "w", "--json").stdout)["rules"]
    plain = json.loads(run_cli("diff", *models, copies, "--json").stdout)["rules"]
    assert [r["data"] for r in weighted] == [r["data"] for r in plain]
    assert any(r["data"]["old"] for r in weighted)
    assert run_cli("diff", *models, "--weights", "w").code == 2
    page = run_cli("report", models[0], data, "--weights", "w", "-o", str(tmp_path / "r.html"))
    assert page.code == 0, page.stderr
    assert f"{int(w.sum())}" in (tmp_path / "r.html").read_text()


def test_fractional_weights_learn_the_same_model_every_run(penguins: Path, tmp_path: Path):
    # weights summed by Polars' threads came out a rounding apart from run to run, and the
    # reducts chosen on them too (4 runs of reduct, 4 different files)
    models = set()
    for i in range(4):
        out = tmp_path / f"{i}.json"
        args = ["-y", "species", "--class-weight", "balanced", "-q", "-o", str(out)]
        assert run_cli("reduct", str(penguins), *args).code == 0
        models.add(out.read_bytes())
    assert len(models) == 1
