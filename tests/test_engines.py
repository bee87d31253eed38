"""--engine duckdb: the same model files as the in-memory engine, through the real command."""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from rulecli import learners
from rulecli.engines import sql
from rulecli.engines.sql import row_hash as sql_row_hash
from rulecli.stats import bag_key, poisson_draws, row_hash
from tests.conftest import run_cli, slow_for

duckdb = pytest.importorskip("duckdb")

HOSTILE = ["it's", 'say "hi"', "back\\slash", "'); DROP TABLE t; --", "plain"]
NAME = 'we"ird col'  # a column name that needs quoting in every dialect


def _features(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, pl.Series, np.ndarray]:
    """Pre-binned features (few distinct values: the engines bin them alike), missing values
    as NaN and as null, hostile levels."""
    x0 = rng.integers(0, 20, n).astype(float)
    x1 = rng.integers(0, 12, n).astype(float)
    x1[rng.random(n) < 0.08] = np.nan
    x2 = pl.Series("x2", rng.integers(0, 6, n)).scatter(np.flatnonzero(rng.random(n) < 0.05), None)
    return x0, x1, x2, rng.choice(HOSTILE, n)


def _table(n: int, seed: int = 0) -> pl.DataFrame:
    """:func:`_features` and a target the features decide up to noise."""
    rng = np.random.default_rng(seed)
    x0, x1, x2, level = _features(n, rng)
    y = np.where((x0 > 9) & (level != "plain"), "yes", np.where(np.nan_to_num(x1, nan=0.0) > 8, "maybe", "no"))
    y = np.where(rng.random(n) < 0.1, rng.choice(["yes", "no", "maybe"], n), y)
    return pl.DataFrame({"x0": x0, NAME: x1, "x2": x2, "level": level, "y": y})


def _whole_and_parts(root: Path, df: pl.DataFrame) -> None:
    """The table as one Parquet file and as a glob of two, in row groups of 300."""
    df.write_parquet(root / "whole.parquet")
    df[:1000].write_parquet(root / "part-1.parquet", row_group_size=300)
    df[1000:].write_parquet(root / "part-2.parquet", row_group_size=300)


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("engines")
    df = _table(2600)
    _whole_and_parts(root, df)
    small = _table(400, seed=1)
    small[:150].write_parquet(root / "small-1.parquet")
    small[150:].write_parquet(root / "small-2.parquet")
    small.write_parquet(root / "small.parquet")
    with duckdb.connect(str(root / "db.duckdb")) as con:
        con.register("frame", df.to_arrow())
        con.sql("CREATE TABLE rows AS SELECT * FROM frame")
    return root


def _model(args: list[str], cwd: Path, out: str) -> bytes:
    result = run_cli(*args, "-y", "y", "-q", "-o", out, cwd=cwd)
    assert result.code == 0, result.stderr
    return (cwd / out).read_bytes()


@pytest.mark.parametrize(
    "learner",
    [
        ["oner"],
        ["oner", "--discretize", "mdlp"],
        ["tree", "--max-depth", "8"],
        ["tree", "--max-leaf-nodes", "6", "--criterion", "entropy"],
        # the five longest (4-12 s each) in make test-long
        pytest.param(["tree"], marks=pytest.mark.engines),  # pruning chosen by CV on the engine's hashed sample
        # one pass: the distinct rows of cells; truncation chosen on the hashed sample
        pytest.param(["reduct"], marks=pytest.mark.engines),
        # a pass per candidate count and per condition's rows; the splits in memory
        pytest.param(["ripper"], marks=pytest.mark.engines),
        pytest.param(["ripper", "--unordered", "--missing-tests", "--seed", "4"], marks=pytest.mark.engines),
        ["cn2"],  # a pass per beam member's candidate counts
        ["cn2", "--unordered", "--beam-width", "3"],
        # a pass per level of each tree, its rows' draws hashed
        pytest.param(["forest", "--trees", "10", "--max-depth", "8"], marks=pytest.mark.engines),
        ["forest", "--trees", "4", "--max-leaf-nodes", "8", "--criterion", "entropy", "--seed", "3"],
    ],
    ids=" ".join,
)
def test_duckdb_learns_the_in_memory_model(tables: Path, learner: list[str]):
    # cn2 asks a query per beam step of each of its many rules on this noisy table: the small one
    whole, glob = ("small.parquet", "small-*.parquet") if learner[0] == "cn2" else ("whole.parquet", "part-*.parquet")
    memory = _model([*learner, whole], tables, "memory.json")
    on_glob = _model([*learner, glob, "--engine", "duckdb"], tables, "glob.json")
    assert on_glob == memory
    if learner in (["tree"], ["ripper"], ["forest", "--trees", "10", "--max-depth", "8"]):
        on_db = _model([*learner, "db.duckdb", "--db-table", "rows", "--engine", "duckdb"], tables, "db.json")
        assert on_db == memory


