"""Speed where users feel it: forests, prediction, the covering learners at scale, side by
side with scikit-learn, LightGBM, DuckDB and a bare Polars scan in one run.

Synthetic data of :func:`harness.synthetic` (20 features, ~1% missing, a binary class),
70% train / 30% test. Whole processes are timed with :func:`harness.usage`; in-process
phases (fit, score, save) with the wall clock and the process's CPU seconds (its threads
and the worker processes it waited for) on both sides, reading and encoding excluded.
rulecli and the tool it is compared with run in turn, ``repeats`` times each (A/B/A/B),
so a busy spell of the shared machine slows both; cells are medians.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import polars as pl
from covering import ANCHOR_PYTHON
from harness import OUT, ROOT, RULECLI, WEKA_DATASETS, arff_as_csv, clock, split_arff, synthetic, usage
from trees import REGRESSION_DATASETS, ours, sklearn

from rulecli import io
from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.held_out import evaluate_model, model_size, truth_expr
from rulecli.learners.forest import ForestParams, fit_forest
from rulecli.learners.tree import TreeParams, fit_tree
from rulecli.model.serde import dumps

SIZES = (10_000, 100_000, 1_000_000)
LEARNERS = ("oner", "ripper", "cn2", "aq", "brl", "reduct", "tree", "forest")
QUICK = 20.0  # a growth-table run under this many seconds is repeated for a median
# a 100-tree forest of 700,000 rows is 7M leaves, a JSON file of about 800 MB: not a
# row of a growth table
LARGEST = {"forest": 100_000}
DEPTH = 8  # the depth of the forests compared with LightGBM's and predicting 10M rows

Timing = tuple[float, float]  # wall seconds, CPU seconds
Usage = tuple[float, float, float]  # wall seconds, CPU seconds, peak MiB


def _split(n: int) -> tuple[Path, Path]:
    paths = (OUT / f"speed_{n}.train.parquet", OUT / f"speed_{n}.test.parquet")
    if not all(p.exists() for p in paths):
        df = synthetic(n, seed=7)
        cut = int(n * 0.7)
        df[:cut].write_parquet(paths[0])
        df[cut:].write_parquet(paths[1])
    return paths


def _median(runs: list) -> tuple:
    """The median of each position over runs of equal-length tuples."""
    return tuple(statistics.median(run[i] for run in runs) for i in range(len(runs[0])))


def _anchor(*args: str, timeout: float = 3600) -> dict | None:
    if not ANCHOR_PYTHON.exists():
        return None
    cmd = [str(ANCHOR_PYTHON), str(ROOT / "bench" / "speed_anchor.py"), *args]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def _in_turn(repeats: int, mine: Callable[[], dict], theirs: Callable[[], dict | None]) -> tuple[dict, dict]:
    """Each side ``repeats`` times, alternately; every [wall, CPU] entry becomes its median,
    other entries are the first run's."""
    runs: tuple[list[dict], list[dict]] = ([], [])
    for _ in range(repeats):
        for side, call in zip(runs, (mine, theirs), strict=True):
            result = call()
            if result is not None:
                side.append(result)
    return tuple(  # type: ignore[return-value]
        {
            key: _median([tuple(r[key]) for r in side]) if isinstance(value, tuple | list) else value
            for key, value in side[0].items()
        }
        if side
        else {}
        for side in runs
    )


def _growth_cell(cmd: list[str], repeats: int, timeout: float) -> Usage | None:
    """One run, and the median of ``repeats`` where it took under QUICK seconds."""
    first = usage(cmd, timeout)
    if first is None or first[0] >= QUICK or repeats <= 1:
        return first
    rest = [usage(cmd, timeout) for _ in range(repeats - 1)]
    return _median([first, *(r for r in rest if r is not None)])


