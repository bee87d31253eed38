"""Benchmarks written to BENCHMARKS.md: rulecli side by side with the tools users compare it with.

Every figure is the median of --repeats runs of the whole process (start-up included),
measured on this machine in one run; ratios matter more than seconds on shared machines.

    python bench/run.py [--repeats 3] [--rows 10000000] [--skip-weka]
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
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

# Runs a command and reports its wall time and peak resident memory (its own child only).
_WRAPPER = """
import resource, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
elapsed = time.perf_counter() - start
if proc.returncode != 0:
    sys.stderr.write(proc.stderr.decode()[-2000:])
    sys.exit(proc.returncode)
print(elapsed, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def measure(cmd: list[str], repeats: int) -> tuple[float, float]:
    """Median wall seconds and median peak RSS (MiB) over ``repeats`` fresh processes."""
    times, peaks = [], []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", _WRAPPER, *cmd], capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stderr}")
        elapsed, rss_kib = out.stdout.split()
        times.append(float(elapsed))
        peaks.append(int(rss_kib) / 1024)
    return statistics.median(times), statistics.median(peaks)


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
        path = OUT / f"{name}.{part}.arff"
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


def weka_accuracy(train: Path, test: Path) -> tuple[float, str]:
    out = subprocess.run(
        ["java", "-cp", str(WEKA_JAR), "weka.classifiers.rules.OneR", "-B", "6", "-t", str(train), "-T", str(test)],
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
        cmd = [*RULECLI, "oner", str(train), "--test", str(test), "--metrics-out", str(metrics), "-o", str(model), "-q"]
        ours_time, _ = measure(cmd, repeats)
        ours = json.loads(metrics.read_text())["test"]["accuracy"]
        body = json.loads(model.read_text())
        weka_acc, weka_attr = weka_accuracy(train, test)
        weka_cmd = [
            "java",
            "-cp",
            str(WEKA_JAR),
            "weka.classifiers.rules.OneR",
            "-B",
            "6",
            "-t",
            str(train),
            "-T",
            str(test),
        ]
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
        ours_time, ours_rss = measure([*RULECLI, "oner", str(parquet), "-y", "class", "-q"], repeats)
        weka_cells = ["not run", "", ""]
        if use_weka:
            arff = OUT / f"synthetic_{n}.arff"
            write_arff(df, arff)
            weka = [
                "java",
                "-Xmx16g",
                "-cp",
                str(WEKA_JAR),
                "weka.classifiers.rules.OneR",
                "-B",
                "6",
                "-t",
                str(arff),
                "-no-cv",
                "-v",
            ]
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
    n_rules = len(json.loads(oner_model.read_text())["rules"])
    cases = [
        (f"OneR ({n_rules} rules)", oner_model, "preds.parquet", []),
        (f"OneR ({n_rules} rules) --proba --explain", oner_model, "preds.parquet", ["--proba", "--explain"]),
        (f"OneR ({n_rules} rules)", oner_model, "preds.csv", []),
        ("1,000-rule text decision list", many, "preds.parquet", []),
    ]
    for label, model, output, extra in cases:
        target = OUT / output
        elapsed, rss = measure([*RULECLI, "predict", str(model), str(data), "-o", str(target), *extra], repeats)
        rows.append(f"| {label} | {target.suffix[1:]} | {elapsed:.1f} s | {n_rows / elapsed:,.0f} | {rss:.0f} MiB |")
        target.unlink()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows for the predict benchmark")
    parser.add_argument("--sizes", default="100000,1000000", help="rows for the OneR speed benchmark")
    parser.add_argument("--skip-weka", action="store_true")
    parser.add_argument("--output", default=str(ROOT / "BENCHMARKS.md"))
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    use_weka = weka_available() and not args.skip_weka
    started = time.strftime("%Y-%m-%d")
    sections = [
        "# Benchmarks",
        "",
        f"Written by `make bench` (`bench/run.py`) on {started}: {platform.machine()}, "
        f"{platform.python_version()}, Polars {pl.__version__}, 2 cores. Every time is the median of "
        f"{args.repeats} runs of the whole process, start-up included; peak RSS is the process's "
        "maximum resident memory. The machine is shared: read ratios, not absolute seconds.",
        "",
        "## predict: streaming a large Parquet file",
        "",
        *bench_predict(args.repeats, args.rows),
        "",
    ]
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
    Path(args.output).write_text("\n".join(sections))
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
