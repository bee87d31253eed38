"""Tables as users bring them: dates are ordered features (learned, shown, parsed back and
exported as dates), ID and free-text columns are left out and said so, shell-quoted."""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tests.conftest import in_sqlite, run_cli

LEARNERS = ["oner", "ripper", "cn2", "aq", "brl", "reduct", "tree", "forest"]


def _customers(n: int = 600, seed: int = 0) -> pl.DataFrame:
    """A churn flag decided by the signup date (after 2021-06-30) and support tickets, an ID,
    free-text notes, and missing dates."""
    rng = np.random.default_rng(seed)
    days = rng.integers(0, 4 * 365, n)
    signup = [(date(2019, 1, 1) + timedelta(days=int(d))).isoformat() for d in days]
    tickets = rng.integers(0, 6, n)
    late = days > (date(2021, 6, 30) - date(2019, 1, 1)).days
    churn = np.where(late & (tickets >= 2), "yes", "no")
    churn = np.where(rng.random(n) < 0.03, np.where(churn == "yes", "no", "yes"), churn)
    words = np.array(["billing", "refund", "late", "upgrade", "call"])
    return pl.DataFrame(
        {
            "Customer ID": [f"C{100_000 + i}" for i in rng.permutation(n)],
            "signup_date": pl.Series(signup).scatter(np.flatnonzero(rng.random(n) < 0.05), None),
            "tickets": tickets,
            "notes": [f"{' '.join(rng.choice(words, 3))} #{i}" for i in range(n)],
            "churn": churn,
        }
    )


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("messy")
    _customers().write_csv(root / "customers.csv")
    return root


def _fit(table: Path, learner: str, *extra: str) -> dict:
    out = table / f"{learner}.json"
    result = run_cli(learner, "customers.csv", "-y", "churn", "-o", out.name, *extra, cwd=table)
    assert result.code == 0, result.stderr
    return {"model": json.loads(out.read_text()), "stderr": result.stderr, "path": out}


@pytest.mark.parametrize("learner", LEARNERS)
def test_every_learner_leaves_out_the_id_and_notes_and_reads_dates_as_dates(table: Path, learner: str):
    fitted = _fit(table, learner)
    # said once each, with the option that keeps the column written to paste into a shell
    assert fitted["stderr"].count("column 'Customer ID'") == 1 and "--use 'Customer ID'" in fitted["stderr"]
    assert fitted["stderr"].count("column 'notes'") == 1
    schema = fitted["model"]["schema"]
    assert schema["left_out"] == {"Customer ID": "identifies rows", "notes": "identifies rows"}
    dates = [f for f in schema["features"] if f["name"] == "signup_date"]
    assert dates and dates[0]["unit"] == "date", schema["features"]
    shown = run_cli("show", str(fitted["path"])).stdout
    assert "Customer ID" not in shown and "notes" not in shown and "'20" not in shown  # no date as text
    if learner not in ("forest", "reduct"):  # a forest shows no rules; reduct keeps only the default here
        assert "signup_date" in shown, shown  # the date decides the class


def test_a_date_condition_reads_as_a_date_and_splits_where_the_rule_does(table: Path):
    shown = run_cli("show", str(_fit(table, "ripper", "-q")["path"])).stdout
    # the planted boundary is 2021-06-30: ripper's bound is a date next to it
    bounds = re.findall(r"signup_date >=? (\d{4}-\d\d-\d\d)", shown)
    assert bounds, shown
    assert all(abs((date.fromisoformat(b) - date(2021, 7, 1)).days) <= 10 for b in bounds), bounds


