"""Exports run elsewhere: a 100-tree forest as SQL in DuckDB, beside `rulecli predict`."""

from __future__ import annotations

import subprocess
import sys

import polars as pl
from harness import OUT, RULECLI, measure, synthetic


def bench_forest_sql(repeats: int, n_rows: int) -> list[str]:
    data = OUT / f"exports_{n_rows}.parquet"
    if not data.exists():
        pl.concat(
            [synthetic(min(n_rows, 1_000_000), seed=s) for s in range(max(1, n_rows // 1_000_000))]
        ).write_parquet(data)
    train = OUT / "synthetic_100000.parquet"
    if not train.exists():
        synthetic(100_000).write_parquet(train)
    model = OUT / "exports_forest.json"
    forest = ["--trees", "100", "--max-depth", "8", "--jobs", "2"]
    subprocess.run([*RULECLI, "forest", str(train), "-y", "class", *forest, "-o", str(model), "-q"], check=True)
    query = OUT / "exports_forest.sql"
    table = f"read_parquet('{data}')"
    subprocess.run([*RULECLI, "export", str(model), "--table", table, "-o", str(query)], check=True)
    pmml = OUT / "exports_forest.pmml"
    subprocess.run([*RULECLI, "export", str(model), "--to", "pmml", "-o", str(pmml)], check=True)
    duck = [
        sys.executable,
        "-c",
        "import duckdb, sys; duckdb.sql(open(sys.argv[1]).read()).write_parquet(sys.argv[2])",
        str(query),
        str(OUT / "exports_duckdb.parquet"),
    ]
    ours = [*RULECLI, "predict", str(model), str(data), "--proba", "-o", str(OUT / "exports_rulecli.parquet")]
    rows = [
        f"Forest of 100 trees of depth <= 8 (trained on 100,000 synthetic rows), scored on {n_rows:,} rows of "
        f"Parquet. SQL: {query.stat().st_size / 2**20:.1f} MiB of text; PMML: {pmml.stat().st_size / 2**20:.1f} MiB.",
        "",
        "| scorer | time | rows/s | peak RSS |",
        "|---|---|---|---|",
    ]
    for label, cmd in (("`rulecli predict --proba`", ours), ("DuckDB running the exported SQL", duck)):
        measured = measure(cmd, repeats)
        assert measured is not None
        elapsed, rss = measured
        rows.append(f"| {label} | {elapsed:.1f} s | {n_rows / elapsed:,.0f} | {rss:.0f} MiB |")
    same = pl.read_parquet(OUT / "exports_rulecli.parquet")["prediction"].equals(
        pl.read_parquet(OUT / "exports_duckdb.parquet")["prediction"]
    )
    rows += ["", f"Predictions identical row for row: {'yes' if same else 'NO'}."]
    return rows
