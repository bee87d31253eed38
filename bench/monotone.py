"""Monotone constraints: accuracy with and without them, beside scikit-learn's monotonic_cst.

    python bench/monotone.py [--seeds 5] [--rows 1000,10000]

Generated two-class tables whose truth is monotone in three of four numeric columns
(rising in x0 and x1, falling in x2, a U in x3, logistic noise): each learner learns from
the train rows with and without `--monotone 'x0:+,x1:+,x2:-'` and is scored on 10,000 test
rows; scikit-learn's tree and forest (bench-env) learn with and without `monotonic_cst`.
"Breaks" counts the test rows whose P(yes) falls somewhere on a grid of 41 values across
one constrained column, the others fixed (summed over the three columns, on 200 rows).
Prints a Markdown table of means over the seeds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

import rulecli

ROOT = Path(__file__).resolve().parent.parent
ANCHOR = ROOT / "bench" / ".venv-anchors" / "bin" / "python"
SPEC = "x0:+,x1:+,x2:-"
SIGNS = {"x0": 1, "x1": 1, "x2": -1}
TEST_ROWS = 10_000

SKLEARN = r"""
import json, sys
import numpy as np, polars as pl
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier
train, test, grid = (pl.read_csv(p) for p in sys.argv[1:4])
X = lambda f: f.select("x0", "x1", "x2", "x3").to_numpy()
out = {}
for name, make in (("tree", DecisionTreeClassifier), ("forest", RandomForestClassifier)):
    for constrained in (False, True):
        cst = [1, 1, -1, 0] if constrained else None
        model = make(random_state=0, monotonic_cst=cst).fit(X(train), train["y"].to_numpy())
        accuracy = float((model.predict(X(test)) == test["y"].to_numpy()).mean())
        proba = model.predict_proba(X(grid))[:, list(model.classes_).index("yes")]
        out[f"{name}{'+mono' if constrained else ''}"] = (accuracy, proba.tolist())
print(json.dumps(out))
"""


def table(seed: int, n: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4))
    logit = 1.5 * np.tanh(x[:, 0]) + 0.8 * x[:, 1] - 1.0 * x[:, 2] + 0.5 * (x[:, 3] ** 2 - 1)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), "yes", "no")
    return pl.DataFrame({f"x{j}": x[:, j] for j in range(4)}).with_columns(pl.Series("y", y))


def grid_rows(test: pl.DataFrame) -> pl.DataFrame:
    """Per constrained column, 200 test rows with the column set to each of 41 values."""
    base = test.head(200)
    values = np.linspace(-3.0, 3.0, 41)
    return pl.concat(
        [base.with_columns(pl.lit(float(v)).alias(column)) for column in SIGNS for v in values], how="vertical"
    )


def breaks(proba: np.ndarray) -> int:
    blocks = proba.reshape(len(SIGNS), 41, 200)
    return sum(
        int((sign * np.diff(block, axis=0) < -1e-9).any(axis=0).sum())
        for sign, block in zip(SIGNS.values(), blocks, strict=True)
    )


def ours(train: pl.DataFrame, test: pl.DataFrame, grid: pl.DataFrame) -> dict[str, tuple[float, list[float]]]:
    out = {}
    for learner in ("tree", "forest", "ripper"):
        for constrained in (False, True):
            model = rulecli.fit(learner, train, target="y", **({"monotone": SPEC} if constrained else {}))
            accuracy = float((rulecli.predict(model, test)["prediction"] == test["y"]).mean())
            proba = rulecli.predict(model, grid, proba=True)["proba_yes"].to_list()
            out[f"{learner}{'+mono' if constrained else ''}"] = (accuracy, proba)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--rows", default="1000,10000")
    args = parser.parse_args()
    rows = [int(r) for r in args.rows.split(",")]
    results: dict[tuple[int, str], list[tuple[float, int]]] = {}
    with tempfile.TemporaryDirectory() as work:
        for n in rows:
            for seed in range(args.seeds):
                frame = table(seed, n + TEST_ROWS)
                train, test = frame.head(n), frame.tail(TEST_ROWS)
                grid = grid_rows(test)
                paths = [Path(work) / f"{part}.csv" for part in ("train", "test", "grid")]
                for part, path in zip((train, test, grid), paths, strict=True):
                    part.write_csv(path)
                scored = ours(train, test, grid)
                if ANCHOR.exists():
                    done = subprocess.run(
                        [str(ANCHOR), "-c", SKLEARN, *map(str, paths)], capture_output=True, text=True, check=True
                    )
                    scored |= {f"scikit-learn {k}": v for k, v in json.loads(done.stdout).items()}
                for name, (accuracy, proba) in scored.items():
                    results.setdefault((n, name), []).append((accuracy, breaks(np.array(proba))))
                print(f"{n} rows, seed {seed} done", file=sys.stderr)
    print(f"| train rows | model | accuracy (mean of {args.seeds}) | rows that break the order (of 600) |")
    print("|---|---|---|---|")
    for (n, name), values in results.items():
        accuracy = statistics.mean(a for a, _ in values)
        broken = statistics.mean(b for _, b in values)
        print(f"| {n:,} | {name} | {accuracy:.4f} | {broken:.1f} |")


if __name__ == "__main__":
    main()
