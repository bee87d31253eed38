"""`make experiment`: every learner, 10-fold cross-validation, every sample dataset.

Writes results/summary.csv and results/summary.md: mean accuracy (± sd over folds), mean
rules (leaves for trees and forests) and mean fit seconds per learner and dataset. The
folds and every learner are seeded, so the accuracy and rule columns are the same on
every run; only the fit times move.

    python scripts/experiment.py [--folds 10] [--learners oner,tree] [--datasets house] [--out results]
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
DATASETS = {"house": "value", "labor": "class", "penguins": "species"}
LEARNERS = learners.names()


def run(learner: str, dataset: str, folds: int, scratch: Path) -> dict[str, object]:
    metrics = scratch / f"{learner}-{dataset}.json"
    cmd = [sys.executable, "-m", "rulecli", learner, str(ROOT / "sample_data" / f"{dataset}.csv")]
    cmd += ["-y", DATASETS[dataset], "--cv", str(folds), "--metrics-out", str(metrics), "-q", "--seed", "0"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    cv = json.loads(metrics.read_text())["cv"]
    folds_out = cv["folds"]
    return {
        "learner": learner,
        "dataset": dataset,
        "accuracy": round(cv["summary"]["accuracy"]["mean"], 4),
        "accuracy_sd": round(cv["summary"]["accuracy"]["sd"], 4),
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
            row = table.filter((pl.col("learner") == learner) & (pl.col("dataset") == dataset)).row(0, named=True)
            cells.append(
                f"{row['accuracy']:.3f} ± {row['accuracy_sd']:.3f} / {row['rules']:g} / {row['fit_seconds']:.3f} s"
            )
        lines.append(f"| {learner} | " + " | ".join(cells) + " |")
    return (
        "Cells: mean accuracy ± sd over the folds / mean rules (leaves for trees and forests) / mean fit seconds.\n\n"
        + "\n".join(lines)
        + "\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--learners", default=",".join(LEARNERS))
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--out", default=str(ROOT / "results"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for learner in args.learners.split(","):
            for dataset in args.datasets.split(","):
                rows.append(run(learner, dataset, args.folds, Path(scratch)))
                sys.stderr.write(f"{learner} on {dataset}: accuracy {rows[-1]['accuracy']:.4f}\n")
    table = pl.DataFrame(rows)
    table.write_csv(out / "summary.csv")
    (out / "summary.md").write_text(f"# {args.folds}-fold cross-validation on sample_data/\n\n" + markdown(table))
    sys.stderr.write(f"wrote {out / 'summary.csv'} and {out / 'summary.md'}\n")


if __name__ == "__main__":
    main()
