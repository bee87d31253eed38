"""brl beside imodels' BayesianRuleListClassifier: same splits, same items."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import numpy as np
import polars as pl
from covering import ANCHOR_PYTHON
from harness import OUT, ROOT, RULECLI, auc, measure, split_arff, synthetic

from rulecli import io
from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.learners.brl import BRLParams, _items, fit_brl
from rulecli.model.compile import condition_expr, prediction_frame
from rulecli.schema import normalize_missing

BINARY_DATASETS = ["breast-cancer", "credit-g", "diabetes", "ionosphere", "labor", "vote"]


def ours(train: Path, test: Path, params: BRLParams) -> dict:
    ds = prepare_dataset(io.scan_table(str(train)).collect(), DataSpec())
    started = time.perf_counter()
    model = fit_brl(ds, params)
    elapsed = time.perf_counter() - started
    frame = io.scan_table(str(test)).collect()
    out = prediction_frame(model, frame.lazy(), proba=True).collect()
    truth = frame.get_column(ds.target).cast(pl.String).to_numpy()
    positive_class = model.classes[1]
    accuracy = float(np.mean(out.get_column("prediction").to_numpy() == truth))
    area = auc(out.get_column(f"proba_{positive_class}").to_numpy(), truth == positive_class)
    return {"accuracy": accuracy, "auc": area, "rules": len(model.rules), "fit_seconds": elapsed}


def one_hot(train: Path, test: Path, params: BRLParams) -> tuple[Path, Path]:
    """The items rulecli mines from, as 0/1 columns for imodels (cuts from the training rows)."""
    ds = prepare_dataset(io.scan_table(str(train)).collect(), DataSpec())
    conditions = _items(ds, params).conditions
    paths = []
    for path in (train, test):
        frame = normalize_missing(io.scan_table(str(path))).collect()
        columns = [condition_expr(c).cast(pl.UInt8).alias(f"i{k}") for k, c in enumerate(conditions)]
        items = frame.select(*columns, pl.col(ds.target).cast(pl.String).alias("__y"))
        target = path.with_suffix(".items.parquet")
        items.write_parquet(target)
        paths.append(target)
    return paths[0], paths[1]


def imodels(train: Path, test: Path, options: dict, timeout: float) -> dict | None:
    cmd = [str(ANCHOR_PYTHON), str(ROOT / "bench" / "brl_anchor.py"), str(train), str(test), json.dumps(options)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def _fmt(result: dict | None, timeout: float) -> str:
    if result is None:
        return f"did not finish in {timeout:.0f} s"
    return f"{result['accuracy']:.3f} / {result['auc']:.3f} / {result['rules']} / {result['fit_seconds']:.2f} s"


def bench_brl_accuracy(splits: int, timeout: float = 600) -> list[str]:
    params = BRLParams()
    configs = [("imodels (defaults: 50,000 iterations)", {}), ("imodels, max_iter=10,000", {"max_iter": 10_000})]
    lines = [
        "Cells: test accuracy / AUC / rules (without the default) / fit seconds, mean over the splits.",
        "",
        "| dataset | rulecli brl (defaults: 3 chains × 10,000 iterations) | "
        + " | ".join(label for label, _ in configs)
        + " | fit-time ratio (imodels defaults / rulecli) |",
        "|---" * (3 + len(configs)) + "|",
    ]
    ratios = []
    for name in BINARY_DATASETS:
        runs: dict[str, list[dict | None]] = {"ours": [], **{label: [] for label, _ in configs}}
        for seed in range(1, splits + 1):
            train, test, _ = split_arff(name, seed)
            runs["ours"].append(ours(train, test, params))
            items_train, items_test = one_hot(train, test, params)
            for label, options in configs:
                runs[label].append(imodels(items_train, items_test, options, timeout))
        cells = [_mean_cell(runs["ours"], timeout)] + [_mean_cell(runs[label], timeout) for label, _ in configs]
        mine = [r["fit_seconds"] for r in runs["ours"] if r]
        theirs = [r["fit_seconds"] for r in runs[configs[0][0]] if r]
        ratio = (sum(theirs) / len(theirs)) / (sum(mine) / len(mine)) if theirs and len(theirs) == splits else None
        ratios.append(ratio)
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {f'{ratio:.1f}×' if ratio else '—'} |")
    return lines


def _mean_cell(results: list[dict | None], timeout: float) -> str:
    if any(r is None for r in results):
        return f"did not finish in {timeout:.0f} s"
    keys = ("accuracy", "auc", "rules", "fit_seconds")
    mean = {k: float(np.mean([r[k] for r in results])) for k in keys}  # type: ignore[index]
    return f"{mean['accuracy']:.3f} / {mean['auc']:.3f} / {mean['rules']:.1f} / {mean['fit_seconds']:.2f} s"


def bench_brl_speed(sizes: list[int], timeout: float = 300) -> list[str]:
    lines = [
        "| rows (train) × features | rulecli brl, whole process | peak RSS | test accuracy / AUC / rules | imodels (defaults), fit |",
        "|---|---|---|---|---|",
    ]
    for n in sizes:
        df = synthetic(n, seed=7)
        cut = int(n * 0.7)
        train, test = OUT / f"brl_{n}.train.parquet", OUT / f"brl_{n}.test.parquet"
        df[:cut].write_parquet(train)
        df[cut:].write_parquet(test)
        cmd = [*RULECLI, "brl", str(train), "-y", "class", "-q", "-o", str(OUT / f"brl_{n}.json")]
        elapsed, rss = measure(cmd, 1)
        result = ours(train, test, BRLParams())
        items_train, items_test = one_hot(train, test, BRLParams())
        theirs = imodels(items_train, items_test, {}, timeout)
        lines.append(
            f"| {cut:,} × 20 | {elapsed:.1f} s | {rss:.0f} MiB | {result['accuracy']:.4f} / {result['auc']:.4f} / "
            f"{result['rules']} | {_fmt(theirs, timeout)} |"
        )
    return lines
