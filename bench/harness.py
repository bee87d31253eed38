"""Shared pieces of the benchmarks: paths, timing of whole processes, data and splits."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
RULECLI = [sys.executable, "-m", "rulecli"]
WEKA_JAR = Path("/usr/share/java/weka.jar")
EXAMPLES = Path("/usr/share/doc/weka/examples")
WEKA_DATASETS = [
    "breast-cancer",
    "credit-g",
    "diabetes",
    "glass",
    "ionosphere",
    "iris",
    "labor",
    "segment-challenge",
    "soybean",
    "vote",
]

# Runs a command and reports its wall time, CPU time (user + system) and peak resident
# memory (its own child only).
_WRAPPER = """
import resource, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
elapsed = time.perf_counter() - start
if proc.returncode != 0:
    sys.stderr.write(proc.stderr.decode()[-2000:])
    sys.exit(proc.returncode)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)
"""


def cpu_seconds() -> float:
    """This process's CPU seconds: every thread, and the worker processes it waited for."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def clock(call: Callable[[], object]) -> tuple[object, tuple[float, float]]:
    """What ``call`` returns, and its (wall, CPU) seconds in this process."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    out = call()
    return out, (time.perf_counter() - wall, cpu_seconds() - cpu)


def _run_once(cmd: list[str], timeout: float | None) -> tuple[float, float] | None:
    """Wall seconds and peak MiB of one fresh process (see :func:`usage`)."""
    measured = usage(cmd, timeout)
    return None if measured is None else (measured[0], measured[2])


def usage(cmd: list[str], timeout: float | None) -> tuple[float, float, float] | None:
    """Wall seconds, CPU seconds and peak MiB of one fresh process under the wrapper; None
    when it ran past ``timeout`` (its whole process group is killed), RuntimeError when it
    failed."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRAPPER, *cmd],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{stderr}")
    elapsed, cpu, rss_kib = stdout.split()
    return float(elapsed), float(cpu), int(rss_kib) / 1024