def test_a_forests_out_of_bag_sums_go_group_by_group(tables: Path, monkeypatch: pytest.MonkeyPatch):
    # a deep forest's out-of-bag query is split into groups of trees, each adding to the
    # sums the last wrote: the same doubles as one query, and as memory
    from rulecli.engines import table
    from rulecli.engines.duckdb import DuckDB

    args = ["forest", "--trees", "6", "--max-depth", "6", "--seed", "2"]
    memory = _model([*args, "whole.parquet"], tables, "oob.memory.json")
    monkeypatch.setattr(table, "OOB_NODES", 150)
    written: list[str] = []
    materialise = DuckDB.materialise

    def counted(self: DuckDB, query: str, path: str, failure: str) -> str:
        written.append(path)
        return materialise(self, query, path, failure)

    monkeypatch.setattr(DuckDB, "materialise", counted)
    assert _model([*args, "part-*.parquet", "--engine", "duckdb"], tables, "oob.duckdb.json") == memory
    assert sum("oob" in p for p in written) == 5  # six groups of one tree: five sums written before the last


@pytest.fixture(scope="module")
def long_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """100,000 pre-binned rows (2 % label noise): the engines' passes at a length where a
    row set spans thousands of words and the profile samples."""
    rng = np.random.default_rng(7)
    n = 100_000
    x = {f"x{i}": rng.integers(0, 8, n).astype(float) for i in range(8)}
    x["x1"][rng.random(n) < 0.05] = np.nan
    c = rng.choice(["a", "b", "c"], n)
    y = np.where((x["x0"] > 4) & (c != "a"), "yes", np.where(x["x2"] < 2, "maybe", "no"))
    y = np.where(rng.random(n) < 0.02, rng.choice(["yes", "no", "maybe"], n), y)
    root = tmp_path_factory.mktemp("long")
    pl.DataFrame({**x, "c": c, "y": y}).write_parquet(root / "long.parquet")
    return root


@pytest.mark.parametrize(
    "learner",
    [
        ["oner"],
        # past 30,000 rows memory chooses the pruning on a held-out quarter, an engine on a
        # sample: the same tree given the strength
        ["tree", "--max-depth", "8", "--ccp-alpha", "0.0001"],
        # the two longest (10 s each) in make test-slow: both learn alike on 2,600 rows above
        pytest.param(["forest", "--trees", "10", "--max-depth", "8"], marks=pytest.mark.slow),
        # (reduct too chooses its settings on a held-out quarter in memory, on a sample in an engine)
        ["reduct", "--precision", "0.9", "--min-share", "0.01", "--majority-rules", "keep"],
        pytest.param(["ripper"], marks=pytest.mark.slow),
        ["cn2", "--max-rules", "40"],  # it grows 1,229 rules here, a query per beam step each
    ],
    ids=lambda learner: " ".join(learner),
)
@pytest.mark.engines
def test_duckdb_learns_the_in_memory_model_on_100k_rows(long_table: Path, learner: list[str]):
    memory = _model([*learner, "long.parquet"], long_table, f"{learner[0]}.memory.json")
    assert _model([*learner, "long.parquet", "--engine", "duckdb"], long_table, f"{learner[0]}.duckdb.json") == memory


