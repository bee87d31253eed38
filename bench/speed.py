"""Speed where users feel it: forests, prediction, the covering learners at scale, side by
side with scikit-learn, LightGBM, DuckDB and a bare Polars scan in one run.

Synthetic data of :func:`harness.synthetic` (20 features, ~1% missing, a binary class),
70% train / 30% test. Whole processes are timed with :func:`harness.measure` (median of
``repeats`` runs where a run takes under 20 s, single runs above); in-process phases
(fit, score, save) with ``perf_counter`` on both sides, reading and encoding excluded.
"""

from __future__ import annotations

import itertools
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
from covering import ANCHOR_PYTHON
from harness import OUT, ROOT, RULECLI, WEKA_DATASETS, arff_as_csv, split_arff, synthetic, timed
from trees import REGRESSION_DATASETS, ours, sklearn

from rulecli import io
from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.held_out import evaluate_model, model_size, truth_expr
from rulecli.learners.forest import ForestParams, fit_forest
from rulecli.learners.tree import TreeParams, fit_tree
from rulecli.model.serde import dumps

SIZES = (10_000, 100_000, 1_000_000)
LEARNERS = ("oner", "ripper", "cn2", "aq", "brl", "reduct", "tree", "forest")
QUICK = 20.0  # a run under this many seconds is repeated for a median
# a 100-tree forest of 700,000 rows is 7M leaves, a JSON file of about 800 MB: not a
# row of a growth table
LARGEST = {"forest": 100_000}


def _split(n: int) -> tuple[Path, Path]:
    paths = (OUT / f"speed_{n}.train.parquet", OUT / f"speed_{n}.test.parquet")
    if not all(p.exists() for p in paths):
        df = synthetic(n, seed=7)
        cut = int(n * 0.7)
        df[:cut].write_parquet(paths[0])
        df[cut:].write_parquet(paths[1])
    return paths


def _timed(cmd: list[str], repeats: int, timeout: float) -> tuple[float, float] | None:
    return timed(cmd, repeats, timeout, QUICK)


def _anchor(*args: str, timeout: float = 3600) -> dict | None:
    if not ANCHOR_PYTHON.exists():
        return None
    cmd = [str(ANCHOR_PYTHON), str(ROOT / "bench" / "speed_anchor.py"), *args]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def growth(repeats: int) -> tuple[dict[tuple[str, int], tuple[float, float] | None], list[str]]:
    """Every learner with default options, whole process (read, fit, score the test file,
    write the model), at each size; a learner that times out is not run on larger ones."""
    results: dict[tuple[str, int], tuple[float, float] | None] = {}
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
                timing = _timed(cmd, repeats, timeout)
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
                cells.append(f"{timing[0]:.1f} s, {timing[1]:.0f} MiB")
        times = [results.get((learner, n)) for n in SIZES]
        ratios = [f"{b[0] / a[0]:.1f}×" for a, b in itertools.pairwise(times) if a and b]
        lines.append(f"| {learner} | " + " | ".join(cells) + f" | {' → '.join(ratios) or '—'} |")
    return results, lines


def forest_phases() -> tuple[dict[str, float], dict | None]:
    """A 100-tree forest on 70,000 rows, --jobs 2: fit, score the 30,000 test rows, save."""
    train, test = _split(100_000)
    ds = prepare_dataset(io.scan_table(str(train)).collect(), DataSpec(target="class", numeric_target=True))
    started = time.perf_counter()
    model = fit_forest(ds, ForestParams(trees=100, jobs=2))
    fit = time.perf_counter() - started
    started = time.perf_counter()
    accuracy = evaluate_model(model, io.scan_table(str(test)), truth_expr(model))["accuracy"]
    score = time.perf_counter() - started
    started = time.perf_counter()
    target = OUT / "speed_forest.json"
    target.write_text(dumps(model))
    save = time.perf_counter() - started
    mine = {"fit": fit, "score": score, "save": save, "accuracy": accuracy, "bytes": target.stat().st_size}
    return mine, _anchor("forest-phases", str(train), str(test))


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


