"""reduct: time on long categorical tables, and accuracy beside the other learners."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import polars as pl
from harness import OUT, RULECLI, WEKA_DATASETS, accuracy_rules_table, measure, split_arff

from rulecli import io
from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.held_out import evaluate_model, model_size, truth_expr
from rulecli.learners.reduct import ReductParams, fit_reduct
from rulecli.learners.ripper import RipperParams, fit_ripper
from rulecli.learners.tree import TreeParams, fit_tree

LEARNERS = {
    "reduct": lambda ds: fit_reduct(ds, ReductParams()),
    "reduct --vote support": lambda ds: fit_reduct(ds, ReductParams(vote="support")),
    "reduct --n-reducts 5 --vote support": lambda ds: fit_reduct(ds, ReductParams(n_reducts=5, vote="support")),
    "reduct --min-rule-accuracy 0.9 --vote support": lambda ds: fit_reduct(
        ds, ReductParams(min_accuracy=0.9, vote="support")
    ),
    "ripper": lambda ds: fit_ripper(ds, RipperParams()),
    "tree --max-depth 6": lambda ds: fit_tree(ds, TreeParams(max_depth=6)),
}


def categorical_table(n: int, d: int = 30, seed: int = 0) -> pl.DataFrame:
    """d categorical attributes of 3 levels; the class is a function of the first five plus 5% noise."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, size=(n, d))
    label = (codes[:, 0] + codes[:, 1] * codes[:, 2] + codes[:, 3] * (codes[:, 4] > 0)) % 3
    noisy = rng.random(n) < 0.05
    label[noisy] = rng.integers(0, 3, noisy.sum())
    names = np.array(["lo", "mid", "hi"])
    columns = {f"a{j}": names[codes[:, j]] for j in range(d)}
    return pl.DataFrame({**columns, "class": np.array(["x", "y", "z"])[label]})


def bench_reduct_speed(sizes: list[int], repeats: int) -> list[str]:
    lines = [
        "| rows × attributes | `reduct --print reducts` | peak RSS | `reduct --print approximations` (reduct, core, approximations) | peak RSS | reduct found |",
        "|---|---|---|---|---|---|",
    ]
    for n in sizes:
        path = OUT / f"reduct_{n}.parquet"
        categorical_table(n).write_parquet(path)
        only = [*RULECLI, "reduct", str(path), "-y", "class", "--print", "reducts", "-q"]
        reduct_time, reduct_rss = measure(only, repeats)
        full = [*RULECLI, "reduct", str(path), "-y", "class", "--print", "approximations", "-q"]
        full_time, full_rss = measure(full, 1)
        found = subprocess_out(only).strip()
        lines.append(
            f"| {n:,} × 30 | {reduct_time:.1f} s | {reduct_rss:.0f} MiB | {full_time:.1f} s (single run) "
            f"| {full_rss:.0f} MiB | {found.count(',') + 1} attributes: {found} |"
        )
    return lines


def subprocess_out(cmd: list[str]) -> str:
    import subprocess

    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def _fit_score(learner: str, train: Path, test: Path) -> dict:
    ds = prepare_dataset(io.scan_table(str(train)).collect(), DataSpec())
    started = time.perf_counter()
    model = LEARNERS[learner](ds)
    elapsed = time.perf_counter() - started
    metrics = evaluate_model(model, io.scan_table(str(test)), truth_expr(model))
    return {"accuracy": metrics["accuracy"], "rules": model_size(model), "fit_seconds": elapsed}


def bench_reduct_accuracy(splits: int) -> list[str]:
    results: dict[str, dict[str, list[dict]]] = {t: {} for t in LEARNERS}
    for name in WEKA_DATASETS:
        for seed in range(1, splits + 1):
            train, test, _ = split_arff(name, seed)
            for tool in LEARNERS:
                results[tool].setdefault(name, []).append(_fit_score(tool, train, test))
    return [
        "Cells: mean test accuracy / mean rules (tree: leaves) over the splits.",
        "",
        *accuracy_rules_table(results, WEKA_DATASETS),
    ]