def _other_formats(tables: Path) -> None:
    df = pl.read_parquet(tables / "whole.parquet")
    df.write_csv(tables / "whole.csv")
    # another delimiter, a word for missing values and an extension that says nothing
    df.write_csv(tables / "whole.txt", separator=";", null_value="NA")
    df.write_ndjson(tables / "whole.ndjson")


@pytest.mark.parametrize(
    "read",
    [
        ["whole.csv"],
        ["whole.txt", "--input-format", "csv", "--delimiter", ";", "--null-values", "NA"],
        ["whole.csv", "--categorical", "x2"],  # digits kept as text, as in memory
        ["whole.ndjson"],
    ],
    ids=" ".join,
)
@pytest.mark.engines
@pytest.mark.parametrize("learner", [["ripper"], ["tree", "--max-depth", "8"]], ids=" ".join)
def test_duckdb_learns_from_a_parquet_copy_of_other_formats(tables: Path, tmp_path: Path, learner, read):
    _other_formats(tables)
    memory = _model([*learner, *read], tables, "memory.json")
    spill = tmp_path / "spill"
    spill.mkdir()
    args = [*learner, *read, "--engine", "duckdb", "--temp-directory", str(spill)]
    assert _model(args, tables, "copy.json") == memory
    assert list(spill.iterdir()) == []  # the copy went with the command


@pytest.mark.engines
def test_duckdb_reads_standard_input_through_a_copy(tables: Path):
    _other_formats(tables)
    text = (tables / "whole.csv").read_text()
    memory = run_cli("ripper", "-", "-y", "y", "--json", stdin=text)
    engine = run_cli("ripper", "-", "-y", "y", "--json", "--engine", "duckdb", stdin=text)
    assert engine.code == memory.code == 0, engine.stderr
    assert engine.stdout == memory.stdout


@pytest.mark.engines
def test_rows_without_a_target_leave_the_row_numbers_in_step(tmp_path: Path):
    # ripper's rows are numbered in memory: the engine numbers the rows with a target alike
    df = _table(900, seed=2).with_columns(y=pl.when(pl.int_range(pl.len()) % 7 == 3).then(None).otherwise(pl.col("y")))
    df.write_parquet(tmp_path / "gaps.parquet")
    memory = _model(["ripper", "gaps.parquet"], tmp_path, "memory.json")
    assert _model(["ripper", "gaps.parquet", "--engine", "duckdb"], tmp_path, "duck.json") == memory


@pytest.mark.parametrize("learner", ["ripper", "cn2"])
def test_minus_zero_is_zero_on_every_engine(tmp_path: Path, learner: str):
    # -0.0 and 0.0 are one value: which of them np.unique kept once differed from DuckDB's
    rng = np.random.default_rng(3)
    x = np.concatenate([[-0.0] * 50, rng.normal(size=850).round(0)])  # -0.0 first: np.unique kept it
    assert (np.signbit(x) & (x == 0)).any() and (~np.signbit(x) & (x == 0)).any()
    y = np.where((x == 0) ^ (rng.random(900) < 0.1), "pos", "neg")
    pl.DataFrame({"x": x, "y": y}).write_parquet(tmp_path / "z.parquet")
    memory = _model([learner, "z.parquet"], tmp_path, "memory.json")
    values = [c["value"] for r in json.loads(memory)["rules"] for c in r["conditions"]]
    zeros = [v for value in values for v in (value if isinstance(value, list) else [value]) if v == 0]
    assert zeros and all(math.copysign(1.0, v) > 0 for v in zeros), values
    assert _model([learner, "z.parquet", "--engine", "duckdb"], tmp_path, "duck.json") == memory