@pytest.mark.parametrize("learner", ["ripper", "tree", "forest"])
def test_dates_predict_and_export_alike_from_text_and_date_columns(table: Path, learner: str, tmp_path: Path):
    # a small forest: a default one's exports are megabytes of source
    model = _fit(table, learner, "-q", *(["--trees", "5", "--max-depth", "4"] if learner == "forest" else []))["path"]
    frame = pl.read_csv(table / "customers.csv")
    # the same rows with a real Date column, as Parquet holds one
    frame.with_columns(pl.col("signup_date").str.to_date()).write_parquet(tmp_path / "typed.parquet")
    expected = pl.read_csv(run_cli("predict", str(model), str(table / "customers.csv")).stdout.encode())
    typed = pl.read_csv(run_cli("predict", str(model), str(tmp_path / "typed.parquet")).stdout.encode())
    assert typed["prediction"].to_list() == expected["prediction"].to_list()
    exported = {
        to: run_cli("export", str(model), "--to", to, *(["--table", "t"] if to == "sql" else [])).stdout
        for to in ("python", "polars", "sql")
    }
    namespace: dict = {}
    exec(exported["python"], namespace)
    python = [namespace["predict"](row) for row in frame.iter_rows(named=True)]
    polars = frame.select(eval(exported["polars"], {"pl": pl}).alias("p"))["p"].to_list()
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    con.register("t", frame.to_arrow())
    sql = con.sql(exported["sql"]).pl()["prediction"].to_list()
    typed_frame = pl.read_parquet(tmp_path / "typed.parquet")
    con.register("t", typed_frame.to_arrow())
    sql_typed = con.sql(exported["sql"]).pl()["prediction"].to_list()
    python_typed = [namespace["predict"](row) for row in typed_frame.iter_rows(named=True)]
    lite = run_cli("export", str(model), "--to", "sql", "--dialect", "sqlite", "--table", "data").stdout
    sqlite = [row[-1] for row in in_sqlite(frame).execute(lite).fetchall()]  # dates as SQLite keeps them: text
    for got in (python, polars, sql, sql_typed, python_typed, sqlite):
        assert got == expected["prediction"].to_list()


def test_a_text_model_with_dates_parses_back_to_the_same_predictions(table: Path, tmp_path: Path):
    model = _fit(table, "ripper", "-q")["path"]
    text = tmp_path / "rules.txt"
    text.write_text(run_cli("show", str(model)).stdout)
    assert "signup_date >= 20" in text.read_text()
    data = str(table / "customers.csv")
    assert run_cli("predict", str(text), data).stdout == run_cli("predict", str(model), data).stdout


def test_datetimes_are_seconds_shown_as_date_and_time(tmp_path: Path):
    rng = np.random.default_rng(2)
    n = 400
    seconds = rng.integers(0, 10 * 86_400, n)
    start = pl.datetime(2024, 3, 1)
    frame = pl.DataFrame({"s": seconds}).select(
        (start + pl.duration(seconds=pl.col("s"))).dt.strftime("%Y-%m-%dT%H:%M:%S").alias("seen_at"),
        pl.when(pl.col("s") > 5 * 86_400 + 3600).then(pl.lit("late")).otherwise(pl.lit("early")).alias("when"),
    )
    frame.write_csv(tmp_path / "events.csv")
    fitted = run_cli("tree", "events.csv", "-y", "when", "-q", "-o", "m.json", cwd=tmp_path)
    assert fitted.code == 0, fitted.stderr
    shown = run_cli("show", "m.json", cwd=tmp_path).stdout
    # the classes change at 2024-03-06T01:00:00; the split falls between the nearest rows
    assert re.search(r"seen_at < 2024-03-06T0[01]:\d\d:\d\d", shown), shown
    predicted = pl.read_csv(run_cli("predict", "m.json", "events.csv", cwd=tmp_path).stdout.encode())
    assert (predicted["prediction"] == frame["when"]).mean() >= 0.99
    # the same moments as Datetime values, and through the exports
    typed = frame.with_columns(pl.col("seen_at").str.to_datetime())
    typed.write_parquet(tmp_path / "events.parquet")
    again = pl.read_csv(run_cli("predict", "m.json", "events.parquet", cwd=tmp_path).stdout.encode())
    assert again["prediction"].to_list() == predicted["prediction"].to_list()
    namespace: dict = {}
    exec(run_cli("export", "m.json", "--to", "python", cwd=tmp_path).stdout, namespace)
    for rows in (frame, typed):
        assert [namespace["predict"](r) for r in rows.iter_rows(named=True)] == predicted["prediction"].to_list()
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    con.register("t", typed.to_arrow())
    sql = run_cli("export", "m.json", "--to", "sql", "--table", "t", cwd=tmp_path).stdout
    assert con.sql(sql).pl()["prediction"].to_list() == predicted["prediction"].to_list()


def test_ids_and_many_levels_are_used_when_asked(tmp_path: Path):
    frame = _customers(300).with_columns(
        pl.Series("city", [f"city{i % 80}" for i in range(300)]), pl.Series("row", range(300))
    )
    frame.write_csv(tmp_path / "c.csv")
    left = run_cli("oner", "c.csv", "-y", "churn", "-o", "m.json", cwd=tmp_path)
    # 80 cities on 300 rows: fewer than 20 rows a city
    assert "column 'city' has 80 distinct values" in left.stderr and "--use city" in left.stderr
    assert "column 'row' has a different value" in left.stderr  # whole numbers counting the rows
    recorded = json.loads((tmp_path / "m.json").read_text())["schema"]["left_out"]
    assert recorded == {
        "Customer ID": "identifies rows",
        "notes": "identifies rows",
        "city": "too many levels",
        "row": "identifies rows",
    }
    used = run_cli(
        "oner", "c.csv", "-y", "churn", "-q", "--use", "city", "--use", "Customer ID", "-o", "u.json", cwd=tmp_path
    )
    assert used.code == 0, used.stderr
    names = [f["name"] for f in json.loads((tmp_path / "u.json").read_text())["schema"]["features"]]
    assert "city" in names and "Customer ID" in names


