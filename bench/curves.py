"""Learning curves (every learner from 1k to 1M rows, beside scikit-learn and Weka) and the
messy customer table (an ID, a signup date, notes, missing values) beside a hand-prepared
scikit-learn tree.

Each fit is a whole `rulecli LEARNER` process with default options and `--time-limit`;
its wall and CPU seconds and peak RSS are measured around the process, and its accuracy by
`rulecli evaluate` on held-out rows. A learner that did not finish at one size is not run
at the larger ones.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from functools import partial
from pathlib import Path

import numpy as np
import polars as pl
from covering import ANCHOR_PYTHON
from harness import OUT, RULECLI, WEKA_JAR, synthetic, usage, weka_available, write_arff
from messy import customers

LEARNERS = ["oner", "ripper", "cn2", "aq", "brl", "reduct", "tree", "forest"]
TEST_ROWS = 30_000


def timed(cmd: list[str], limit: float) -> tuple[float, float, float] | None:
    """(wall s, CPU s, peak MiB) of one process, or None when it failed or ran past ``limit``."""
    try:
        return usage(cmd, limit + 30)
    except RuntimeError:
        return None


def planted(n: int, seed: int) -> pl.DataFrame:
    """Rules a rule learner can state exactly, 10 % of labels flipped: the best accuracy is 0.9."""
    rng = np.random.default_rng(seed)
    x = {f"x{j}": rng.random(n).round(4) for j in range(6)}
    c = {f"c{j}": rng.choice(["p", "q", "r", "s"], n) for j in range(3)}
    rule = ((x["x0"] > 0.6) & (c["c0"] != "p")) | ((x["x1"] < 0.25) & (x["x2"] > 0.5)) | (c["c1"] == "s")
    y = np.where(rule, "yes", "no")
    y = np.where(rng.random(n) < 0.1, np.where(y == "yes", "no", "yes"), y)
    return pl.DataFrame({**x, **c, "class": y})


def _data(name: str, n: int) -> tuple[Path, Path]:
    make = planted if name == "planted" else synthetic
    train, test = OUT / f"curve_{name}_{n}.parquet", OUT / f"curve_{name}_test.parquet"
    if not train.exists():
        make(n, seed=11).write_parquet(train)
    if not test.exists():
        make(TEST_ROWS, seed=99).write_parquet(test)
    return train, test


def _accuracy(model: Path, test: Path) -> float | None:
    out = subprocess.run([*RULECLI, "evaluate", str(model), str(test), "--json"], capture_output=True, text=True)
    return json.loads(out.stdout)["accuracy"] if out.returncode == 0 else None


def _size(model: Path) -> str:
    data = json.loads(model.read_text())
    if "rules" in data:
        return str(len(data["rules"]))
    training = data.get("training", {})
    return str(training.get("leaves", "")) if "tree" in data else f"{training.get('leaves', '')} leaves"


def _ours(
    learner: str, name: str, n: int, train: Path, test: Path, limit: float
) -> tuple[float, float, float, float, str] | None:
    """One rulecli fit with defaults, measured, and its model scored on ``test``."""
    model = OUT / f"curve_{name}_{learner}_{n}.json"
    cmd = [*RULECLI, learner, str(train), "-y", "class", "-q", "-o", str(model), "--time-limit", str(limit)]
    measured = timed(cmd, limit)
    return None if measured is None else (*measured, _accuracy(model, test), _size(model))


def _sklearn(mode: str, train: Path, test: Path, limit: float) -> tuple[float, float, float, float, str] | None:
    options = {"n_jobs": 2} if mode == "forest" else {}
    cmd = [str(ANCHOR_PYTHON), str(OUT.parent / "sk_anchor.py"), mode, str(train), str(test), "class"]
    out_file = OUT / f"sk_{mode}.json"
    # the anchor prints its figures; the wrapper times the whole process
    wrapped = ["sh", "-c", f'"$@" > {out_file}', "sh", *cmd, json.dumps(options)]
    measured = timed(wrapped, limit)
    if measured is None:
        return None
    result = json.loads(out_file.read_text().strip().splitlines()[-1])
    return (*measured, result["accuracy"], str(result["leaves"]))


def _weka(tool: str, train: Path, test: Path, limit: float) -> tuple[float, float, float, float, str] | None:
    arff = {p: p.with_suffix(".arff") for p in (train, test)}
    for parquet, path in arff.items():
        if not path.exists():
            write_arff(pl.read_parquet(parquet), path)
    out_file = OUT / "weka.txt"
    cmd = ["java", "-Xmx12g", "-cp", str(WEKA_JAR), tool, "-t", str(arff[train]), "-T", str(arff[test]), "-no-cv"]
    measured = timed(["sh", "-c", f'"$@" > {out_file}', "sh", *cmd], limit)
    if measured is None:
        return None
    section = out_file.read_text().split("=== Error on test data ===", 1)[1]
    accuracy = float(re.search(r"Correctly Classified Instances\s+\d+\s+([\d.]+)", section).group(1)) / 100
    return (*measured, accuracy, "")


def _cell(m: tuple | None, limit: float) -> str:
    if m is None:
        return f"did not finish in {limit:.0f} s"
    wall, cpu, rss, accuracy, size = m
    return f"{accuracy:.4f} | {size} | {wall:.1f} / {cpu:.1f} | {rss:.0f}"


def _hopeless(last: dict[str, tuple[int, float]], tool: str, n: int, limit: float) -> str | None:
    """A table row saying why ``tool`` is not run at ``n`` rows: at least linear in rows, it
    would pass twice the limit at the pace of its last size (None: run it)."""
    if tool not in last or last[tool][1] * n / last[tool][0] <= 2 * limit:
        return None
    rows, wall = last[tool]
    return f"| {tool} | {n:,} | not run: {wall:.0f} s at {rows:,} rows | | | |"


def bench_curves(sizes: list[int], limit: float, use_weka: bool) -> list[str]:
    lines = [
        f"Load average at the start: {os.getloadavg()[0]:.2f}. Cells: test accuracy on {TEST_ROWS:,} held-out "
        "rows | rules (leaves) | wall / CPU seconds of the whole process | peak RSS MiB. Defaults everywhere; "
        f"`--time-limit {limit:.0f}`; a tool that did not finish at one size is not run at larger ones, nor one "
        "whose last size's wall seconds, grown linearly, would pass twice the limit. The machine is shared: a wall "
        "time well above the CPU time marks a run slowed by other work.",
        "",
    ]
    anchors = [("scikit-learn tree", "sk", "tree"), ("scikit-learn forest (n_jobs=2)", "sk", "forest")]
    if use_weka:
        anchors += [
            ("Weka JRip", "weka", "weka.classifiers.rules.JRip"),
            ("Weka OneR -B 6", "weka", "weka.classifiers.rules.OneR"),
            ("Weka J48", "weka", "weka.classifiers.trees.J48"),
        ]
    for name, ceiling in (("planted", "0.90 (10 % of labels flipped)"), ("synthetic", "about 0.82")):
        lines += [
            f"### {name} data (best accuracy {ceiling})",
            "",
            "| learner | rows | accuracy | rules | wall / CPU s | peak MiB |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        failed: set[str] = set()
        last: dict[str, tuple[int, float]] = {}  # each tool's rows and wall seconds at the last size
        for n in sizes:
            train, test = _data(name, n)
            runs = [(learner, partial(_ours, learner, name, n, train, test, limit)) for learner in LEARNERS]
            runs += [
                (label, partial(_sklearn if kind == "sk" else _weka, tool, train, test, limit))
                for label, kind, tool in anchors
            ]
            for label, run in runs:
                if label in failed:
                    continue
                if (skipped := _hopeless(last, label, n, limit)) is not None:
                    lines.append(skipped)
                    failed.add(label)
                    continue
                result = run()
                if result is None:
                    failed.add(label)
                else:
                    last[label] = (n, result[0])
                lines.append(f"| {label} | {n:,} | {_cell(result, limit)} |")
                print(lines[-1], flush=True)
        lines.append("")
    return lines


def _by_hand(frame: pl.DataFrame) -> pl.DataFrame:
    """The customer table as one prepares it for scikit-learn: the ID and notes dropped, the
    date as days since 1970, the rest as read."""
    return frame.drop("Customer ID", "notes").with_columns(
        pl.col("signup_date").str.to_date().cast(pl.Int32).alias("signup_date")
    )


def bench_messy(limit: float) -> list[str]:
    frame = customers(5000, seed=0)
    split = np.random.default_rng(1).random(frame.height) < 0.7
    train, test = OUT / "messy_train.csv", OUT / "messy_test.csv"
    frame.filter(pl.Series(split)).write_csv(train)
    frame.filter(pl.Series(~split)).write_csv(test)
    majority = frame.filter(pl.Series(~split))["churn_risk"].value_counts(normalize=True)["proportion"].max()
    lines = [
        f"`bench/messy.py`: 5,000 customers (3,500 to learn from, 1,500 held out): a `Customer ID`, a "
        f"`signup_date` (ISO text, 5 % empty), free-text `notes`, age and income with missing values, plan, "
        f"region, support tickets; `churn_risk` is 84 % `low` (the held-out majority rate is {majority:.4f}). "
        f"Load average at the start: {os.getloadavg()[0]:.2f}. Defaults everywhere. 'ID or notes used' and "
        "'date as text' read the model's conditions.",
        "",
        "| learner | accuracy | balanced accuracy | rules | wall / CPU s | ID or notes used | date as text |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    for learner in LEARNERS:
        model = OUT / f"messy_{learner}.json"
        cmd = [*RULECLI, learner, str(train), "-y", "churn_risk", "-q", "-o", str(model), "--time-limit", str(limit)]
        measured = timed(cmd, limit)
        if measured is None:
            lines.append(f"| {learner} | did not finish in {limit:.0f} s | | | | | |")
            continue
        out = subprocess.run([*RULECLI, "evaluate", str(model), str(test), "--json"], capture_output=True, text=True)
        metrics = json.loads(out.stdout)
        text = json.dumps(json.loads(model.read_text()).get("rules", []))
        data = json.loads(model.read_text())
        used = {f["name"] for f in data["schema"]["features"]}
        leaked = "yes" if {"Customer ID", "notes"} & used else "no"
        as_text = "yes" if re.search(r'"signup_date", "op": "[^"]+", "value": "', text) else "no"
        lines.append(
            f"| {learner} | {metrics['accuracy']:.4f} | {metrics['balanced_accuracy']:.4f} | {_size(model)} | "
            f"{measured[0]:.1f} / {measured[1]:.1f} | {leaked} | {as_text} |"
        )
        print(lines[-1], flush=True)
    if ANCHOR_PYTHON.exists():
        hand_train, hand_test = OUT / "messy_hand_train.parquet", OUT / "messy_hand_test.parquet"
        _by_hand(pl.read_csv(train)).write_parquet(hand_train)
        _by_hand(pl.read_csv(test)).write_parquet(hand_test)
        for label, options in (
            ("scikit-learn tree, prepared by hand", {}),
            ("the same, min_samples_leaf=20", {"min_samples_leaf": 20}),
        ):
            started = time.perf_counter()
            cmd = [str(ANCHOR_PYTHON), str(OUT.parent / "sk_anchor.py"), "tree", str(hand_train), str(hand_test)]
            out = subprocess.run([*cmd, "churn_risk", json.dumps(options)], capture_output=True, text=True)
            result = json.loads(out.stdout.strip().splitlines()[-1])
            wall = time.perf_counter() - started
            lines.append(f"| {label} | {result['accuracy']:.4f} | | {result['leaves']} | {wall:.1f} | | |")
    return lines


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    print("\n".join(bench_messy(120)))
    print("\n".join(bench_curves([1000, 10_000], 120, weka_available())))