@pytest.mark.engines
def test_ripper_bins_a_feature_of_many_values_at_data_values(tmp_path: Path):
    rng = np.random.default_rng(5)
    x = rng.normal(size=3000).round(6)  # about 3,000 distinct values: binned at quantiles
    y = np.where((x > 0.4) ^ (rng.random(3000) < 0.05), "hi", "lo")
    pl.DataFrame({"x": x, "z": rng.integers(0, 3, 3000), "y": y}).write_parquet(tmp_path / "t.parquet")
    model = json.loads(_model(["ripper", "t.parquet", "--engine", "duckdb"], tmp_path, "m.json"))
    thresholds = [c["value"] for r in model["rules"] for c in r["conditions"] if c["column"] == "x"]
    assert thresholds and set(thresholds) <= set(x.tolist())
    assert abs(thresholds[0] - 0.4) < 0.05
    # the statistics are the rules' own rows, as evaluate counts them
    result = run_cli("evaluate", "m.json", "t.parquet", "--json", cwd=tmp_path)
    assert result.code == 0, result.stderr
    recount = json.loads(result.stdout)
    listed = [*model["rules"], model["default"]]
    assert [r["covered"] for r in recount["rules"]] == [r["stats"]["covered"] for r in listed]


def _number_table(n: int, seed: int = 0) -> pl.DataFrame:
    """:func:`_features` and a numeric target piecewise in them, with rows without a target
    (NaN and null)."""
    rng = np.random.default_rng(seed)
    x0, x1, x2, level = _features(n, rng)
    y = np.where(x0 > 9, 3.0 * np.nan_to_num(x1, nan=5.0) + 2.0, 10.0 - x0) + 4.0 * (level == "plain")
    y = y + rng.normal(0.0, 1.0, n)
    y[rng.random(n) < 0.03] = np.nan
    target = pl.Series("y", y).scatter(np.flatnonzero(rng.random(n) < 0.03), None)
    return pl.DataFrame({"x0": x0, NAME: x1, "x2": x2, "level": level, "y": target})


def _same_but_roundings(memory: bytes, engine: bytes) -> None:
    """The same model file but for the engine's units of a number (2**-29 of its half
    range, where memory adds doubles: relative differences under 1e-6), and the engine's
    record of a sample."""
    differences: list[str] = []

    def walk(a: object, b: object, path: str) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            if a.keys() != b.keys():
                differences.append(f"{path}: keys {sorted(a.keys() ^ b.keys())}")
            for k in a.keys() & b.keys():
                walk(a[k], b[k], f"{path}/{k}")
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{path}[{i}]")
        elif isinstance(a, float) and isinstance(b, float | int) and not isinstance(b, bool):
            if abs(a - b) > 1e-6 * max(abs(a), abs(b)):
                differences.append(f"{path}: {a} != {b}")
        elif a != b:
            differences.append(f"{path}: {a!r} != {b!r}")

    ours, theirs = json.loads(memory), json.loads(engine)
    sample = theirs["training"].pop("sample", None)
    assert sample is None or sample["statistics"] == "recounted on every row"
    walk(ours, theirs, "")
    assert not differences, differences[:10]


@pytest.fixture(scope="module")
def number_tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("numbers")
    _whole_and_parts(root, _number_table(2600))
    return root


NUMBER_LEARNERS = [
    ["tree", "--max-depth", "6", "--ccp-alpha", "0"],
    ["tree", "--max-leaf-nodes", "8"],
    pytest.param(["tree"], marks=pytest.mark.engines),  # pruning chosen by CV on the engine's sample
    ["forest", "--trees", "4", "--max-depth", "5"],
    # learned from the engine's sample (here every row), the rules' statistics recounted
    ["ripper"],
    ["cn2", "--unordered"],
    ["m5rules"],
    ["m5rules", "--committees", "2"],  # each list's statistics recounted against the target
]