def test_a_text_column_of_many_levels_each_on_many_rows_is_kept(tmp_path: Path):
    # 61 states on 2,000 rows (about 33 rows a state) decide the target: kept, not taken for an ID
    rng = np.random.default_rng(5)
    state = rng.integers(0, 61, 2000)
    frame = pl.DataFrame({"state": [f"s{k:02d}" for k in state], "x": rng.uniform(0, 1, 2000)})
    frame = frame.with_columns(y=pl.Series(np.where(state < 30, "a", "b")))
    frame.write_csv(tmp_path / "s.csv")
    learned = run_cli("tree", "s.csv", "-y", "y", "-o", "m.json", cwd=tmp_path)
    assert learned.code == 0 and "state" not in learned.stderr, learned.stderr
    schema = json.loads((tmp_path / "m.json").read_text())["schema"]
    assert "state" in [f["name"] for f in schema["features"]] and "left_out" not in schema


@pytest.mark.engines
@pytest.mark.parametrize("typed", [False, True], ids=["text", "Date"])
def test_duckdb_types_dates_ids_and_notes_as_memory_does(tmp_path: Path, typed: bool):
    pytest.importorskip("duckdb")
    # 200 signup days (exact bins on both engines), an ID, notes of many values
    frame = _customers(2000, seed=3).with_columns(
        (pl.lit(date(2021, 1, 1)) + pl.duration(days=pl.int_range(pl.len()) % 200))
        .dt.strftime("%Y-%m-%d")
        .alias("signup_date")
    )
    if typed:
        frame = frame.with_columns(pl.col("signup_date").str.to_date())
    frame.write_parquet(tmp_path / "c.parquet")
    for learner in ("tree", "ripper"):
        memory = run_cli(learner, "c.parquet", "-y", "churn", "-q", "-o", "m.json", cwd=tmp_path)
        duck = run_cli(learner, "c.parquet", "-y", "churn", "-q", "-o", "d.json", "--engine", "duckdb", cwd=tmp_path)
        assert memory.code == duck.code == 0, (memory.stderr, duck.stderr)
        model = json.loads((tmp_path / "m.json").read_text())
        assert model["schema"]["left_out"] == {"Customer ID": "identifies rows", "notes": "identifies rows"}
        assert (tmp_path / "m.json").read_bytes() == (tmp_path / "d.json").read_bytes()


