"""--engine duckdb against the in-memory engine: time, peak memory and passes, 1M -> 100M rows.

The table is pre-binned (20 integer features 0..31, one with 5 % missing values, a rule
with 10 % label noise), written as Parquet files of 1M rows each, so both engines bin it
alike and the model files can be compared byte for byte.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
from harness import OUT, RULECLI, measure, timed

FILE_ROWS = 1_000_000
LEARNERS = {
    "oner": ["oner"],
    "tree": ["tree", "--max-depth", "8"],
    "forest": ["forest", "--trees", "10", "--max-depth", "8"],
}
PARAMS = {"tree": {"max_depth": 8}, "forest": {"trees": 10, "max_depth": 8}}
# a forest is 10 trees' passes: at 100M rows about half an hour in DuckDB here, not run
MAX_ROWS = {"forest": 10_000_000}

PASSES = """
import json, sys, time
from rulecli import api, learners
name, data = sys.argv[1], sys.argv[2]
passes = []
start = time.perf_counter()
table = api.prepare(data, target="y", engine="duckdb", numeric_target=True)
table.on_pass = lambda what, seconds: passes.append((what, seconds))
opened = time.perf_counter() - start
params = api.make_params(name, **json.loads(sys.argv[3]))
api.fit_model(name, table, params)
api.release(table)
print(json.dumps({"open": opened, "passes": passes}))
"""


def _drawn(rows: int, seed: int) -> pl.DataFrame:
    """``rows`` rows of the pre-binned table: two rules, 10 % of the labels flipped."""
    rng = np.random.default_rng(seed)
    x = {f"x{i}": rng.integers(0, 32, rows, dtype=np.int64) for i in range(20)}
    x3 = x["x3"].astype(np.float64)
    x3[rng.random(rows) < 0.05] = np.nan
    y = ((x["x0"] > 15) & (x["x1"] < 20)) | ((x["x2"] > 25) & (x["x4"] < 8))
    y = np.where(rng.random(rows) < 0.1, ~y, y)
    return pl.DataFrame({**x, "x3": x3, "y": np.where(y, "pos", "neg")})


def make_table(rows: int) -> Path:
    """``rows`` rows as Parquet files of a million rows each (made once, then reused)."""
    folder = OUT / "engines" / f"rows{rows}"
    files = max(1, rows // FILE_ROWS)
    if len(list(folder.glob("part-*.parquet"))) == files:
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    for f in range(files):
        _drawn(rows // files, f).write_parquet(folder / f"part-{f:04d}.parquet", row_group_size=250_000)
    return folder


def make_test(rows: int) -> Path:
    """A held-out file drawn like :func:`make_table`'s (its own seed)."""
    path = OUT / "engines" / f"test{rows}.parquet"
    if not path.exists():
        _drawn(rows, 10_000).write_parquet(path)
    return path


def _data(folder: Path, engine: str) -> str:
    """What the command reads: the files' glob for an engine, one file for memory."""
    glob = str(folder / "part-*.parquet")
    if engine != "memory":
        return glob
    whole = folder / "whole.parquet"
    if not whole.exists():
        pl.scan_parquet(glob).sink_parquet(whole)
    return str(whole)


COVERING = ("ripper", "cn2")
# rows up to which a covering learner learns from every row here: cn2 grows thousands of
# rules on this noisy table, a query per beam step on the engine; in memory it took over
# 1,200 s on 1M rows (the last run of this benchmark)
EVERY_ROW = {"ripper": 10_000_000, "cn2": 100_000}
COVERING_TIMEOUT = 1800.0
QUICK = 60.0  # a run under this many seconds is repeated for a median
SAMPLE = 100_000