@pytest.mark.parametrize("learner", NUMBER_LEARNERS, ids=" ".join)
def test_duckdb_learns_the_in_memory_model_of_a_number(number_tables: Path, learner: list[str]):
    memory = _model([*learner, "whole.parquet"], number_tables, "memory.json")
    _same_but_roundings(memory, _model([*learner, "part-*.parquet", "--engine", "duckdb"], number_tables, "duck.json"))


def test_an_engine_reads_an_integer_target_as_memory_does(tmp_path: Path):
    # the target's reading weighs its values' counts (0 the most frequent: counts), which
    # the engine's profile has only as counts of values
    rng = np.random.default_rng(4)
    visits = rng.poisson(0.8, 1200)
    df = pl.DataFrame({"x": rng.integers(0, 5, 1200), "visits": visits})
    df.write_parquet(tmp_path / "v.parquet")
    for target, reading in (("visits", "counts"), ("x", None)):
        args = ["tree", "v.parquet", "-y", target, "--max-depth", "2", "-q", "-o"]
        assert run_cli(*args, "m.json", cwd=tmp_path).code == 0
        assert run_cli(*args, "e.json", "--engine", "duckdb", cwd=tmp_path).code == 0
        memory, engine = (json.loads((tmp_path / f).read_text())["schema"]["target"] for f in ("m.json", "e.json"))
        assert engine == memory
        assert (reading or "integer codes") in str(memory)


SPARK = ["--engine", "spark", "--spark-master", "local[2]"]


@pytest.mark.spark
@pytest.mark.parametrize(
    "learner",
    [["oner"], ["tree", "--max-depth", "8"], ["tree"], ["reduct"], ["ripper"], ["cn2"], ["forest", "--trees", "10"]],
    ids=" ".join,
)
def test_spark_learns_the_in_memory_model(tables: Path, learner: list[str]):
    pytest.importorskip("pyspark")
    # the covering learners ask a query per step, each a Spark job: the small table
    name = "small" if learner[0] in ("ripper", "cn2") else "part"
    memory = _model([*learner, f"{name}.parquet" if name == "small" else "whole.parquet"], tables, "memory.json")
    assert _model([*learner, f"{name}-*.parquet", *SPARK], tables, "spark.json") == memory


@pytest.fixture(scope="module")
def connect_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Spark Connect server of pyspark's own jars on loopback, as a cluster would serve one."""
    pyspark = pytest.importorskip("pyspark")
    home = Path(pyspark.__file__).parent
    logs = tmp_path_factory.mktemp("connect")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOG_DIR": str(logs),
        "SPARK_PID_DIR": str(logs),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    conf = ["--master", "local[2]", "--conf", "spark.ui.enabled=false"]
    conf += [
        "--conf",
        "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf",
        f"spark.connect.grpc.binding.port={port}",
    ]
    subprocess.run(["bash", str(home / "sbin" / "start-connect-server.sh"), *conf], env=env, check=True)
    try:
        deadline = time.monotonic() + 120
        while "Spark Connect server started" not in "".join(p.read_text() for p in logs.glob("*.out")):
            assert time.monotonic() < deadline, "the Spark Connect server did not start"
            time.sleep(1)
        yield f"sc://127.0.0.1:{port}"
    finally:
        subprocess.run(["bash", str(home / "sbin" / "stop-connect-server.sh")], env=env, check=False)


@pytest.mark.spark
@pytest.mark.parametrize("learner", [["tree", "--max-depth", "8"], ["ripper"]], ids=" ".join)
def test_spark_connect_learns_the_in_memory_model(tables: Path, connect_url: str, learner: list[str]):
    memory = _model([*learner, "small.parquet"], tables, "memory.json")
    # the server reads the files: a path of its file system (here the same machine's). A process
    # of its own, as the command runs: PySpark opens no remote session beside this process's
    # local one (the other Spark tests')
    files = str(tables / "small-*.parquet")
    out = tables / "sc.json"
    command = [*learner, files, "-y", "y", "-q", "--engine", "spark", "--spark-master", connect_url, "-o", str(out)]
    result = subprocess.run([sys.executable, "-m", "rulecli", *command], capture_output=True, text=True, cwd=tables)
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == memory


