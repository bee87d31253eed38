"""tree and forest beside scikit-learn: accuracy on the same splits, fit time as rows grow."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from covering import ANCHOR_PYTHON
from harness import OUT, ROOT, WEKA_DATASETS, arff_as_csv, mean, split_arff, synthetic

from rulecli import io
from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.held_out import evaluate_model, model_size, truth_expr
from rulecli.learners.forest import ForestParams, fit_forest
from rulecli.learners.tree import TreeParams, fit_tree

REGRESSION_DATASETS = ["cpu", "cpu.with.vendor"]


def ours(mode: str, train: Path, test: Path, target: str | None = None, jobs: int = 2, **limits: object) -> dict:
    """Fit in this process (fit time only, as scikit-learn's is measured) and score the test file."""
    ds = prepare_dataset(io.scan_table(str(train)).collect(), DataSpec(target=target, numeric_target=True))
    started = time.perf_counter()
    if mode == "tree":
        model = fit_tree(ds, TreeParams(**limits))  # type: ignore[arg-type]
    else:
        trees = int(limits.pop("trees", 100))  # type: ignore[call-overload]
        model = fit_forest(ds, ForestParams(trees=trees, jobs=jobs, **limits))  # type: ignore[arg-type]
    elapsed = time.perf_counter() - started
    metrics = evaluate_model(model, io.scan_table(str(test)), truth_expr(model))
    score = {"r2": metrics["r2"]} if ds.regression else {"accuracy": metrics["accuracy"]}
    return {**score, "leaves": model_size(model), "fit_seconds": elapsed}


def sklearn(mode: str, train: Path, test: Path, target: str, options: dict, timeout: float = 1800) -> dict | None:
    cmd = [str(ANCHOR_PYTHON), str(ROOT / "bench" / "sk_anchor.py"), mode, str(train), str(test), target]
    try:
        out = subprocess.run([*cmd, json.dumps(options)], capture_output=True, text=True, check=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_tree_accuracy(splits: int) -> list[str]:
    """Default (fully grown) trees and 100-tree forests on the Weka datasets' splits."""
    configs = [
        ("tree", {}, {}),
        ("tree --max-depth 4", {"max_depth": 4}, {"max_depth": 4}),
        ("forest (100 trees)", {"trees": 100}, {"n_estimators": 100, "n_jobs": 2}),
    ]
    datasets = [(name, False) for name in WEKA_DATASETS] + [(name, True) for name in REGRESSION_DATASETS]
    lines = [
        "Cells: mean test accuracy (R² for the regression sets cpu, cpu.with.vendor) over the splits, "
        "rulecli / scikit-learn; then mean leaves (all trees of a forest).",
        "",
        "| dataset | " + " | ".join(f"{label}: score | {label}: leaves" for label, _, _ in configs) + " |",
        "|---" * (1 + 2 * len(configs)) + "|",
    ]
    gaps: dict[str, list[float]] = {label: [] for label, _, _ in configs}
    times: dict[str, list[tuple[float, float]]] = {label: [] for label, _, _ in configs}
    for name, regression in datasets:
        cells = []
        runs: dict[str, list[tuple[dict, dict]]] = {label: [] for label, _, _ in configs}
        for seed in range(1, splits + 1):
            train, test, _ = split_arff(name, seed)
            arff_as_csv(train, test)
            target = io.scan_table(str(train)).collect_schema().names()[-1]
            for label, ours_limits, sk_options in configs:
                mode = label.split()[0]
                mine = ours(mode, train, test, **dict(ours_limits))
                # the seeds' d/3 features per node for a numeric target (scikit-learn's default is all)
                options = {**sk_options, "max_features": 1 / 3} if regression and mode == "forest" else sk_options
                theirs = sklearn(
                    f"{mode}-regression" if regression else mode,
                    train.with_suffix(".csv"),
                    test.with_suffix(".csv"),
                    target,
                    options,
                )
                runs[label].append((mine, theirs or {}))
                if theirs:
                    times[label].append((mine["fit_seconds"], theirs["fit_seconds"]))
        for label, _, _ in configs:
            key = "r2" if regression else "accuracy"
            mine = mean([m[key] for m, _ in runs[label]])
            theirs = mean([t[key] for _, t in runs[label]])
            gaps[label].append(mine - theirs)
            leaves = (
                f"{mean([m['leaves'] for m, _ in runs[label]]):.0f} / {mean([t['leaves'] for _, t in runs[label]]):.0f}"
            )
            cells += [f"{mine:.3f} / {theirs:.3f}", leaves]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append(
        "| **mean difference** (rulecli − scikit-learn) | "
        + " | ".join(f"**{mean(gaps[label]) * 100:+.2f} points** | " for label, _, _ in configs)
        + " |"
    )
    cells = []
    for label, _, _ in configs:
        mine, theirs = mean([m for m, _ in times[label]]), mean([t for _, t in times[label]])
        cells.append(f"{mine:.3f} s / {theirs:.3f} s ({mine / theirs:.1f}×) | ")
    lines.append("| mean fit time per split, rulecli / scikit-learn | " + " | ".join(cells) + " |")
    return lines


def bench_tree_speed(sizes: list[int], repeats: int, forest_sizes: list[int]) -> list[str]:
    """Fit seconds (median of ``repeats``, fit only) on synthetic data, 70/30 split."""
    lines = [
        "| rows (train) | model | rulecli fit | scikit-learn fit | rulecli / scikit-learn | test accuracy rulecli / scikit-learn | leaves rulecli / scikit-learn |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in sizes:
        df = synthetic(n, seed=7)
        cut = int(n * 0.7)
        paths = {}
        for part, frame in (("train", df[:cut]), ("test", df[cut:])):
            paths[part] = OUT / f"trees_{n}.{part}.parquet"
            frame.write_parquet(paths[part])
        cases = [("tree", {"ccp_alpha": 0.0}, {}, repeats)]  # fully grown, as scikit-learn's default
        if n in forest_sizes:
            cases.append(("forest", {"trees": 100}, {"n_estimators": 100, "n_jobs": 2}, 1))
        for mode, limits, options, runs in cases:
            mine = [ours(mode, paths["train"], paths["test"], target="class", **dict(limits)) for _ in range(runs)]
            theirs = [sklearn(mode, paths["train"], paths["test"], "class", options) for _ in range(runs)]
            my_time = sorted(r["fit_seconds"] for r in mine)[runs // 2]
            their_time = sorted(r["fit_seconds"] for r in theirs if r)[runs // 2]
            label = "tree (fully grown)" if mode == "tree" else "forest, 100 trees, --jobs 2 / n_jobs=2"
            lines.append(
                f"| {cut:,} | {label} | {my_time:.2f} s | {their_time:.2f} s | {my_time / their_time:.2f}× "
                f"| {mine[0]['accuracy']:.4f} / {theirs[0]['accuracy']:.4f} | {mine[0]['leaves']:,} / {theirs[0]['leaves']:,} |"
            )
    return lines