def measure(cmd: list[str], repeats: int, timeout: float | None = None) -> tuple[float, float] | None:
    """Median wall seconds and median peak RSS (MiB) over ``repeats`` fresh processes;
    None when a run exceeds ``timeout`` seconds."""
    runs = []
    for _ in range(repeats):
        run = _run_once(cmd, timeout)
        if run is None:
            return None
        runs.append(run)
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def timed(cmd: list[str], repeats: int, timeout: float | None, quick: float) -> tuple[float, float] | None:
    """One run, and the median of ``repeats`` (seconds, MiB) where it took under ``quick``
    seconds; None when the first run exceeds ``timeout``."""
    first = measure(cmd, 1, timeout=timeout)
    if first is None or first[0] >= quick or repeats <= 1:
        return first
    rest = [measure(cmd, 1, timeout=timeout) for _ in range(repeats - 1)]
    runs = [first, *(r for r in rest if r is not None)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def auc(proba: np.ndarray, positive: np.ndarray) -> float:
    """Area under the ROC curve by the rank-sum formula (ties share their ranks)."""
    _, inverse = np.unique(proba, return_inverse=True)
    order = np.argsort(proba, kind="stable")
    ranks = np.empty(proba.size)
    ranks[order] = np.arange(1, proba.size + 1)
    mean_rank = np.bincount(inverse, weights=ranks) / np.bincount(inverse)
    ranks = mean_rank[inverse]
    n_pos, n_neg = positive.sum(), (~positive).sum()
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


def accuracy_rules_table(results: dict[str, dict[str, list[dict]]], datasets: list[str]) -> list[str]:
    """Markdown rows: per dataset each tool's mean accuracy / mean rules over its runs, then the means."""
    tools = list(results)
    lines = ["| dataset | " + " | ".join(tools) + " |", "|---" * (len(tools) + 1) + "|"]
    means: dict[str, list[tuple[float, float]]] = {t: [] for t in tools}
    for name in datasets:
        cells = []
        for tool in tools:
            runs = results[tool][name]
            acc, rules = mean([r["accuracy"] for r in runs]), mean([r["rules"] for r in runs])
            means[tool].append((acc, rules))
            cells.append(f"{acc:.3f} / {rules:.0f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    totals = [(mean([a for a, _ in m]), mean([r for _, r in m])) for m in means.values()]
    lines.append("| **mean** | " + " | ".join(f"**{a:.4f}** / {r:.1f}" for a, r in totals) + " |")
    return lines


def weka_available() -> bool:
    return WEKA_JAR.exists() and shutil.which("java") is not None


# ---------------------------------------------------------------------------- data


def split_arff(name: str, seed: int = 1) -> tuple[Path, Path, int]:
    """A stratified 2/3 : 1/3 split of a Weka ARFF file, both halves keeping Weka's header."""
    text = (EXAMPLES / f"{name}.arff").read_text()
    header, data = re.split(r"(?im)^@data\s*$", text, maxsplit=1)
    rows = [r for r in data.splitlines() if r.strip() and not r.lstrip().startswith("%")]
    classes = np.array([r.rsplit(",", 1)[1].strip() for r in rows])
    rng = np.random.default_rng(seed)
    test = np.zeros(len(rows), dtype=bool)
    for cls in np.unique(classes):
        idx = np.flatnonzero(classes == cls)
        rng.shuffle(idx)
        test[idx[: round(len(idx) / 3)]] = True
    paths = []
    for part, mask in (("train", ~test), ("test", test)):
        path = OUT / f"{name}.{seed}.{part}.arff"
        body = "\n".join(r for r, keep in zip(rows, mask, strict=True) if keep)
        path.write_text(f"{header}@data\n{body}\n")
        paths.append(path)
    return paths[0], paths[1], int(test.sum())


def synthetic(n: int, seed: int = 0) -> pl.DataFrame:
    """20 mixed features (16 numeric, 4 categorical, ~1% missing), binary class from a hidden rule."""
    rng = np.random.default_rng(seed)
    columns: dict[str, object] = {}
    for j in range(16):
        x = rng.normal(size=n).round(3)
        x[rng.random(n) < 0.01] = np.nan
        columns[f"x{j}"] = x
    for j in range(4):
        columns[f"c{j}"] = rng.choice(np.array(["a", "b", "c", "d", "e"]), size=n)
    score = columns["x0"] + 0.5 * (columns["c0"] == "a") - 0.5 * np.nan_to_num(columns["x1"]) + rng.normal(0, 0.7, n)  # type: ignore[operator]
    columns["class"] = np.where(np.nan_to_num(score) > 0.3, "pos", "neg")
    return pl.DataFrame(columns).with_columns(pl.col(f"x{j}").fill_nan(None) for j in range(16))


def write_arff(df: pl.DataFrame, path: Path) -> None:
    lines = ["@relation synthetic"]
    for name, dtype in df.schema.items():
        if dtype == pl.String:
            values = ",".join(sorted(df.get_column(name).unique().to_list()))
            lines.append(f"@attribute {name} {{{values}}}")
        else:
            lines.append(f"@attribute {name} numeric")
    lines.append("@data")
    path.write_text("\n".join(lines) + "\n")
    with path.open("ab") as handle:
        df.write_csv(handle, include_header=False, null_value="?")


# ---------------------------------------------------------------------------- benchmarks


def arff_as_csv(train: Path, test: Path) -> Path:
    """CSV copies of a split for the Python anchors, and a schema naming kinds and levels.

    The target's levels are listed in increasing training frequency (the order RIPPER
    learns classes in, which the one-vs-rest wittgenstein wrapper follows).
    """
    from rulecli import io

    frames = [io.scan_table(str(p)).collect() for p in (train, test)]
    target = frames[0].columns[-1]
    counts = frames[0].get_column(target).cast(pl.String).value_counts()
    columns = []
    for name, dtype in frames[0].schema.items():
        if isinstance(dtype, pl.Enum):
            levels = dtype.categories.to_list()
            if name == target:
                freq = dict(zip(counts.get_column(target).to_list(), counts.get_column("count").to_list(), strict=True))
                levels = sorted(levels, key=lambda v: (freq.get(v, 0), levels.index(v)))
            columns.append({"name": name, "kind": "categorical", "levels": levels})
        else:
            columns.append({"name": name, "kind": "numeric", "levels": []})
    for frame, path in zip(frames, (train, test), strict=True):
        frame.with_columns(pl.col(pl.Enum).cast(pl.String)).write_csv(path.with_suffix(".csv"))
    schema = train.with_suffix(".schema.json")
    schema.write_text(json.dumps({"target": target, "columns": columns}))
    return schema
