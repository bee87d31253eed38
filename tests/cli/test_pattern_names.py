"""Column names Polars reads as patterns (``^a.*$`` a regular expression, ``*`` every column)
are names like any other: every learner, engine, export and ``predict`` takes them literally."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import rulecli
from rulecli import learners
from tests.conftest import QUICK, run_cli

NAMES = ["^a.*$", "*", "^.*$", "a|b", "col(x)"]


@pytest.fixture(scope="module")
def patterns(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(4)
    n = 200
    x = rng.normal(size=n).round(3)
    root = tmp_path_factory.mktemp("patterns")
    frame = pl.DataFrame(
        {
            NAMES[0]: x,
            NAMES[1]: rng.normal(size=n).round(3),
            NAMES[2]: rng.choice(["u", "v"], n),
            NAMES[3]: rng.choice(["s", "t"], n),
            NAMES[4]: (x * 2).round(3),
            "y": np.where(x > 0.1, "p", "q"),
        }
    )
    frame.write_parquet(root / "rx.parquet")
    frame.write_csv(root / "rx.csv")
    # the same names on a text column and a column of dates, typed on paths written since
    # (the date typing read '^a.*$' as a pattern: IndexError in every learner)
    days = pl.date_range(pl.date(2020, 1, 1), pl.date(2020, 1, 1) + pl.duration(days=n - 1), eager=True)
    typed = pl.DataFrame(
        {
            NAMES[0]: rng.choice(["u", "v"], n),
            "^d.*$": days.cast(pl.String),
            NAMES[1]: x,
            "y": np.where(x > 0.1, "p", "q"),
        }
    )
    typed.write_parquet(root / "typed.parquet")
    typed.write_csv(root / "typed.csv")
    return root


@pytest.mark.parametrize("learner", learners.names("classes"))
def test_every_learner_reads_pattern_like_names_literally(patterns: Path, learner: str):
    # a column named ^a.*$ gave "Error: IndexError: index 0 is out of bounds" in every learner
    args = [learner, "rx.parquet", "-y", "y", "-q", *QUICK.get(learner, [])]
    learned = run_cli(*args, "-o", f"{learner}.json", cwd=patterns)
    assert learned.code == 0, learned.stderr
    scored = run_cli("evaluate", f"{learner}.json", "rx.parquet", "--json", "--min-accuracy", "0.8", cwd=patterns)
    assert scored.code == 0, scored.stdout + scored.stderr
    assert run_cli("predict", f"{learner}.json", "rx.csv", cwd=patterns).code == 0


@pytest.mark.parametrize("learner", learners.names())
@pytest.mark.parametrize("table", ["typed.csv", "typed.parquet"])
def test_text_and_date_columns_with_pattern_like_names(patterns: Path, learner: str, table: str):
    # a number to predict for the learners of numbers: the column '*' (x itself)
    target = "y" if learners.get(learner).class_target else NAMES[1]
    learned = run_cli(
        learner, table, "-y", target, "-q", "-o", f"t-{learner}.json", *QUICK.get(learner, []), cwd=patterns
    )
    assert learned.code == 0, learned.stderr
    scored = run_cli("predict", f"t-{learner}.json", table, cwd=patterns)
    assert scored.code == 0, scored.stderr


@pytest.mark.parametrize("learner", ["oner", "tree", "ripper"])
def test_an_engine_reads_pattern_like_names_as_memory_does(patterns: Path, learner: str):
    memory = run_cli(learner, "rx.csv", "-y", "y", "-q", "--json", cwd=patterns)
    on_duckdb = run_cli(learner, "rx.csv", "-y", "y", "-q", "--json", "--engine", "duckdb", cwd=patterns)
    assert on_duckdb.code == 0, on_duckdb.stderr
    assert on_duckdb.stdout == memory.stdout


@pytest.mark.parametrize("target", ["sql", "python", "polars", "pmml"])
def test_exports_name_pattern_like_columns_literally(patterns: Path, target: str):
    assert run_cli("tree", "rx.parquet", "-y", "y", "-q", "-o", "t.json", cwd=patterns).code == 0
    exported = run_cli("export", "t.json", "--to", target, cwd=patterns)
    assert exported.code == 0, exported.stderr
    if target == "polars":  # the exported expression runs on the table and agrees with predict
        expr = eval(exported.stdout, {"pl": pl})  # the test's own export
        got = pl.read_parquet(patterns / "rx.parquet").select(expr).to_series().to_list()
        predicted = run_cli("predict", "t.json", "rx.parquet", cwd=patterns).stdout.splitlines()[1:]
        assert [str(v) for v in got] == predicted


@pytest.mark.parametrize("args", [["tree"], ["oner"], ["m5rules"], ["m5rules", "--committees", "2"]], ids=" ".join)
def test_drift_the_report_and_exports_on_text_and_date_columns_with_pattern_like_names(patterns: Path, args: list[str]):
    learner = args[0]
    target = "y" if learners.get(learner).class_target else NAMES[1]
    model = f"d-{'-'.join(args)}.json"
    assert run_cli(*args, "typed.parquet", "-y", target, "-q", "-o", model, cwd=patterns).code == 0
    drift = run_cli("evaluate", model, "typed.csv", "--reference", "typed.parquet", "--json", cwd=patterns)
    assert drift.code == 0, drift.stderr
    assert run_cli("report", model, "typed.csv", "-q", "-o", f"{'-'.join(args)}.html", cwd=patterns).code == 0
    for form in ("sql", "python", "polars"):
        exported = run_cli("export", model, "--to", form, cwd=patterns)
        assert exported.code == 0, (form, exported.stderr)


def test_a_neighbour_correction_reads_pattern_like_names_literally(tmp_path: Path):
    # the stored rows' distance reads every column by its name: in predict and in every export
    rng = np.random.default_rng(5)
    n = 600
    a, b = rng.uniform(0, 10, n), rng.uniform(0, 10, n)
    frame = pl.DataFrame(
        {NAMES[0]: a, NAMES[1]: rng.choice(["p", "q"], n), NAMES[4]: b, "y y": 2 * a + 2 * np.sin(3 * b)}
    ).with_row_index("row")
    frame.write_parquet(tmp_path / "p.parquet")
    args = ["m5rules", "p.parquet", "-y", "y y", "--exclude", "row", "--committees", "2", "--neighbours", "3"]
    assert run_cli(*args, "-q", "-o", "m.json", cwd=tmp_path).code == 0
    model = rulecli.load(tmp_path / "m.json")
    assert model.neighbours is not None and {c.name for c in model.neighbours.columns} >= {NAMES[0], NAMES[4]}
    expected = rulecli.predict(model, frame)["prediction"].to_numpy()
    polars = frame.select(eval(run_cli("export", "m.json", "--to", "polars", cwd=tmp_path).stdout, {"pl": pl}))
    namespace: dict[str, object] = {}
    exec(run_cli("export", "m.json", "--to", "python", cwd=tmp_path).stdout, namespace)
    python = np.array([namespace["predict"](row) for row in frame.to_dicts()])  # type: ignore[operator]
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    con.register("t", frame.to_arrow())
    sql = con.sql(run_cli("export", "m.json", "--to", "sql", "--table", "t", cwd=tmp_path).stdout).pl().sort("row")
    for got in (polars.to_series().to_numpy(), python, sql["prediction"].to_numpy()):
        assert np.allclose(got, expected, rtol=0, atol=1e-9)
    assert run_cli("evaluate", "m.json", "p.parquet", "--baseline", "--json", cwd=tmp_path).code == 0