@pytest.mark.spark
@pytest.mark.parametrize(
    "learner",
    [
        ["tree", "--max-depth", "6", "--ccp-alpha", "0"],
        ["forest", "--trees", "3", "--max-depth", "5"],
        ["ripper"],
        ["cn2", "--unordered"],
        ["m5rules", "--committees", "2"],
    ],
    ids=" ".join,
)
def test_spark_learns_the_in_memory_model_of_a_number(number_tables: Path, learner: list[str]):
    pytest.importorskip("pyspark")
    memory = _model([*learner, "whole.parquet"], number_tables, "memory.json")
    _same_but_roundings(memory, _model([*learner, "part-*.parquet", *SPARK], number_tables, "spark.json"))


@pytest.mark.spark
def test_spark_recounts_a_sampled_learners_rules(tables: Path):
    pytest.importorskip("pyspark")
    memory = json.loads(_model(["brl", "small.parquet"], tables, "brl.memory.json"))
    spark = json.loads(_model(["brl", "small-*.parquet", *SPARK], tables, "brl.spark.json"))
    assert spark["training"].pop("sample")["statistics"] == "recounted on every row"
    assert spark == memory


@pytest.mark.spark
def test_a_relative_path_is_read_from_the_callers_directory(tables: Path, tmp_path: Path):
    # the session (and its JVM) outlives one call: a later call from another directory read
    # its relative path against the first one's ("part-*.parquet: no such file")
    pytest.importorskip("pyspark")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "small.parquet").write_bytes((tables / "small.parquet").read_bytes())
    first = _model(["oner", "small.parquet", *SPARK], elsewhere, "first.json")
    assert _model(["oner", "small-*.parquet", *SPARK], tables, "second.json") == first


@pytest.mark.spark
def test_spark_errors_are_one_line(tables: Path):
    pytest.importorskip("pyspark")
    result = run_cli("tree", "nothing-*.parquet", "-y", "y", *SPARK, cwd=tables)
    assert result.code == 2 and result.stderr == "Error: nothing-*.parquet: no such file\n", result.stderr


@pytest.mark.spark
def test_spark_reads_an_existing_file_as_itself_not_as_a_glob(tmp_path: Path):
    # Spark reads every path as a Hadoop glob: 'd[1].parquet' read d1.parquet, 'st*r' star
    pytest.importorskip("pyspark")
    rows = {"y": ["a", "b"] * 10}
    for wrong, right in (("d1.parquet", "d[1].parquet"), ("star.parquet", "st*r.parquet")):
        pl.DataFrame({"x": [1, 2, 3, 4] * 5, **rows}).write_parquet(tmp_path / wrong)
        pl.DataFrame({"z": [1, 2, 3, 4] * 5, **rows}).write_parquet(tmp_path / right)
        learned = run_cli("oner", right, "-y", "y", "-q", "--json", *SPARK, cwd=tmp_path)
        assert learned.code == 0, (right, learned.stderr)
        assert [f["name"] for f in json.loads(learned.stdout)["schema"]["features"]] == ["z"], right


SAMPLED = [name for name in learners.names("classes") if "duckdb" not in learners.get(name).engines]


