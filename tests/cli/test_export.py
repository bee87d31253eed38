"""export: SQL run by DuckDB, the Python function and the Polars expression predict exactly
what `rulecli predict` does, row for row, missing values and unseen categories included."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest

from rulecli import api, io
from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.learners.aq import AQParams, fit_aq
from rulecli.learners.brl import BRLParams, fit_brl
from rulecli.learners.cn2 import CN2Params, fit_cn2
from rulecli.learners.oner import OneRParams, fit_oner
from rulecli.learners.reduct import ReductParams, fit_reduct
from rulecli.learners.ripper import RipperParams, fit_ripper
from rulecli.learners.tree import TreeParams, fit_tree
from rulecli.model.compile import prediction_frame
from rulecli.model.core import Vote
from rulecli.model.export import to_polars, to_python, to_sql
from tests.conftest import SAMPLE, in_sqlite, run_cli

LEARNERS = {
    "oner": lambda ds: fit_oner(ds, OneRParams()),
    "ripper": lambda ds: fit_ripper(ds, RipperParams()),
    "ripper-unordered": lambda ds: fit_ripper(ds, RipperParams(unordered=True)),
    "cn2": lambda ds: fit_cn2(ds, CN2Params()),
    "cn2-unordered": lambda ds: fit_cn2(ds, CN2Params(ordered=False)),
    "cn2-best": lambda ds: fit_cn2(ds, CN2Params(ordered=False, vote=Vote.BEST)),
    "aq": lambda ds: fit_aq(ds, AQParams(vote="support", default="none")),
    "reduct": lambda ds: fit_reduct(ds, ReductParams(vote="support")),
    "brl": lambda ds: fit_brl(ds, BRLParams(iterations=500)),
    "tree": lambda ds: fit_tree(ds, TreeParams(max_depth=5)),
}
DATASETS = {"penguins": "species", "labor": "class", "house": "value"}


def _data(name: str) -> pl.DataFrame:
    """The sample table as rulecli reads it, plus rows with missing values and unseen levels."""
    frame = io.scan_table(str(SAMPLE / f"{name}.csv")).collect()
    odd = {}
    for column, dtype in frame.schema.items():
        if dtype == pl.String:
            odd[column] = ["never-seen", None]
        else:
            odd[column] = [None, None]
    return pl.concat([frame, pl.DataFrame(odd, schema=frame.schema)])


def _ours(model, frame: pl.DataFrame) -> list:
    return prediction_frame(model, frame.lazy()).collect().get_column("prediction").to_list()


@pytest.mark.parametrize("dataset", sorted(DATASETS))
@pytest.mark.parametrize("learner", sorted(LEARNERS))
def test_every_form_predicts_like_rulecli(learner: str, dataset: str):
    frame = _data(dataset)
    ds = prepare_dataset(frame.head(frame.height - 2), DataSpec(target=DATASETS[dataset]))
    _every_form_predicts_like_rulecli(LEARNERS[learner](ds), frame)


def _every_form_predicts_like_rulecli(model, frame: pl.DataFrame) -> None:
    """SQL in DuckDB and SQLite, the Python function and the Polars expression, row for row."""
    expected = _ours(model, frame)
    con = duckdb.connect()
    con.register("data", frame.to_arrow())
    via_sql = [row[0] for row in con.execute(f"SELECT {to_sql(model)} FROM data").fetchall()]
    assert via_sql == expected
    lite = in_sqlite(frame).execute(f"SELECT {to_sql(model, 'sqlite')} FROM data").fetchall()
    assert [row[0] for row in lite] == expected
    namespace: dict = {}
    exec(to_python(model), namespace)  # the exported source, run as a user would
    assert [namespace["predict"](row) for row in frame.to_dicts()] == expected
    expr = eval(to_polars(model), {"pl": pl})
    assert frame.select(expr).to_series().to_list() == expected


def test_regression_tree_exports(tmp_path: Path):
    frame = _data("penguins")
    ds = prepare_dataset(frame.head(frame.height - 2), DataSpec(target="body_mass_g", numeric_target=True))
    model = fit_tree(ds, TreeParams(max_depth=4))
    expected = _ours(model, frame)
    con = duckdb.connect()
    con.register("data", frame.to_arrow())
    assert [r[0] for r in con.execute(f"SELECT {to_sql(model)} FROM data").fetchall()] == expected
    lite = in_sqlite(frame).execute(f"SELECT {to_sql(model, 'sqlite')} FROM data").fetchall()
    assert [r[0] for r in lite] == expected
    namespace: dict = {}
    exec(to_python(model), namespace)
    assert [namespace["predict"](row) for row in frame.to_dicts()] == expected


def test_nan_is_missing_in_sql_too():
    frame = pl.DataFrame({"x": [1.0, float("nan"), None, 5.0], "y": ["a", "b", "a", "b"]})
    rules = "IF x < 3 THEN y = 'a'\nIF x >= 3 THEN y = 'b'\nELSE y = 'missing'\n"
    from rulecli.model.text import parse_text

    model = parse_text(rules)
    con = duckdb.connect()
    con.register("data", frame.to_arrow())
    got = [r[0] for r in con.execute(f"SELECT {to_sql(model)} FROM data").fetchall()]
    assert got == _ours(model, frame) == ["a", "missing", "missing", "b"]


@pytest.mark.parametrize("rules", [3, 40], ids=["runs", "numbered"])
def test_a_lists_runs_of_one_class_export_as_predict_decides_them(rules: int):
    # a run of rules of one class decides as its first matching rule does; past 32 runs the
    # Polars export numbers the first matching rule instead; a last run of the default's
    # class is the default's
    from rulecli.model.text import parse_text

    text = "".join(f"IF x < {i} AND z = '{'pq'[i % 3 == 0]}' THEN y = '{'ab'[i % 2]}'\n" for i in range(rules))
    model = parse_text(text + "IF x >= 100 THEN y = 'b'\nELSE y = 'b'\n")
    rng = np.random.default_rng(3)
    x = rng.integers(-2, rules + 2, 400).astype(float)
    frame = pl.DataFrame({"x": np.where(rng.random(400) < 0.1, np.nan, x), "z": rng.choice(["p", "q", None], 400)})
    _every_form_predicts_like_rulecli(model, frame)
    assert ("replace_strict" in to_polars(model)) == (rules > 32)


def test_export_command(tmp_path: Path):
    model = tmp_path / "t.json"
    penguins = str(SAMPLE / "penguins.csv")
    assert run_cli("tree", penguins, "-y", "species", "--max-depth", "3", "-o", str(model), "-q").code == 0
    query = run_cli("export", str(model), "--to", "sql", "--table", f"read_csv_auto('{penguins}')")
    assert query.code == 0, query.stderr
    assert query.stdout.startswith("SELECT *, CASE")
    rows = duckdb.sql(query.stdout).pl()
    predicted = pl.read_csv(run_cli("predict", str(model), penguins).stdout.encode())
    assert rows.get_column("prediction").to_list() == predicted.get_column("prediction").to_list()
    spark = run_cli("export", str(model), "--dialect", "spark")
    assert spark.code == 0 and "CAST(`flipper_length_mm` AS DOUBLE)" in spark.stdout
    postgres = run_cli("export", str(model), "--dialect", "postgres", "-o", str(tmp_path / "q.sql"))
    assert postgres.code == 0 and "DOUBLE PRECISION" in (tmp_path / "q.sql").read_text()
    python = run_cli("export", str(model), "--to", "python", "--name", "penguin_species")
    assert python.code == 0 and python.stdout.startswith("def penguin_species(row):")
    forest = tmp_path / "f.json"
    assert run_cli("forest", penguins, "-y", "species", "--trees", "2", "-o", str(forest), "-q").code == 0
    refused = run_cli("export", str(forest))
    assert refused.code == 2 and "pass --table TABLE" in refused.stderr
    bad = run_cli("export", str(model), "--to", "cobol")
    assert bad.code == 2 and "--to must be one of" in bad.stderr
    assert json.loads(model.read_text())["kind"] == "tree"


def test_sql_matches_on_a_large_table_with_missing_values():
    rng = np.random.default_rng(0)
    n = 20_000
    frame = pl.DataFrame(
        {
            "x": np.where(rng.random(n) < 0.05, np.nan, rng.normal(size=n)),
            "c": rng.choice(["p", "q", "r"], n),
            "y": rng.choice(["a", "b", "c"], n),
        }
    ).with_columns(pl.col("x").fill_nan(None))
    ds = prepare_dataset(frame, DataSpec(target="y"))
    model = fit_tree(ds, TreeParams(max_leaf_nodes=40))
    con = duckdb.connect()
    con.register("data", frame.to_arrow())
    got = [r[0] for r in con.execute(f"SELECT {to_sql(model)} FROM data").fetchall()]
    assert got == _ours(model, frame)


def test_violations_lists_the_rows_rules_get_wrong(tmp_path: Path):
    house = str(SAMPLE / "house.csv")
    rules = tmp_path / "rules.txt"
    rules.write_text(
        "IF size = 'big' THEN value = 'high'\nIF size = 'small' THEN value = 'low'\nELSE value = 'medium'\n"
    )
    out = tmp_path / "violations.csv"
    result = run_cli("evaluate", str(rules), house, "--violations", str(out), "--min-accuracy", "0.9")
    assert result.code == 1, result.stderr  # the gate fails, and the file says where
    rows = pl.read_csv(out)
    assert rows.columns == [
        "location",
        "size",
        "pets",
        "value",
        "truth",
        "prediction",
        "violated_rules",
        "violated_text",
    ]
    truth = pl.read_csv(house)
    small = truth.filter(pl.col("size") == "small")
    assert rows.height == int((small.get_column("value") != "low").sum())
    assert set(rows.get_column("violated_text")) == {"size = 'small'"}
    # a rule set: every matching rule of another class is listed
    aq = tmp_path / "aq.json"
    assert run_cli("aq", house, "-y", "value", "--max-error", "0.5", "-o", str(aq), "-q").code == 0
    assert run_cli("evaluate", str(aq), house, "--violations", str(out), "--no-per-rule").code == 0
    listed = pl.read_csv(out, schema_overrides={"violated_rules": pl.String})
    predictions = {str(i): r["prediction"] for i, r in enumerate(json.loads(aq.read_text())["rules"], 1)}
    assert listed.height > 0
    for truth_value, ids in listed.select("truth", "violated_rules").iter_rows():
        assert all(predictions[i] != truth_value for i in ids.split(","))
    # trees name the leaf rule
    tree = tmp_path / "t.json"
    penguins = str(SAMPLE / "penguins.csv")
    assert run_cli("tree", penguins, "-y", "species", "--max-depth", "2", "-o", str(tree), "-q").code == 0
    assert run_cli("evaluate", str(tree), penguins, "--violations", str(out), "--no-per-rule").code == 0
    wrong = pl.read_csv(out)
    assert wrong.height > 0 and (wrong.get_column("truth") != wrong.get_column("prediction")).all()
    regression = tmp_path / "r.json"
    assert run_cli("tree", penguins, "-y", "body_mass_g", "--max-depth", "2", "-o", str(regression), "-q").code == 0
    refused = run_cli("evaluate", str(regression), penguins, "--violations", str(tmp_path / "x.csv"))
    assert refused.code == 2 and "--violations needs rules" in refused.stderr and not (tmp_path / "x.csv").exists()


@pytest.mark.slow  # 20 s: every learner, 10-fold CV, twice; the contract suite checks each fit's determinism
def test_make_experiment_is_reproducible(tmp_path: Path):
    import subprocess
    import sys

    from tests.conftest import ROOT

    listing = tmp_path / "datasets.csv"
    listing.write_text(f"path,target\n{ROOT / 'sample_data' / 'labor.csv'},class\n")
    for run in ("a", "b"):
        out = tmp_path / run
        cmd = [
            sys.executable,
            str(ROOT / "scripts" / "experiment.py"),
            "--folds",
            "3",
            "--learners",
            "oner,tree,ripper",
        ]
        cmd += ["--datasets", f"house,{ROOT / 'sample_data' / 'penguins.csv'}:species", "--out", str(out)]
        subprocess.run(cmd, check=True, capture_output=True)
        assert (out / "summary.md").read_text().startswith("# 3-fold cross-validation on house, penguins")
        assert pl.read_csv(out / "timings.csv").columns == ["learner", "dataset", "fit_seconds"]
    for name in ("summary.csv", "summary.md"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert pl.read_csv(tmp_path / "a" / "summary.csv").height == 6
    from_file = tmp_path / "c"
    cmd = [sys.executable, str(ROOT / "scripts" / "experiment.py"), "--folds", "2", "--learners", "oner"]
    subprocess.run([*cmd, "--datasets-file", str(listing), "--out", str(from_file)], check=True, capture_output=True)
    assert pl.read_csv(from_file / "summary.csv")["dataset"].to_list() == ["labor"]


@pytest.mark.parametrize("dataset", sorted(DATASETS))
def test_forests_export_to_sql_python_and_polars(tmp_path: Path, dataset: str):
    frame = _data(dataset)
    model_path = tmp_path / "f.json"
    fitted = run_cli(
        "forest", str(SAMPLE / f"{dataset}.csv"), "-y", DATASETS[dataset], "-B", "7", "-o", str(model_path)
    )
    assert fitted.code == 0, fitted.stderr
    model = api.load(model_path)
    ours = api.predict(model, frame, proba=True)
    expected = ours["prediction"].to_list()
    con = duckdb.connect()
    con.register("t", frame.to_arrow())
    scored = con.sql(api.export(model, "sql", table="t")).pl()
    assert scored["prediction"].to_list() == expected
    for column in (c for c in ours.columns if c.startswith("proba_")):
        assert scored[column].to_list() == ours[column].to_list(), column  # summed in the same order: exact
    namespace: dict = {}
    exec(api.export(model, "python"), namespace)
    assert [namespace["predict"](row) for row in frame.to_dicts()] == expected
    expr = eval(api.export(model, "polars"), {"pl": pl})
    assert frame.select(expr.alias("p"))["p"].to_list() == expected
    refused = run_cli("export", str(model_path))
    assert refused.code == 2 and "pass --table TABLE" in refused.stderr


def test_regression_forests_export_alike(tmp_path: Path):
    rng = np.random.default_rng(5)
    n = 200
    frame = pl.DataFrame({"x": rng.normal(size=n), "c": rng.choice(["a", "b"], n), "y": rng.normal(size=n)})
    frame = pl.concat([frame, pl.DataFrame({"x": [None], "c": ["zzz"], "y": [0.0]}, schema=frame.schema)])
    model = _fit_forest(frame, tmp_path)
    _exports_predict_as_rulecli(model, frame, api.predict(model, frame)["prediction"].to_list())


def _exports_predict_as_rulecli(model, frame: pl.DataFrame, expected: list) -> None:
    """DuckDB running the SQL, the exec'd Python function and the eval'd Polars expression."""
    con = duckdb.connect()
    con.register("t", frame.to_arrow())
    assert con.sql(api.export(model, "sql", table="t")).pl()["prediction"].to_list() == expected
    namespace: dict = {}
    exec(api.export(model, "python"), namespace)
    assert [namespace["predict"](row) for row in frame.to_dicts()] == expected
    expr = eval(api.export(model, "polars"), {"pl": pl})
    assert frame.select(expr.alias("p"))["p"].to_list() == expected


def _fit_forest(frame: pl.DataFrame, tmp_path: Path):
    data = tmp_path / "r.parquet"
    frame.write_parquet(data)
    out = tmp_path / "rf.json"
    assert run_cli("forest", str(data), "-y", "y", "-B", "5", "-o", str(out), "-q").code == 0
    return api.load(out)


@pytest.mark.parametrize("learner", ["tree", "forest"])
def test_present_versus_missing_splits_export_alike(tmp_path: Path, learner: str):
    # a number missing for a reason: the model splits present (+inf included) from missing
    rng = np.random.default_rng(3)
    n = 300
    gone = rng.random(n) < 0.3
    reading = [None if g else float(v) for g, v in zip(gone, rng.normal(size=n).round(2), strict=True)]
    frame = pl.DataFrame(
        {"reading": reading, "other": rng.normal(size=n).round(2)}, schema_overrides={"reading": pl.Float64}
    )
    frame = frame.with_columns(status=pl.when(pl.col("reading").is_null()).then(pl.lit("flag")).otherwise(pl.lit("ok")))
    data = tmp_path / "d.csv"
    frame.write_csv(data)
    model_path = tmp_path / "m.json"
    trees = ["-B", "5"] if learner == "forest" else []
    assert run_cli(learner, str(data), "-y", "status", *trees, "-o", str(model_path), "-q").code == 0
    assert '"+inf"' in model_path.read_text()
    model = api.load(model_path)
    probe = pl.DataFrame({"reading": [float("inf"), float("-inf"), None, 0.5], "other": [0.0, 1.0, None, 2.0]})
    scored = pl.concat([frame.drop("status"), probe])
    expected = api.predict(model, scored)["prediction"].to_list()
    assert expected[-4:] == ["ok", "ok", "flag", "ok"]
    _exports_predict_as_rulecli(model, scored, expected)


def test_sql_predicts_alike_on_a_table_duckdb_types_itself(tmp_path: Path):
    # DuckDB's read_csv types Yes/No, T/F and true/false as BOOLEAN and ISO dates as DATE,
    # where rulecli reads text: the exported SQL must still give predict's answers
    rng = np.random.default_rng(3)
    n = 600
    table = pl.DataFrame(
        {
            "has_partner": rng.choice(["Yes", "No"], n),
            "paperless": rng.choice(["T", "F"], n),
            "active": rng.choice(["true", "false"], n),
            "signup": [
                f"2021-{m:02d}-{d:02d}" for m, d in zip(rng.integers(1, 13, n), rng.integers(1, 29, n), strict=True)
            ],
            "tickets": rng.integers(0, 9, n),
        }
    )
    partner, paperless = table["has_partner"] == "Yes", table["paperless"] == "T"
    label = np.where(partner & paperless, "stay", np.where(table["tickets"] > 5, "leave", "stay"))
    table = table.with_columns(churn=pl.Series(np.where(rng.random(n) < 0.05, "leave", label)))
    data = tmp_path / "customers.csv"
    table.write_csv(data)
    types = dict(duckdb.sql(f"DESCRIBE SELECT * FROM read_csv('{data}')").fetchall()[i][:2] for i in range(6))
    assert types["has_partner"] == types["paperless"] == types["active"] == "BOOLEAN" and types["signup"] == "DATE"
    written = tmp_path / "written.txt"
    written.write_text("IF has_partner = 'Yes' AND paperless = 'T' THEN churn = 'stay'\nELSE churn = 'leave'\n")
    models = [written]
    for learner in ("oner", "ripper", "cn2", "tree"):
        models.append(tmp_path / f"{learner}.json")
        assert run_cli(learner, str(data), "-y", "churn", "-o", str(models[-1]), "-q").code == 0
    for model in models:
        query = run_cli("export", str(model), "--to", "sql", "--table", f"read_csv('{data}')")
        assert query.code == 0, query.stderr
        predicted = pl.read_csv(run_cli("predict", str(model), str(data)).stdout.encode())["prediction"]
        assert duckdb.sql(query.stdout).pl()["prediction"].to_list() == predicted.to_list(), model.name


@pytest.mark.parametrize("learner", ["cn2", "ripper", "oner", "tree"])
def test_rows_sitting_on_every_threshold_export_alike(learner: str):
    # thresholds are data values (cn2's at quantiles of 3,000 distinct values): every row
    # whose value is one sits exactly on it, written to 17 digits; each form decides it as
    # predict does (a threshold's repr reads back as the same double everywhere)
    rng = np.random.default_rng(12)
    x = rng.normal(size=3000)
    frame = pl.DataFrame(
        {"x": x, "z": rng.normal(size=3000), "y": np.where(x + rng.normal(0, 0.3, 3000) > 0, "p", "q")}
    )
    model = LEARNERS[learner](prepare_dataset(frame, DataSpec(target="y")))
    thresholds = {c.value for r in getattr(model, "rules", ()) for c in r.conditions if isinstance(c.value, float)}
    assert learner in ("tree", "oner") or thresholds & set(x.tolist())  # cn2, ripper: data values
    _every_form_predicts_like_rulecli(model, frame)