def forest_predict(repeats: int, data: Path) -> tuple[tuple[float, float] | None, dict | None]:
    train = OUT / "synthetic_100000.parquet"
    if not train.exists():
        synthetic(100_000).write_parquet(train)
    model = OUT / "speed_forest_d8.json"
    fit = [*RULECLI, "forest", str(train), "-y", "class", "--trees", "100", "--max-depth", "8"]
    subprocess.run([*fit, "-o", str(model), "-q"], check=True)
    cmd = [*RULECLI, "predict", str(model), str(data), "--proba", "-o", str(OUT / "speed_preds.parquet")]
    return _timed(cmd, repeats, 1800), _anchor("forest-predict", str(train), str(data), "8")


BARE = """
import sys, polars as pl
rule = (pl.col("x0") >= 0.196) & (pl.col("x1") <= 0.137)
pl.scan_parquet(sys.argv[1]).select(
    pl.when(rule).then(pl.lit("pos")).otherwise(pl.lit("neg")).alias("prediction")
).sink_parquet(sys.argv[2])
"""

DUCKDB = """
import sys, duckdb
case = open(sys.argv[2]).read()
duckdb.sql(f"COPY (SELECT {case} AS prediction FROM read_parquet('{sys.argv[1]}')) TO '{sys.argv[3]}' (FORMAT parquet)")
"""


def ripper_predict(repeats: int, data: Path) -> dict[str, tuple[float, float] | int | None]:
    train, _ = _split(100_000)
    model = OUT / "speed_ripper.json"
    subprocess.run([*RULECLI, "ripper", str(train), "-y", "class", "-o", str(model), "-q"], check=True)
    sql = OUT / "speed_ripper.sql"
    subprocess.run([*RULECLI, "export", str(model), "--dialect", "duckdb", "-o", str(sql)], check=True)
    out = str(OUT / "speed_preds.parquet")
    return {
        "rules": len(json.loads(model.read_text())["rules"]),
        "rulecli": _timed([*RULECLI, "predict", str(model), str(data), "-o", out], repeats, 600),
        "bare": _timed([sys.executable, "-c", BARE, str(data), out], repeats, 600),
        "duckdb": _timed([sys.executable, "-c", DUCKDB, str(data), str(sql), out], repeats, 600),
    }


def tree_million() -> tuple[dict, dict | None]:
    train, test = _split(1_000_000)
    ds = prepare_dataset(io.scan_table(str(train)).collect(), DataSpec(target="class", numeric_target=True))
    started = time.perf_counter()
    model = fit_tree(ds, TreeParams(ccp_alpha=0.0))  # fully grown, as scikit-learn's default
    fit = time.perf_counter() - started
    accuracy = evaluate_model(model, io.scan_table(str(test)), truth_expr(model))["accuracy"]
    leaves = model_size(model)
    mine = {"fit": fit, "accuracy": accuracy, "leaves": leaves}
    return mine, _anchor("tree", str(train), str(test), str(leaves))


def _s(t: tuple[float, float] | None, limit: str = "did not finish") -> str:
    return limit if t is None else f"{t[0]:.1f} s"


def _ratio(anchor: float | None, mine: float | None) -> str:
    """How many times faster rulecli is (the anchor's time over rulecli's)."""
    return "—" if not anchor or not mine else f"{anchor / mine:.2f}×"