def growth(repeats: int) -> tuple[dict[tuple[str, int], Usage | None], list[str]]:
    """Every learner with default options, whole process (read, fit, score the test file,
    write the model), at each size; a learner that times out is not run on larger ones."""
    results: dict[tuple[str, int], Usage | None] = {}
    header = "| learner | " + " | ".join(f"{int(n * 0.7):,} rows" for n in SIZES) + " | growth 10× → 100× |"
    lines = [header, "|---" * (len(SIZES) + 2) + "|"]
    for learner in LEARNERS:
        cells, stopped = [], False
        for n in SIZES:
            if stopped or n > LARGEST.get(learner, n):
                cells.append("not run")
                continue
            train, test = _split(n)
            timeout = 300.0 if n <= 100_000 else 600.0
            cmd = [*RULECLI, learner, str(train), "-y", "class", "--test", str(test), "-q"]
            cmd += ["-o", str(OUT / f"speed_{n}.{learner}.json")]
            try:
                timing = _growth_cell(cmd, repeats, timeout)
            except RuntimeError as refused:  # a learner that declines the table says why
                reason = next((line for line in str(refused).splitlines() if line.startswith("Error:")), "failed")
                cells.append("refused: " + re.sub(r"\{[^}]*\}", "{…}", reason.removeprefix("Error: ")).split(" (")[0])
                stopped = True
                continue
            results[(learner, n)] = timing
            if timing is None:
                cells.append(f"> {timeout:.0f} s")
                stopped = True
            else:
                cells.append(f"{timing[0]:.1f} s / {timing[1]:.1f} s, {timing[2]:.0f} MiB")
        times = [results.get((learner, n)) for n in SIZES]
        ratios = [f"{b[0] / a[0]:.1f}×" for a, b in itertools.pairwise(times) if a and b]
        lines.append(f"| {learner} | " + " | ".join(cells) + f" | {' → '.join(ratios) or '—'} |")
    return results, lines


def _training(n: int = 100_000):
    train, test = _split(n)
    ds = prepare_dataset(io.scan_table(str(train)).collect(), DataSpec(target="class", numeric_target=True))
    return ds, train, test


def forest_phases(repeats: int) -> tuple[dict, dict]:
    """A 100-tree forest on 70,000 rows, --jobs 2: fit, score the 30,000 test rows, save."""
    ds, train, test = _training()

    def mine() -> dict:
        model, fit = clock(lambda: fit_forest(ds, ForestParams(trees=100, jobs=2)))
        scored, score = clock(lambda: evaluate_model(model, io.scan_table(str(test)), truth_expr(model)))
        target = OUT / "speed_forest.json"
        _, save = clock(lambda: target.write_text(dumps(model)))
        accuracy = scored["accuracy"]  # type: ignore[index]
        return {"fit": fit, "score": score, "save": save, "accuracy": accuracy, "bytes": target.stat().st_size}

    return _in_turn(repeats, mine, lambda: _anchor("forest-phases", str(train), str(test)))


def forest_depth(repeats: int) -> tuple[dict, dict]:
    """100 trees of depth ≤ DEPTH on 70,000 rows: rulecli, scikit-learn, LightGBM's rf."""
    ds, train, test = _training()

    def mine() -> dict:
        params = ForestParams(trees=100, max_depth=DEPTH, jobs=2)
        model, fit = clock(lambda: fit_forest(ds, params))
        return {"fit": fit, "accuracy": evaluate_model(model, io.scan_table(str(test)), truth_expr(model))["accuracy"]}

    return _in_turn(repeats, mine, lambda: _anchor("forest-depth", str(train), str(test), str(DEPTH)))


def tree_default(repeats: int) -> tuple[dict, dict]:
    """One tree with default options on 70,000 rows (rulecli's includes choosing its
    pruning by cross-validation; scikit-learn's default grows the tree whole)."""
    ds, train, test = _training()

    def mine() -> dict:
        model, fit = clock(lambda: fit_tree(ds, TreeParams()))
        accuracy = evaluate_model(model, io.scan_table(str(test)), truth_expr(model))["accuracy"]
        return {"fit": fit, "accuracy": accuracy, "leaves": model_size(model)}

    return _in_turn(repeats, mine, lambda: _anchor("tree-default", str(train), str(test)))


def forest_small() -> tuple[float, float]:
    """Mean forest fit per split on the Weka sets (in-process, as --cv runs it), both sides."""
    mine, theirs = [], []
    for name in WEKA_DATASETS + REGRESSION_DATASETS:
        train, test, _ = split_arff(name, 1)
        arff_as_csv(train, test)
        target = io.scan_table(str(train)).collect_schema().names()[-1]
        regression = name in REGRESSION_DATASETS
        mine.append(ours("forest", train, test, trees=100)["fit_seconds"])
        options = {"n_estimators": 100, "n_jobs": 2, **({"max_features": 1 / 3} if regression else {})}
        result = sklearn(
            "forest-regression" if regression else "forest",
            train.with_suffix(".csv"),
            test.with_suffix(".csv"),
            target,
            options,
        )
        theirs.append(result["fit_seconds"] if result else float("nan"))
    return statistics.mean(mine), statistics.mean(theirs)