def _imbalanced(n: int = 1500, seed: int = 5) -> pl.DataFrame:
    """81 % 'low'; 'high' and 'medium' only weakly told apart from it."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = np.where(x + rng.normal(0, 1.2, n) > 2.0, "high", np.where(rng.random(n) < 0.12, "medium", "low"))
    return pl.DataFrame({"x": x.round(3), "z": rng.normal(size=n).round(3), "y": y})


def test_a_model_of_one_class_and_missed_rare_classes_point_to_class_weights(tmp_path: Path):
    _imbalanced().write_csv(tmp_path / "i.csv")
    one = run_cli("tree", "i.csv", "-y", "y", "--max-depth", "0", "-o", "m.json", cwd=tmp_path)
    assert one.code == 0 and "the model predicts only 'low'" in one.stderr, one.stderr
    assert "--class-weight balanced" in one.stderr
    gap = run_cli("ripper", "i.csv", "-y", "y", "--cv", "3", "-o", "r.json", cwd=tmp_path)
    assert "--cv: balanced accuracy" in gap.stderr and "--class-weight balanced" in gap.stderr, gap.stderr
    weighted = run_cli(
        "ripper", "i.csv", "-y", "y", "--cv", "3", "--class-weight", "balanced", "-o", "w.json", cwd=tmp_path
    )
    assert weighted.code == 0 and "--class-weight balanced" not in weighted.stderr
    assert "predicts only" not in run_cli("tree", "i.csv", "-y", "y", "-q", "-o", "q.json", cwd=tmp_path).stderr


def test_long_work_off_a_terminal_prints_a_plain_progress_line_now_and_then(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from rulecli.cli import console

    monkeypatch.setattr(console, "PLAIN_EVERY", 0.0)  # every step: the test's run is short
    _imbalanced().write_csv(tmp_path / "i.csv")
    ruled = run_cli("ripper", "i.csv", "-y", "y", "-o", "r.json", cwd=tmp_path)
    assert re.search(r"^ripper: \d+ rules? grown so far \(\d+ s\)$", ruled.stderr, flags=re.M), ruled.stderr
    forest = run_cli("forest", "i.csv", "-y", "y", "--trees", "4", "-o", "f.json", cwd=tmp_path)
    assert re.search(r"^forest: \d of 4 trees \(\d+ s\)$", forest.stderr, flags=re.M), forest.stderr
    quiet = run_cli("forest", "i.csv", "-y", "y", "--trees", "4", "-q", "-o", "q.json", cwd=tmp_path)
    assert quiet.stderr == ""


def test_zoned_moments_count_as_their_utc_time_in_memory_polars_and_python(tmp_path: Path):
    rng = np.random.default_rng(9)
    n = 300
    base = pl.datetime(2024, 3, 1, time_zone="UTC")
    frame = pl.DataFrame({"s": rng.integers(0, 10 * 86_400, n)}).select(
        (base + pl.duration(seconds=pl.col("s"))).dt.convert_time_zone("Europe/Paris").alias("seen_at"),
        pl.when(pl.col("s") > 5 * 86_400).then(pl.lit("late")).otherwise(pl.lit("early")).alias("when"),
    )
    frame.write_parquet(tmp_path / "zoned.parquet")
    # the same moments written as text with their offsets, and as naive UTC times
    frame.with_columns(pl.col("seen_at").dt.strftime("%Y-%m-%dT%H:%M:%S%:z")).write_csv(tmp_path / "offsets.csv")
    utc = frame.with_columns(pl.col("seen_at").dt.convert_time_zone("UTC").dt.replace_time_zone(None))
    utc.write_csv(tmp_path / "utc.csv")
    assert run_cli("tree", "utc.csv", "-y", "when", "-q", "-o", "m.json", cwd=tmp_path).code == 0
    expected = pl.read_csv(run_cli("predict", "m.json", "utc.csv", cwd=tmp_path).stdout.encode())["prediction"]
    assert (expected == utc["when"]).mean() > 0.98
    for data in ("zoned.parquet", "offsets.csv"):
        got = pl.read_csv(run_cli("predict", "m.json", data, cwd=tmp_path).stdout.encode())["prediction"]
        assert got.to_list() == expected.to_list(), data
    namespace: dict = {}
    exec(run_cli("export", "m.json", "--to", "python", cwd=tmp_path).stdout, namespace)
    offsets = pl.read_csv(tmp_path / "offsets.csv")
    for rows in (offsets, frame):
        assert [namespace["predict"](r) for r in rows.iter_rows(named=True)] == expected.to_list()
    polars = eval(run_cli("export", "m.json", "--to", "polars", cwd=tmp_path).stdout, {"pl": pl})
    assert offsets.select(polars.alias("p"))["p"].to_list() == expected.to_list()


@pytest.mark.spark
def test_spark_types_dates_ids_and_notes_as_memory_does(tmp_path: Path):
    pytest.importorskip("pyspark")
    frame = _customers(1500, seed=4).with_columns(
        (pl.lit(date(2021, 1, 1)) + pl.duration(days=pl.int_range(pl.len()) % 150))
        .dt.strftime("%Y-%m-%d")
        .alias("signup_date")
    )
    frame[:700].write_parquet(tmp_path / "c-1.parquet")
    frame[700:].write_parquet(tmp_path / "c-2.parquet")
    frame.write_parquet(tmp_path / "c.parquet")
    spark = ["--engine", "spark", "--spark-master", "local[2]"]
    memory = run_cli("tree", "c.parquet", "-y", "churn", "--max-depth", "4", "-q", "-o", "m.json", cwd=tmp_path)
    on_spark = run_cli(
        "tree", "c-*.parquet", "-y", "churn", "--max-depth", "4", "-q", "-o", "s.json", *spark, cwd=tmp_path
    )
    assert memory.code == on_spark.code == 0, (memory.stderr, on_spark.stderr)
    model = json.loads((tmp_path / "m.json").read_text())
    assert model["schema"]["left_out"] == {"Customer ID": "identifies rows", "notes": "identifies rows"}
    assert any(f.get("unit") == "date" for f in model["schema"]["features"])
    assert (tmp_path / "m.json").read_bytes() == (tmp_path / "s.json").read_bytes()
