"""Forests with default options on tables as users bring them (categorical columns, some
with hundreds of levels, missing values, several classes), beside scikit-learn.

Each table is split 70% / 30% once (seed 1). Both sides run as whole processes: rulecli
reads the training file, fits 100 trees (``--jobs 2``), scores the test file and writes the
model; scikit-learn's side (``sk_anchor.py forest``, ``n_jobs=2``) reads both files,
ordinal-encodes the categories, fits and scores. The two are run in turn (rulecli,
scikit-learn, rulecli, ...), ``repeats`` times each, so a busy machine slows both alike;
wall and CPU seconds are the medians.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import polars as pl
from covering import ANCHOR_PYTHON
from harness import OUT, ROOT, RULECLI, usage

DOC = (
    "100-tree forests with default options, `--jobs 2` / `n_jobs=2`. The largest tables with text columns the "
    "wide benchmark has offline, whole, and two generated tables of 12,000 rows: 30 numeric and 20 text "
    "columns of 3 to 600 levels, 10% of every column missing. A 70% / 30% split; both sides whole processes "
    "(rulecli: read, fit, score the test file, write the model; scikit-learn: read both files, ordinal-encode, "
    "fit, score), run in turn, median of 3 each; speed ratio: scikit-learn's seconds over rulecli's."
)
WIDE_TABLES = OUT / "wide" / "tables"
PUBLIC = ("lending-club", "default", "churn", "caravan")  # the largest offline tables with text columns
TIMEOUT = 900.0


def generated(n: int, n_classes: int, seed: int) -> pl.DataFrame:
    """30 numeric and 20 categorical features (3 to 600 levels), 10% of every column missing;
    the class is a cut of a noisy sum of effects of every feature."""
    rng = np.random.default_rng(seed)
    columns: dict[str, pl.Series] = {}
    score = np.zeros(n)
    for j in range(30):
        x = rng.normal(size=n)
        score += x * rng.normal() * 0.3
        columns[f"x{j}"] = pl.Series(np.where(rng.random(n) < 0.1, np.nan, np.round(x, 3))).fill_nan(None)
    for j in range(20):
        levels = int(rng.choice([3, 10, 40, 150, 600]))
        code = rng.integers(0, levels, n)
        score += rng.normal(size=levels)[code] * 0.5
        gone = rng.random(n) < 0.1
        columns[f"c{j}"] = pl.Series([None if out else f"lv{v}" for v, out in zip(code, gone, strict=True)])
    cuts = np.quantile(score + rng.normal(size=n), np.linspace(0, 1, n_classes + 1)[1:-1])
    columns["class"] = pl.Series([f"k{v}" for v in np.searchsorted(cuts, score)])
    return pl.DataFrame(columns)


def tables() -> dict[str, tuple[pl.DataFrame, str]]:
    """name -> (table, target)."""
    out: dict[str, tuple[pl.DataFrame, str]] = {}
    for name in PUBLIC:
        path = WIDE_TABLES / f"{name}.parquet"
        if path.exists():  # written by the wide benchmark from the anchors' packages
            frame = pl.read_parquet(path)
            out[name] = (frame, frame.columns[-1])
    out["generated, 2 classes"] = (generated(12_000, 2, seed=2), "class")
    out["generated, 3 classes"] = (generated(12_000, 3, seed=1), "class")
    return out


def _split(name: str, frame: pl.DataFrame) -> tuple[Path, Path]:
    stem = OUT / "forest_tables" / name.replace(", ", "_").replace(" ", "_")
    stem.parent.mkdir(parents=True, exist_ok=True)
    train, test = stem.with_suffix(".train.parquet"), stem.with_suffix(".test.parquet")
    order = np.random.default_rng(1).permutation(frame.height)
    cut = int(frame.height * 0.7)
    frame[order[:cut]].write_parquet(train)
    frame[order[cut:]].write_parquet(test)
    return train, test


def _median(runs: list[tuple[float, float, float]]) -> tuple[float, float]:
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def _accuracy(metrics: Path) -> float:
    return float(json.loads(metrics.read_text())["test"]["accuracy"])


def bench_forest_tables(repeats: int) -> list[str]:
    if not ANCHOR_PYTHON.exists():
        return ["scikit-learn is not installed (`make bench-env`): not run."]
    lines = [
        "| table | rows (train) | features (text) | classes | rulecli wall / CPU | scikit-learn wall / CPU "
        "| speed ratio wall / CPU | test accuracy rulecli / scikit-learn |",
        "|---|---|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        model, metrics = Path(tmp) / "forest.json", Path(tmp) / "metrics.json"
        for name, (frame, target) in tables().items():
            train, test = _split(name, frame)
            ours_cmd = [*RULECLI, "forest", str(train), "-y", target, "--test", str(test), "--jobs", "2"]
            ours_cmd += ["-q", "-o", str(model), "--metrics-out", str(metrics)]
            theirs_cmd = [str(ANCHOR_PYTHON), str(ROOT / "bench" / "sk_anchor.py"), "forest", str(train), str(test)]
            theirs_cmd += [target, json.dumps({"n_estimators": 100, "n_jobs": 2})]
            mine, theirs = [], []
            for _ in range(repeats):
                for cmd, runs in ((ours_cmd, mine), (theirs_cmd, theirs)):
                    measured = usage(cmd, TIMEOUT)
                    if measured is not None:
                        runs.append(measured)
            accuracy = _accuracy(metrics) if mine else float("nan")
            their_accuracy = _their_accuracy(theirs_cmd)
            features = frame.drop(target)
            text = sum(1 for dtype in features.dtypes if dtype == pl.String)
            k = frame.get_column(target).n_unique()
            if not mine or not theirs:
                lines.append(
                    f"| {name} | {int(frame.height * 0.7):,} | {features.width} ({text}) | {k} | did not finish |"
                )
                continue
            (mw, mc), (tw, tc) = _median(mine), _median(theirs)
            lines.append(
                f"| {name} | {int(frame.height * 0.7):,} | {features.width} ({text}) | {k} | {mw:.1f} s / {mc:.1f} s "
                f"| {tw:.1f} s / {tc:.1f} s | {tw / mw:.2f}× / {tc / mc:.2f}× | {accuracy:.4f} / {their_accuracy:.4f} |"
            )
    return lines


def _their_accuracy(cmd: list[str]) -> float:
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=TIMEOUT)
    return float(json.loads(done.stdout.strip().splitlines()[-1])["accuracy"])