@pytest.mark.engines
@pytest.mark.parametrize("learner", slow_for(SAMPLED, ("brl",)))
def test_learners_without_an_engine_form_learn_from_its_sample(tables: Path, learner: str):
    learner_args = [learner, *(["--max-error", "0.2"] if learner == "aq" else [])]  # aq: no tuning CV, quicker
    memory = json.loads(_model([*learner_args, "small.parquet"], tables, f"{learner}.memory.json"))
    # a sample as large as the table is the table: the same model, its statistics recounted alike
    whole = json.loads(_model([*learner_args, "small-*.parquet", "--engine", "duckdb"], tables, f"{learner}.json"))
    assert whole["training"].pop("sample") == {
        "rows": 400, "of_rows": 400, "drawn_by": "a hash of the row numbers", "seed": 0,
        "statistics": "recounted on every row",
    }  # fmt: skip
    assert whole == memory
    part = json.loads(
        _model([*learner_args, "small-*.parquet", "--engine", "duckdb", "--sample-rows", "150"], tables, "part.json")
    )
    assert 100 < part["training"]["sample"]["rows"] < 200
    # every row is counted once, by a rule or by the default
    covered = [r["stats"]["covered"] for r in part["rules"]] + [part["default"]["stats"]["covered"]]
    assert sum(covered) == 400 if part["kind"] == "decision_list" else max(covered) <= 400


def test_a_learner_counting_in_the_engine_learns_from_a_sample_when_asked(tables: Path):
    args = ["ripper", "small-*.parquet", "--engine", "duckdb"]
    whole = json.loads(_model(args, tables, "whole.json"))
    assert "sample" not in whole["training"]
    part = json.loads(_model([*args, "--sample-rows", "150"], tables, "part.json"))
    assert 100 < part["training"]["sample"]["rows"] < 200
    assert part["training"]["sample"]["statistics"] == "recounted on every row"
    assert sum(r["stats"]["covered"] for r in [*part["rules"], part["default"]]) == 400


def test_hostile_values_stay_values(tables: Path):
    model = json.loads(
        _model(["oner", "part-*.parquet", "--engine", "duckdb", "--features", "level"], tables, "h.json")
    )
    # every level came back from the engine as itself: one rule each, its value verbatim
    assert sorted(r["conditions"][0]["value"] for r in model["rules"]) == sorted(HOSTILE)


def test_binned_copy_is_removed(tables: Path, tmp_path: Path):
    spill = tmp_path / "spill"
    spill.mkdir()
    result = run_cli(
        "tree", str(tables / "whole.parquet"), "-y", "y", "-q", "--engine", "duckdb", "--max-depth", "2",
        "--temp-directory", str(spill), "--memory-limit", "500MB",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert list(spill.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["tree", "whole.csv", "--engine", "spark", "--spark-master", "local[1]"], "reads Parquet files"),
        (["tree", "ragged.csv", "--engine", "duckdb"], "ragged.csv: "),
        (["tree", "whole.parquet", "--engine", "duckdb", "--cv", "3"], "--cv reads the table in memory"),
        (["tree", "whole.parquet", "--memory-limit", "1GB"], "go with --engine duckdb"),
        (["ripper", "whole.parquet", "--sample-rows", "100"], "--sample-rows goes with --engine duckdb or spark"),
        (["tree", "nothing-*.parquet", "--engine", "duckdb"], "no such file"),
        (["tree", "whole.parquet", "--engine", "dask"], "--engine must be one of"),
        (["tree", "whole.parquet", "--engine", "duckdb", "--memory-limit", "lots"], "--engine duckdb:"),
        (["tree", "db.duckdb", "--engine", "duckdb", "--db-table", "nope"], "no table 'nope'"),
        (["oner", "whole.parquet", "--engine", "duckdb", "--validation-fraction", "0.3"], "--engine memory"),
        (["forest", "whole.parquet", "--engine", "duckdb", "--importance", "permutation"], "impurity importance"),
        (["forest", "whole.parquet", "--engine", "duckdb", "--partial-dependence", "x0"], "--engine memory"),
    ],
)
def test_engine_errors_are_one_line(tables: Path, args: list[str], message: str):
    pl.read_parquet(tables / "whole.parquet").write_csv(tables / "whole.csv")
    (tables / "ragged.csv").write_text("x0,y\n1,yes\n2,no,extra\n3\n")
    result = run_cli(*args, "-y", "y", cwd=tables)
    assert result.code == 2
    assert message in result.stderr
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1, result.stderr