def bench_covering(sizes: list[int], memory_sizes: list[int], repeats: int) -> list[str]:
    """ripper and cn2 counting in DuckDB on every row, and learning from DuckDB's hashed
    sample with their rules recounted on every row, beside the in-memory engine: time, peak
    memory, passes, rules, held-out accuracy and whether the model file is memory's."""
    test = make_test(FILE_ROWS)
    rows = [
        "The same files; ripper and cn2 with their defaults. `duckdb`: the learner counts in DuckDB "
        "on every row (a query per candidate count — one per grown condition for ripper, one per "
        "beam step for cn2 — and one per condition's rows; the rows themselves stay in memory as "
        "one class code and one bit per row). `duckdb, sample`: `--sample-rows "
        f"{SAMPLE:,}`, the learner learns in memory from the rows DuckDB draws by a hash of the row "
        "numbers, then DuckDB counts each rule's rows on the whole table (one pass). Accuracy on a "
        f"held-out file of {FILE_ROWS:,} rows drawn alike. Median of {repeats} runs where one takes "
        f"under {QUICK:.0f} s and the table has at most 1M rows, else one run.",
        "",
        "| rows | learner | engine | seconds | peak RSS (MiB) | passes | rules | held-out accuracy "
        "| same model file as memory |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n in sizes:
        folder = make_table(n)
        runs = repeats if n <= FILE_ROWS else 1
        for name in COVERING:
            models: dict[str, bytes] = {}
            for engine, sample in (("memory", False), ("duckdb", False), ("duckdb", True)):
                if (engine == "memory" and n not in memory_sizes) or (not sample and n > EVERY_ROW[name]):
                    continue
                label = f"{engine}, sample" if sample else engine
                data = _data(folder, engine)
                out = OUT / "engines" / f"{name}-{label.replace(', ', '-')}-{n}.json"
                extra = ["--sample-rows", str(SAMPLE)] if sample else []
                cmd = [*RULECLI, name, data, "-y", "y", "-q", "--engine", engine, *extra, "-o", str(out)]
                measured = timed(cmd, runs, COVERING_TIMEOUT, QUICK)
                if measured is None:
                    rows.append(f"| {n:,} | {name} | {label} | > {COVERING_TIMEOUT:.0f} | | | | | |")
                    continue
                scored = subprocess.run(
                    [*RULECLI, "evaluate", str(out), str(test), "--json", "--no-per-rule"],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                accuracy = json.loads(scored.stdout)["accuracy"]
                n_rules = len(json.loads(out.read_text())["rules"])
                models[label] = out.read_bytes()
                # + the profile's two scans; a sampled run's are the profile, the sample and the recount
                passes = str(len(_passes(name, data)["passes"]) + 2) if engine == "duckdb" and not sample else ""
                same = ""
                if engine == "duckdb" and "memory" in models:
                    same = "yes" if models[label] == models["memory"] else "no (a sample)" if sample else "**no**"
                rows.append(
                    f"| {n:,} | {name} | {label} | {measured[0]:.1f} | {measured[1]:.0f} | {passes} | {n_rules} "
                    f"| {accuracy:.4f} | {same} |"
                )
    return rows


def _passes(name: str, data: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PASSES, name, data, json.dumps(PARAMS.get(name, {}))],
        capture_output=True,
        text=True,
        check=True,
        timeout=7200,
    )
    return json.loads(out.stdout)


def bench_engines(sizes: list[int], memory_sizes: list[int], repeats: int) -> list[str]:
    rows = [
        "Whole processes, pre-binned data (20 integer features 0..31, one with 5 % missing, 10 % label "
        f"noise) in Parquet files of {FILE_ROWS:,} rows; DuckDB with its defaults (all cores; "
        "`--memory-limit` unset). tree is `--max-depth 8` (pruning chosen by its 3-fold CV on a "
        "2,000-row hashed sample, as in memory); forest is `--trees 10 --max-depth 8` (each tree's "
        "rows weighted by their hashed bootstrap draws, then one pass for the OOB error). Passes: "
        "the engine's queries over the table (profiling, the binned copy, one per tree level, the "
        "sample); seconds per level pass is their median. Median of "
        f"{repeats} runs up to 10M rows, one run above.",
        "",
        "| rows | learner | engine | seconds | peak RSS (MiB) | passes | s / level pass | same model file as memory |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n in sizes:
        folder = make_table(n)
        glob = str(folder / "part-*.parquet")
        runs = repeats if n <= 10_000_000 else 1
        for name, args in LEARNERS.items():
            if n > MAX_ROWS.get(name, n):
                continue
            models = {}
            for engine in ("memory", "duckdb"):
                if engine == "memory" and n not in memory_sizes:
                    continue
                data = _data(folder, engine)
                out = OUT / "engines" / f"{name}-{engine}-{n}.json"
                cmd = [*RULECLI, *args, data, "-y", "y", "-q", "--engine", engine, "-o", str(out)]
                measured = measure(cmd, runs)
                assert measured is not None
                models[engine] = out.read_bytes()
                passes, level = "", ""
                if engine == "duckdb":
                    record = _passes(name, glob)
                    levels = [s for what, s in record["passes"] if what.startswith("count ") and "node" in what]
                    passes = str(len(record["passes"]) + 2)  # + the profile's two scans
                    level = f"{statistics.median(levels):.2f}" if levels else "—"
                same = (
                    ""
                    if engine == "memory" or "memory" not in models
                    else ("yes" if models["memory"] == models["duckdb"] else "**no**")
                )
                rows.append(
                    f"| {n:,} | {name} | {engine} | {measured[0]:.1f} | {measured[1]:.0f} | {passes} | {level} | {same} |"
                )
    return rows


MLLIB = """
import json, sys, time
from rulecli import api, learners
from rulecli.engines import EngineOptions
from rulecli.engines.spark import _session
data, master = sys.argv[1], sys.argv[2]
spark = _session(master)
spark.read.parquet(data).count()  # the files in the OS cache for both
start = time.perf_counter()
table = api.prepare(data, target="y", engine=EngineOptions(engine="spark", spark_master=master), numeric_target=True)
model = learners.get("tree").fit(table, api.make_params("tree", max_depth=8, ccp_alpha=0.0))
api.release(table)
ours = time.perf_counter() - start
from pyspark.ml.classification import DecisionTreeClassifier
from pyspark.ml.feature import StringIndexer, VectorAssembler
start = time.perf_counter()
df = spark.read.parquet(data).na.fill(-1.0, ["x3"])
features = [c for c in df.columns if c != "y"]
df = VectorAssembler(inputCols=features, outputCol="features", handleInvalid="keep").transform(df)
df = StringIndexer(inputCol="y", outputCol="label").fit(df).transform(df)
tree = DecisionTreeClassifier(maxDepth=8, maxBins=33, labelCol="label").fit(df)
theirs = time.perf_counter() - start
print(json.dumps({"rulecli": ours, "mllib": theirs, "leaves": model.info.training["leaves"], "mllib_nodes": tree.numNodes}))
"""


def bench_spark(sizes: list[int], master: str = "local[2]") -> list[str]:
    """rulecli --engine spark beside Spark MLlib's DecisionTreeClassifier in one session."""
    rows = [
        f"One Spark session ({master}, this machine), depth 8, the same Parquet files: rulecli's tree "
        "(`--engine spark --max-depth 8 --ccp-alpha 0`, profile and binning included) and MLlib's "
        "`DecisionTreeClassifier(maxDepth=8, maxBins=33)` (assembling the feature vector and indexing "
        "the label included; MLlib has no missing values, so x3's are filled with -1). One run each.",
        "",
        "| rows | rulecli (s) | MLlib (s) | ratio (MLlib / rulecli) |",
        "|---|---|---|---|",
    ]
    for n in sizes:
        glob = str(make_table(n) / "part-*.parquet")
        out = subprocess.run(
            [sys.executable, "-c", MLLIB, glob, master], capture_output=True, text=True, check=True, timeout=7200
        )
        record = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(
            f"| {n:,} | {record['rulecli']:.1f} | {record['mllib']:.1f} | {record['mllib'] / record['rulecli']:.2f} |"
        )
    return rows
