"""Covering learners (ripper, cn2, aq) beside Weka JRip, wittgenstein and Orange CN2."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import polars as pl
from harness import (
    OUT,
    ROOT,
    RULECLI,
    WEKA_DATASETS,
    WEKA_JAR,
    accuracy_rules_table,
    arff_as_csv,
    measure,
    split_arff,
    synthetic,
    write_arff,
)

from rulecli import io
from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.held_out import evaluate_model
from rulecli.learners.aq import AQParams, fit_aq
from rulecli.learners.cn2 import CN2Params, fit_cn2
from rulecli.learners.ripper import RipperParams, fit_ripper
from rulecli.model.core import Vote

ANCHOR_PYTHON = Path(os.environ.get("RULECLI_BENCH_PYTHON", ROOT / "bench" / ".venv-anchors" / "bin" / "python"))
OURS = {
    "ripper": lambda ds: fit_ripper(ds, RipperParams()),
    "cn2": lambda ds: fit_cn2(ds, CN2Params()),
    "cn2 --unordered": lambda ds: fit_cn2(ds, CN2Params(ordered=False)),
    "cn2 --unordered --vote best": lambda ds: fit_cn2(ds, CN2Params(ordered=False, vote=Vote.BEST)),
    "aq": lambda ds: fit_aq(ds, AQParams()),
}
ANCHORS = ("wittgenstein", "orange-cn2", "orange-cn2-unordered")


def ours(learner: str, train: Path, test: Path) -> dict:
    ds = prepare_dataset(io.scan_table(str(train)).collect(), DataSpec())
    started = time.perf_counter()
    model = OURS[learner](ds)
    elapsed = time.perf_counter() - started
    truth = pl.col(ds.target).cast(pl.String)
    accuracy = evaluate_model(model, io.scan_table(str(test)), truth)["accuracy"]
    return {"accuracy": accuracy, "rules": len(model.rules), "fit_seconds": elapsed}


def jrip_output(train: Path, test: Path, heap: str = "4g", timeout: float | None = None) -> str | None:
    cmd = [
        "java",
        f"-Xmx{heap}",
        "-cp",
        str(WEKA_JAR),
        "weka.classifiers.rules.JRip",
        "-t",
        str(train),
        "-T",
        str(test),
    ]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=timeout).stdout
    except subprocess.TimeoutExpired:
        return None


def parse_jrip(out: str) -> dict:
    section = out.split("=== Error on test data ===", 1)[1]
    accuracy = float(re.search(r"Correctly Classified Instances\s+\d+\s+([\d.]+)", section).group(1)) / 100
    rules = int(re.search(r"Number of Rules\s*:\s*(\d+)", out).group(1)) - 1  # without the default rule
    return {"accuracy": accuracy, "rules": rules}


def anchor(tool: str, train: Path, test: Path, schema: Path, timeout: float | None = None) -> dict | None:
    cmd = [str(ANCHOR_PYTHON), str(ROOT / "bench" / "anchors.py"), tool]
    cmd += [str(train.with_suffix(".csv")), str(test.with_suffix(".csv")), str(schema)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_covering_accuracy(splits: int, use_weka: bool) -> list[str]:
    tools = [*OURS, *(["JRip"] if use_weka else []), *(ANCHORS if ANCHOR_PYTHON.exists() else [])]
    results: dict[str, dict[str, list[dict]]] = {t: {} for t in tools}
    for name in WEKA_DATASETS:
        for seed in range(1, splits + 1):
            train, test, _ = split_arff(name, seed)
            schema = arff_as_csv(train, test)
            for tool in tools:
                if tool in OURS:
                    result = ours(tool, train, test)
                elif tool == "JRip":
                    result = parse_jrip(jrip_output(train, test) or "")
                else:
                    result = anchor(tool, train, test, schema, timeout=600)
                results[tool].setdefault(name, []).append(result)
    return [
        "Cells: mean test accuracy / mean rules (without the default rule) over the splits.",
        "",
        *accuracy_rules_table(results, WEKA_DATASETS),
    ]


def _cell(result: tuple[float, float] | None, limit: float) -> str:
    return f"did not finish in {limit:.0f} s" if result is None else f"{result[0]:.1f} s, {result[1]:.0f} MiB"


def bench_covering_speed(sizes: list[int], repeats: int, use_weka: bool) -> list[str]:
    lines = [
        "| rows (train / test) | tool | fit + test, whole process | test accuracy | rules |",
        "|---|---|---|---|---|",
    ]
    ratios = []
    for n in sizes:
        df = synthetic(n, seed=7)
        cut = int(n * 0.7)
        paths = {}
        for part, frame in (("train", df[:cut]), ("test", df[cut:])):
            paths[part] = OUT / f"cover_{n}.{part}.parquet"
            frame.write_parquet(paths[part])
        label = f"{cut:,} / {n - cut:,}"
        runs = 1 if n >= 1_000_000 else repeats
        timings = {}
        for learner, extra in (("ripper", []), ("cn2", []), ("aq", [])):
            if learner == "aq" and n > 10_000:
                continue  # AQ's 1 % error bound makes hundreds of rules on noisy data: 50 s at 10k rows
            metrics, model = OUT / f"cover_{n}.{learner}.metrics.json", OUT / f"cover_{n}.{learner}.json"
            cmd = [*RULECLI, learner, str(paths["train"]), "-y", "class", "--test", str(paths["test"])]
            cmd += ["--metrics-out", str(metrics), "-o", str(model), "-q", *extra]
            limit = 900.0
            timing = measure(cmd, runs if learner == "ripper" else 1, timeout=limit)
            timings[learner] = timing
            if timing is None:
                lines.append(f"| {label} | rulecli {learner} | {_cell(None, limit)} | | |")
                continue
            accuracy = json.loads(metrics.read_text())["test"]["accuracy"]
            n_rules = len(json.loads(model.read_text())["rules"])
            lines.append(f"| {label} | rulecli {learner} | {_cell(timing, limit)} | {accuracy:.4f} | {n_rules} |")
        if use_weka and n <= 100_000:
            arff = {part: OUT / f"cover_{n}.{part}.arff" for part in ("train", "test")}
            write_arff(df[:cut], arff["train"])
            write_arff(df[cut:], arff["test"])
            limit = 900.0
            cmd = ["java", "-Xmx16g", "-cp", str(WEKA_JAR), "weka.classifiers.rules.JRip"]
            cmd += ["-t", str(arff["train"]), "-T", str(arff["test"]), "-no-cv"]
            timing = measure(cmd, 1, timeout=limit)
            row = f"| {label} | Weka JRip | {_cell(timing, limit)} |"
            if timing is not None:
                result = parse_jrip(jrip_output(arff["train"], arff["test"], heap="16g") or "")
                row += f" {result['accuracy']:.4f} | {result['rules']} |"
                if timings.get("ripper"):
                    ratios.append(f"JRip / rulecli ripper at {n:,} rows: {timing[0] / timings['ripper'][0]:.1f}×")
            lines.append(row + ("" if timing is not None else " | |"))
        if ANCHOR_PYTHON.exists() and n <= 100_000:
            csv_paths = {part: OUT / f"cover_{n}.{part}.arff" for part in ("train", "test")}
            for part in ("train", "test"):
                if not csv_paths[part].exists():
                    write_arff(df[:cut] if part == "train" else df[cut:], csv_paths[part])
            schema = arff_as_csv(csv_paths["train"], csv_paths["test"])
            for tool in ("wittgenstein", "orange-cn2"):
                limit = 300.0
                result = anchor(tool, csv_paths["train"], csv_paths["test"], schema, timeout=limit)
                if result is None:
                    lines.append(f"| {label} | {tool} | did not finish in {limit:.0f} s | | |")
                    continue
                elapsed = result["fit_seconds"]
                row = (
                    f"| {label} | {tool} | {elapsed:.1f} s (fit only) | {result['accuracy']:.4f} | {result['rules']} |"
                )
                lines.append(row)
                if tool == "orange-cn2" and timings.get("cn2"):
                    ratios.append(f"Orange CN2 / rulecli cn2 at {n:,} rows: {elapsed / timings['cn2'][0]:.1f}×")
    return [*lines, "", *(f"- {r}" for r in ratios)]
