"""aq beside JRip on every classification table Weka 3.6 ships (plus a titanic-like one).

    python bench/aq_tables.py [--jrip]

Three stratified 2/3 : 1/3 splits per table (seeds 1..3, as the covering benchmark); prints
per table aq's mean test accuracy and rules, the majority-class rate and, with --jrip,
JRip's accuracy on the same splits. The titanic-like table (3 categorical features, many
identical descriptions with different classes) is generated from a fixed seed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import harness
import numpy as np
import polars as pl
from harness import OUT, WEKA_JAR, split_arff, write_arff

from rulecli import io
from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.held_out import evaluate_model
from rulecli.learners.aq import AQParams, fit_aq

TABLES = [
    *harness.WEKA_DATASETS,
    "contact-lenses",
    "weather.nominal",
    "unbalanced",
]


def titanic_like(folder: Path) -> None:
    rng = np.random.default_rng(0)
    n = 2201
    status = rng.choice(["first", "second", "third", "crew"], n, p=[0.15, 0.13, 0.32, 0.4])
    sex = rng.choice(["male", "female"], n, p=[0.79, 0.21])
    age = rng.choice(["adult", "child"], n, p=[0.95, 0.05])
    p = 0.2 + 0.5 * (sex == "female") + 0.15 * (status == "first") - 0.1 * (status == "third") + 0.2 * (age == "child")
    survived = np.where(rng.random(n) < np.clip(p, 0, 1), "yes", "no")
    write_arff(pl.DataFrame({"status": status, "sex": sex, "age": age, "survived": survived}), folder / "titanic.arff")


def jrip(train: Path, test: Path) -> float:
    cmd = ["java", "-cp", str(WEKA_JAR), "weka.classifiers.rules.JRip", "-t", str(train), "-T", str(test)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    section = out.split("=== Error on test data ===", 1)[1]
    return float(re.search(r"Correctly Classified Instances\s+\d+\s+([\d.]+)", section).group(1)) / 100


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    titanic_like(OUT)
    weka = harness.EXAMPLES
    rows = []
    for name in [*TABLES, "titanic"]:
        harness.EXAMPLES = OUT if name == "titanic" else weka
        accuracy, rules, majority, reference = [], [], [], []
        for seed in (1, 2, 3):
            train, test, _ = split_arff(name, seed)
            ds = prepare_dataset(io.scan_table(str(train)).collect(), DataSpec())
            model = fit_aq(ds, AQParams())
            held = io.scan_table(str(test))
            accuracy.append(evaluate_model(model, held, pl.col(ds.target).cast(pl.String))["accuracy"])
            rules.append(len(model.rules))
            counts = held.collect().get_column(ds.target).cast(pl.String).value_counts(sort=True)
            majority.append(float(counts[0, 1] / counts[:, 1].sum()))
            if "--jrip" in sys.argv:
                reference.append(jrip(train, test))
        rows.append(
            (name, np.mean(accuracy), np.mean(rules), np.mean(majority), np.mean(reference) if reference else None)
        )
        print(
            f"{name:18s} aq {rows[-1][1]:.4f}  rules {rows[-1][2]:6.1f}  majority {rows[-1][3]:.4f}  jrip {rows[-1][4]}"
        )
    jr = [r[4] for r in rows if r[4] is not None]
    print(
        f"mean aq {np.mean([r[1] for r in rows]):.4f}, rules {np.mean([r[2] for r in rows]):.1f}"
        + (f", jrip {np.mean(jr):.4f}" if jr else "")
    )


if __name__ == "__main__":
    main()