def bench_speed(repeats: int, n_rows: int) -> list[str]:
    grown, growth_lines = growth(repeats)
    phases, sk_phases = forest_phases()
    small_mine, small_theirs = forest_small()
    data = predict_data(n_rows)
    fp_mine, fp_theirs = forest_predict(repeats, data)
    rp = ripper_predict(repeats, data)
    tree_mine, tree_theirs = tree_million()
    sk = sk_phases or {}
    lines = [
        "Speed ratio: the other tool's time over rulecli's (above 1× rulecli is faster).",
        "",
        "| task | rulecli | other tool | speed ratio | goal |",
        "|---|---|---|---|---|",
    ]
    for phase in ("fit", "score", "save"):
        what = {"fit": "fit", "score": "score 30,000 test rows", "save": "save (JSON / joblib pickle)"}[phase]
        lines.append(
            f"| forest, 100 trees, 70,000 rows, --jobs 2 / n_jobs=2: {what} | {phases[phase]:.2f} s "
            f"| scikit-learn {sk.get(phase, float('nan')):.2f} s | {_ratio(sk.get(phase), phases[phase])} | ≥ 1.0× |"
        )
    lines.append(
        f"| forest fit on small tables (12 Weka sets, mean per split, in-process) | {small_mine:.3f} s "
        f"| scikit-learn {small_theirs:.3f} s | {_ratio(small_theirs, small_mine)} | ≥ 0.5× |"
    )
    fp_rows = f"{n_rows / fp_mine[0]:,.0f} rows/s" if fp_mine else ""
    their_predict = fp_theirs["predict"] if fp_theirs else None
    their_cell = (
        f"scikit-learn predict_proba {their_predict:.1f} s (in-process, data in memory)" if their_predict else "—"
    )
    lines.append(
        f"| forest predict --proba, 100 trees of depth ≤ 8, {n_rows:,} rows (whole process) | {_s(fp_mine)}, {fp_rows} "
        f"| {their_cell} | {_ratio(their_predict, fp_mine[0] if fp_mine else None)} | ≥ 1.0×, ≥ 1M rows/s |"
    )
    mine_rp = rp["rulecli"]
    bare, duck = rp["bare"], rp["duckdb"]
    assert isinstance(mine_rp, tuple) and isinstance(bare, tuple) and isinstance(duck, tuple)
    lines.append(
        f"| ripper model predict ({rp['rules']} rules), {n_rows:,}-row Parquet (whole processes) | {_s(mine_rp)} "
        f"| bare Polars scan → one when/then → sink {_s(bare)}; DuckDB running the exported SQL {_s(duck)} "
        f"| {_ratio(bare[0], mine_rp[0])} of the bare scan; {_ratio(duck[0], mine_rp[0])} DuckDB "
        "| ≥ 0.5× the bare scan, ≥ 1.0× DuckDB |"
    )
    for learner, n, goal in (
        ("cn2", 100_000, "< 20 s"),
        ("ripper", 1_000_000, "< 30 s, < 500 MiB"),
        ("aq", 100_000, "< 60 s"),
    ):
        t = grown.get((learner, n))
        cell = (
            "not run"
            if (learner, n) not in grown
            else ("did not finish" if t is None else f"{t[0]:.1f} s, {t[1]:.0f} MiB")
        )
        lines.append(f"| {learner}, {n:,} rows (70% train; fit + test, whole process) | {cell} | — | — | {goal} |")
    tt = tree_theirs or {}
    lines.append(
        f"| tree, fully grown, 700,000 rows (fit, in-process; {tree_mine['leaves']:,} leaves) | {tree_mine['fit']:.2f} s "
        f"| scikit-learn {tt.get('sklearn_fit', float('nan')):.2f} s ({tt.get('sklearn_leaves', 0):,} leaves); "
        f"LightGBM, one tree of as many leaves, {tt.get('lightgbm_fit', float('nan')):.2f} s "
        f"| {_ratio(tt.get('sklearn_fit'), tree_mine['fit'])} scikit-learn; {_ratio(tt.get('lightgbm_fit'), tree_mine['fit'])} LightGBM "
        "| ≥ 1.5× scikit-learn, ≥ 0.5× LightGBM |"
    )
    accuracy = (
        f"Test accuracy: forest {phases['accuracy']:.4f} (scikit-learn {sk.get('accuracy', float('nan')):.4f}); "
        f"tree {tree_mine['accuracy']:.4f} (scikit-learn {tt.get('sklearn_accuracy', float('nan')):.4f}, "
        f"LightGBM's one tree {tt.get('lightgbm_accuracy', float('nan')):.4f}). The forest file is "
        f"{phases['bytes'] / 2**20:.0f} MiB of JSON (scikit-learn's pickle {sk.get('bytes', 0) / 2**20:.0f} MiB)."
    )
    return [
        *lines,
        "",
        accuracy,
        "",
        "Growth: every learner with default options, whole process (read, fit, score the test file, "
        "write the model); time and peak RSS; a learner that does not finish is not run on larger tables.",
        "",
        *growth_lines,
    ]
