"""`make experiment`: every learner, 10-fold cross-validation, on the sample datasets or yours.

Writes results/summary.csv and results/summary.md (mean accuracy ± sd over the folds — test
R² for a numeric target — and mean rules, leaves for trees and forests, per learner and
dataset; a learner that does not take a dataset's kind of target is left out of it) and
results/timings.csv (mean fit seconds). Folds and learners are seeded, so the summary files
are byte-identical on every run; only the timings move.

    python scripts/experiment.py [--folds 10] [--learners oner,tree] [--out results]
        [--datasets house,labor | --datasets data/churn.csv:churned,data/iris.parquet:species]
        [--datasets-file experiments.csv]   # a CSV with columns path,target
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import polars as pl

from rulecli import learners

ROOT = Path(__file__).resolve().parent.parent
# name: (sample file, target); penguins-mass: a number to predict
DATASETS = {
    "house": ("house", "value"),
    "labor": ("labor", "class"),
    "penguins": ("penguins", "species"),
    "penguins-mass": ("penguins", "body_mass_g"),
}
LEARNERS = learners.names()


def datasets(spec: str, spec_file: str | None) -> dict[str, tuple[Path, str]]:
    """name -> (path, target): sample dataset names, ``path:target`` entries, or a CSV file
    of ``path,target`` rows; a dataset is named by its file's stem."""
    entries: list[tuple[Path, str, str]] = []
    if spec_file is not None:
        table = pl.read_csv(spec_file)
        if not {"path", "target"} <= set(table.columns):
            raise SystemExit(f"{spec_file}: needs columns path,target")
        base = Path(spec_file).parent
        entries += [
            (base / p if not Path(p).is_absolute() else Path(p), t, Path(p).name.split(".")[0])
            for p, t in table.select("path", "target").rows()
        ]
    for item in (i.strip() for i in spec.split(",") if i.strip()):
        if item in DATASETS:
            file, target = DATASETS[item]
            entries.append((ROOT / "sample_data" / f"{file}.csv", target, item))
        elif ":" in item:
            path, target = item.rsplit(":", 1)
            entries.append((Path(path), target, Path(path).name.split(".")[0]))
        else:
            raise SystemExit(
                f"--datasets: '{item}' is neither a sample dataset ({', '.join(DATASETS)}) nor PATH:TARGET"
            )
    return {name: (path, target) for path, target, name in entries}


def takes_numbers(data: tuple[Path, str]) -> bool:
    """Whether the dataset's target is read as a number (by a learner that predicts numbers)."""
    from rulecli import api

    return bool(api.prepare(str(data[0]), target=data[1], numeric_target=True).regression)


def run(learner: str, dataset: str, data: tuple[Path, str], folds: int, scratch: Path) -> dict[str, object]:
    path, target = data
    metrics = scratch / f"{learner}-{dataset}.json"
    cmd = [sys.executable, "-m", "rulecli", learner, str(path)]
    cmd += ["-y", target, "--cv", str(folds), "--metrics-out", str(metrics), "-q", "--seed", "0"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    cv = json.loads(metrics.read_text())["cv"]
    folds_out = cv["folds"]
    metric = "accuracy" if "accuracy" in cv["summary"] else "r2"
    return {
        "learner": learner,
        "dataset": dataset,
        "metric": metric,
        "score": round(cv["summary"][metric]["mean"], 4),
        "score_sd": round(cv["summary"][metric]["sd"], 4),
        "rules": round(sum(f["rules"] for f in folds_out) / len(folds_out), 1),
        "fit_seconds": round(sum(f["fit_seconds"] for f in folds_out) / len(folds_out), 4),
    }


def markdown(table: pl.DataFrame) -> str:
    datasets = sorted(table.get_column("dataset").unique().to_list())
    lines = [
        "| learner | " + " | ".join(datasets) + " |",
        "|---" * (len(datasets) + 1) + "|",
    ]
    for learner in table.get_column("learner").unique(maintain_order=True).to_list():
        cells = []
        for dataset in datasets:
            found = table.filter((pl.col("learner") == learner) & (pl.col("dataset") == dataset))
            if found.height == 0:  # the learner does not take this kind of target
                cells.append("—")
                continue
            row = found.row(0, named=True)
            r2 = "R² " if row["metric"] == "r2" else ""
            cells.append(f"{r2}{row['score']:.3f} ± {row['score_sd']:.3f} / {row['rules']:g}")
        lines.append(f"| {learner} | " + " | ".join(cells) + " |")
    return (
        "Cells: mean accuracy (R² for a number) ± sd over the folds / mean rules (leaves for trees and forests; "
        "— where the learner does not take the target); fit times are in timings.csv.\n\n" + "\n".join(lines) + "\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--learners", default=",".join(LEARNERS))
    parser.add_argument("--datasets", default=None, help="sample names or PATH:TARGET, comma-separated")
    parser.add_argument("--datasets-file", default=None, help="a CSV with columns path,target")
    parser.add_argument("--out", default=str(ROOT / "results"))
    args = parser.parse_args()
    default = "" if args.datasets_file else ",".join(DATASETS)
    chosen = datasets(args.datasets if args.datasets is not None else default, args.datasets_file)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    numbers = {name: takes_numbers(data) for name, data in chosen.items()}
    with tempfile.TemporaryDirectory() as scratch:
        for learner in (n.strip() for n in args.learners.split(",") if n.strip()):
            takes = learners.get(learner)
            for name, data in chosen.items():
                if not (takes.numeric_target if numbers[name] else takes.class_target):
                    continue
                rows.append(run(learner, name, data, args.folds, Path(scratch)))
                sys.stderr.write(f"{learner} on {name}: {rows[-1]['metric']} {rows[-1]['score']:.4f}\n")
    table = pl.DataFrame(rows)
    table.drop("fit_seconds").write_csv(out / "summary.csv")
    table.select("learner", "dataset", "fit_seconds").write_csv(out / "timings.csv")
    title = f"# {args.folds}-fold cross-validation on {', '.join(chosen)}\n\n"
    (out / "summary.md").write_text(title + markdown(table))
    sys.stderr.write(f"wrote {out / 'summary.csv'}, {out / 'summary.md'} and {out / 'timings.csv'}\n")


if __name__ == "__main__":
    main()