def test_sql_row_hash_is_numpys():
    ids = np.array([0, 1, 2, 999, 2**31 - 2, 2**31 - 1, 2**31, 2**40 + 7, 10**12], dtype=np.int64)
    values = ", ".join(f"({i})" for i in ids)
    for seed in (0, 1, 123456):
        got = duckdb.sql(f"SELECT {sql_row_hash('i', seed)} FROM (VALUES {values}) AS t(i)").fetchall()
        assert [g for (g,) in got] == row_hash(ids, seed).tolist()
    for tree in np.random.SeedSequence(5).spawn(3):
        bag = bag_key(tree)
        hashed = f"SELECT {sql.bag_hash('i', bag)} AS h FROM (VALUES {values}) AS t(i)"
        query = f"SELECT {sql.poisson_draws('h')} FROM ({hashed})"
        assert [g for (g,) in duckdb.sql(query).fetchall()] == poisson_draws(ids, bag).tolist()


def test_duckdb_draws_no_progress_bar_on_stdout():
    from rulecli.engines import EngineOptions
    from rulecli.engines.duckdb import DuckDB

    # a long query would draw one on stdout, where --json and predictions go
    backend = DuckDB(EngineOptions(engine="duckdb"))
    assert backend.frame("SELECT current_setting('enable_progress_bar') AS on", "").item() is False
    backend.close()


def test_duckdb_reads_an_existing_file_as_itself_not_as_a_glob(tmp_path: Path):
    # DuckDB reads every path as a glob: 'd[1].parquet' read d1.parquet when both existed
    rows = {"y": ["a", "b"] * 10}
    pl.DataFrame({"x": [1, 2, 3, 4] * 5, **rows}).write_parquet(tmp_path / "d1.parquet")
    pl.DataFrame({"z": [1, 2, 3, 4] * 5, **rows}).write_parquet(tmp_path / "d[1].parquet")
    pl.DataFrame({"z": [1, 2, 3, 4] * 5, **rows}).write_csv(tmp_path / "h[1].csv")
    for name in ("d[1].parquet", "h[1].csv"):
        learned = run_cli("oner", name, "-y", "y", "-q", "--json", "--engine", "duckdb", cwd=tmp_path)
        assert learned.code == 0, (name, learned.stderr)
        assert [f["name"] for f in json.loads(learned.stdout)["schema"]["features"]] == ["z"], name
    both = run_cli("oner", "d*.parquet", "-y", "y", "-q", "--engine", "duckdb", cwd=tmp_path)
    assert both.code == 2 and "schema mismatch" in both.stderr  # a glob is still a glob


def test_a_feature_of_many_values_is_cut_at_exact_quantiles(tmp_path: Path):
    # approximate quantiles (t-digests) fall between the data's values and change with the
    # order the engine's threads read the rows in; exact ones are values of the data
    from rulecli.dataset import DataSpec
    from rulecli.engines import EngineOptions, open_table

    rng = np.random.default_rng(8)
    x = rng.normal(size=20_000).round(9)
    pl.DataFrame({"x": x, "y": np.where(x > 0.3, "a", "b")}).write_parquet(tmp_path / "q.parquet")
    table = open_table(str(tmp_path / "q.parquet"), DataSpec(target="y"), EngineOptions(engine="duckdb", threads=4))
    try:
        edges = table.bins(255).edges[0]
    finally:
        table.close()
    assert 250 <= edges.size <= 254
    assert set(edges.tolist()) <= set(x.tolist())
    shares = np.searchsorted(np.sort(x), edges) / x.size  # each cut's quantile, 1/255 apart
    assert np.abs(np.diff(shares) - 1 / 255).max() < 1e-3