def predict_data(n_rows: int) -> Path:
    data = OUT / f"predict_{n_rows}.parquet"
    if not data.exists():
        chunks = [synthetic(1_000_000, seed=s) for s in range(max(1, n_rows // 1_000_000))]
        pl.concat(chunks).write_parquet(data)
    return data


def _process(cmd: list[str], timeout: float) -> dict | None:
    measured = usage(cmd, timeout)
    return None if measured is None else {"run": measured}


def forest_predict(repeats: int, data: Path) -> tuple[dict, dict]:
    """``rulecli predict --proba`` with 100 trees of depth ≤ DEPTH (whole process), and
    scikit-learn's predict_proba on the same rows already in memory."""
    train = OUT / "synthetic_100000.parquet"
    if not train.exists():
        synthetic(100_000).write_parquet(train)
    model = OUT / "speed_forest_d8.json"
    fit = [*RULECLI, "forest", str(train), "-y", "class", "--trees", "100", "--max-depth", str(DEPTH)]
    subprocess.run([*fit, "-o", str(model), "-q"], check=True)
    cmd = [*RULECLI, "predict", str(model), str(data), "--proba", "-o", str(OUT / "speed_preds.parquet")]
    return _in_turn(
        repeats, lambda: _process(cmd, 1800), lambda: _anchor("forest-predict", str(train), str(data), str(DEPTH))
    )


# the bare scan: one rule of two conditions, tested on every row and written out
RULE = 'rule = (pl.col("x0") >= 0.196) & (pl.col("x1") <= 0.137)'
SINK = """
pl.scan_parquet(sys.argv[1]).select(
    pl.when(rule).then(pl.lit("pos")).otherwise(pl.lit("neg")).alias("prediction")
).sink_parquet(sys.argv[2])
"""
BARE = "import sys, polars as pl\n" + RULE + SINK

# the same scan reading every column the model's rules read (each tested for missing
# values, a test that is always true), so that the rule's answer waits on all of them:
# what reading the model's columns costs before any rule is tested
BARE_COLUMNS = (
    "import json, sys, polars as pl\n"
    + RULE
    + """
used = sorted({c["column"] for r in json.load(open(sys.argv[3]))["rules"] for c in r["conditions"]})
rule = rule & (pl.sum_horizontal([pl.col(c).is_null() for c in used]) >= 0)"""
    + SINK
)

DUCKDB = """
import sys, duckdb
case = open(sys.argv[2]).read()
duckdb.sql(f"COPY (SELECT {case} AS prediction FROM read_parquet('{sys.argv[1]}')) TO '{sys.argv[3]}' (FORMAT parquet)")
"""


def ripper_predict(repeats: int, data: Path) -> dict[str, Usage | int | None]:
    """rulecli predict with a ripper model, a bare Polars scan (of the rule's two columns,
    and of every column the model reads) and DuckDB running the exported SQL, whole
    processes, in turn."""
    train, _ = _split(100_000)
    model = OUT / "speed_ripper.json"
    subprocess.run([*RULECLI, "ripper", str(train), "-y", "class", "-o", str(model), "-q"], check=True)
    sql = OUT / "speed_ripper.sql"
    subprocess.run([*RULECLI, "export", str(model), "--dialect", "duckdb", "-o", str(sql)], check=True)
    out = str(OUT / "speed_preds.parquet")
    commands = {
        "rulecli": [*RULECLI, "predict", str(model), str(data), "-o", out],
        "bare": [sys.executable, "-c", BARE, str(data), out],
        "bare_columns": [sys.executable, "-c", BARE_COLUMNS, str(data), out, str(model)],
        "duckdb": [sys.executable, "-c", DUCKDB, str(data), str(sql), out],
    }
    runs: dict[str, list[Usage]] = {name: [] for name in commands}
    for _ in range(repeats):
        for name, cmd in commands.items():
            measured = usage(cmd, 600)
            if measured is not None:
                runs[name].append(measured)
    rules = json.loads(model.read_text())["rules"]
    used = {c["column"] for rule in rules for c in rule["conditions"]}
    return {"rules": len(rules), "columns": len(used)} | {
        name: _median(side) if side else None for name, side in runs.items()
    }


def tree_million(repeats: int) -> tuple[dict, dict]:
    """A fully grown tree on 700,000 rows, and LightGBM's one tree of as many leaves."""
    ds, train, test = _training(1_000_000)

    leaves: list[int] = []  # the anchor's LightGBM tree grows as many leaves as rulecli's last

    def mine() -> dict:
        model, fit = clock(lambda: fit_tree(ds, TreeParams(ccp_alpha=0.0)))  # fully grown, as scikit-learn's default
        accuracy = evaluate_model(model, io.scan_table(str(test)), truth_expr(model))["accuracy"]
        leaves.append(model_size(model))
        return {"fit": fit, "accuracy": accuracy, "leaves": leaves[-1]}

    return _in_turn(repeats, mine, lambda: _anchor("tree", str(train), str(test), str(leaves[-1])))


def _t(t: tuple | None, limit: str = "did not finish") -> str:
    """Wall / CPU seconds of a timing."""
    return limit if not t else f"{t[0]:.2f} s / {t[1]:.2f} s"


def _ratio(anchor: tuple | None, mine: tuple | None) -> str:
    """How many times faster rulecli is (the anchor's time over rulecli's), wall / CPU."""
    if not anchor or not mine:
        return "—"
    return f"{anchor[0] / mine[0]:.2f}× / {anchor[1] / mine[1]:.2f}×"


def _forest_rows(phases: dict, sk: dict, depth: tuple[dict, dict], small: tuple[float, float]) -> list[str]:
    lines = []
    for phase, what, goal in (
        ("fit", "fit", "≥ 1.5×"),
        ("score", "score 30,000 test rows", "≥ 1.0×"),
        ("save", "save (JSON / joblib pickle)", "≥ 0.5×"),
    ):
        lines.append(
            f"| forest, 100 trees, 70,000 rows, --jobs 2 / n_jobs=2: {what} | {_t(phases.get(phase))} "
            f"| scikit-learn {_t(sk.get(phase))} | {_ratio(sk.get(phase), phases.get(phase))} | {goal} |"
        )
    mine, theirs = depth
    lines.append(
        f"| forest, 100 trees of depth ≤ {DEPTH}, 70,000 rows, 2 cores: fit | {_t(mine.get('fit'))} "
        f'| scikit-learn {_t(theirs.get("sklearn_fit"))}; LightGBM `boosting="rf"` (as many leaves as the depth '
        f"allows) {_t(theirs.get('lightgbm_fit'))} | {_ratio(theirs.get('sklearn_fit'), mine.get('fit'))} "
        f"scikit-learn; {_ratio(theirs.get('lightgbm_fit'), mine.get('fit'))} LightGBM | ≥ 1.0× LightGBM |"
    )
    lines.append(
        f"| forest fit on small tables (12 Weka sets, mean wall seconds per split, in-process) | {small[0]:.3f} s "
        f"| scikit-learn {small[1]:.3f} s | {small[1] / small[0]:.2f}× | ≥ 0.5× |"
    )
    return lines


def _tree_rows(default: tuple[dict, dict], million: tuple[dict, dict]) -> list[str]:
    mine, theirs = default
    big, tt = million
    return [
        f"| tree, defaults, 70,000 rows: fit (rulecli's includes choosing its pruning by cross-validation: "
        f"{mine.get('leaves', 0):,} leaves) | {_t(mine.get('fit'))} | scikit-learn {_t(theirs.get('sklearn_fit'))} "
        f"({theirs.get('sklearn_leaves', 0):,} leaves, not pruned) | {_ratio(theirs.get('sklearn_fit'), mine.get('fit'))} "
        "| ≥ 2× |",
        f"| tree, fully grown, 700,000 rows: fit ({big.get('leaves', 0):,} leaves) | {_t(big.get('fit'))} "
        f"| scikit-learn {_t(tt.get('sklearn_fit'))} ({tt.get('sklearn_leaves', 0):,} leaves); "
        f"LightGBM, one tree of as many leaves, {_t(tt.get('lightgbm_fit'))} "
        f"| {_ratio(tt.get('sklearn_fit'), big.get('fit'))} scikit-learn; "
        f"{_ratio(tt.get('lightgbm_fit'), big.get('fit'))} LightGBM | ≥ 2× scikit-learn, ≥ 0.5× LightGBM |",
    ]


def _predict_rows(n_rows: int, forest: tuple[dict, dict], rp: dict) -> list[str]:
    mine, theirs = forest
    run = mine.get("run")
    rate = f", {n_rows / run[0]:,.0f} rows/s, {run[2]:.0f} MiB" if run else ""
    mine_rp, bare, duck, columns = rp["rulecli"], rp["bare"], rp["duckdb"], rp["bare_columns"]
    return [
        f"| forest predict --proba, 100 trees of depth ≤ {DEPTH}, {n_rows:,} rows (whole process) | {_t(run)}{rate} "
        f"| scikit-learn predict_proba {_t(theirs.get('predict'))} (in-process, data in memory) "
        f"| {_ratio(theirs.get('predict'), run)} | ≥ 3×, ≥ 1M rows/s |",
        f"| ripper model predict ({rp['rules']} rules), {n_rows:,}-row Parquet (whole processes) "
        f"| {_t(mine_rp)}, {mine_rp[2] if mine_rp else 0:.0f} MiB "
        f"| bare Polars scan → one when/then → sink {_t(bare)}; the same scan reading the model's "
        f"{rp['columns']} columns {_t(columns)}; DuckDB running the exported SQL {_t(duck)} "
        f"| {_ratio(bare, mine_rp)} of the bare scan; {_ratio(columns, mine_rp)} of the scan of the model's "
        f"columns; {_ratio(duck, mine_rp)} DuckDB "
        "| ≥ 0.5× the bare scan, ≥ 1.0× DuckDB |",
    ]


def _covering_rows(grown: dict[tuple[str, int], Usage | None]) -> list[str]:
    lines = []
    for learner, n, goal in (
        ("cn2", 100_000, "< 20 s CPU"),
        ("brl", 100_000, "< 15 s CPU"),
        ("ripper", 1_000_000, "< 30 s wall, < 60 s CPU, < 500 MiB"),
        ("aq", 100_000, "< 60 s"),
    ):
        t = grown.get((learner, n))
        cell = (
            "not run" if (learner, n) not in grown else ("did not finish" if t is None else f"{_t(t)}, {t[2]:.0f} MiB")
        )
        lines.append(f"| {learner}, {n:,} rows (70% train; fit + test, whole process) | {cell} | — | — | {goal} |")
    return lines


def bench_speed(repeats: int, n_rows: int) -> list[str]:
    load_before = os.getloadavg()[0]
    grown, growth_lines = growth(repeats)
    phases, sk = forest_phases(repeats)
    depth = forest_depth(repeats)
    small = forest_small()
    default = tree_default(repeats)
    million = tree_million(repeats)
    data = predict_data(n_rows)
    forest = forest_predict(repeats, data)
    rp = ripper_predict(repeats, data)
    load_after = os.getloadavg()[0]
    big, tt = million
    accuracy = (
        f"Test accuracy: forest {phases.get('accuracy', float('nan')):.4f} (scikit-learn "
        f"{sk.get('accuracy', float('nan')):.4f}); forest of depth ≤ {DEPTH} {depth[0].get('accuracy', float('nan')):.4f} "
        f"(scikit-learn {depth[1].get('sklearn_accuracy', float('nan')):.4f}, LightGBM rf "
        f"{depth[1].get('lightgbm_accuracy', float('nan')):.4f}); tree with defaults {default[0].get('accuracy', float('nan')):.4f} "
        f"(scikit-learn {default[1].get('sklearn_accuracy', float('nan')):.4f}); fully grown tree "
        f"{big.get('accuracy', float('nan')):.4f} (scikit-learn {tt.get('sklearn_accuracy', float('nan')):.4f}, "
        f"LightGBM's one tree {tt.get('lightgbm_accuracy', float('nan')):.4f}). The forest file is "
        f"{phases.get('bytes', 0) / 2**20:.0f} MiB of JSON (scikit-learn's pickle {sk.get('bytes', 0) / 2**20:.0f} MiB)."
    )
    return [
        f"Load average {load_before:.2f} at the start, {load_after:.2f} at the end. Cells: wall / CPU seconds; "
        "speed ratio: the other tool's seconds over rulecli's, wall / CPU (above 1× rulecli is faster).",
        "",
        "| task | rulecli | other tool | speed ratio | goal |",
        "|---|---|---|---|---|",
        *_forest_rows(phases, sk, depth, small),
        *_tree_rows(default, million),
        *_predict_rows(n_rows, forest, rp),
        *_covering_rows(grown),
        "",
        accuracy,
        "",
        "Growth: every learner with default options, whole process (read, fit, score the test file, "
        "write the model); wall / CPU seconds and peak RSS; a learner that does not finish is not run on larger tables.",
        "",
        *growth_lines,
    ]
