"""Fit the tools rulecli is compared with on one train/test split and print one JSON line.

Runs with a Python that has Orange3 and wittgenstein installed (`make bench-env`):

    python anchors.py {orange-cn2,orange-cn2-unordered,wittgenstein} TRAIN.csv TEST.csv SCHEMA.json

SCHEMA.json: {"target": name, "columns": [{"name", "kind": "numeric"|"categorical", "levels"}]},
with the target's levels in increasing frequency (wittgenstein's one-vs-rest order).
Output: accuracy, rules (without a default rule), fit seconds.
"""

from __future__ import annotations

import csv
import json
import sys
import time
from pathlib import Path

import numpy as np


def read_rows(path: str) -> list[dict[str, str]]:
    with Path(path).open(newline="") as handle:
        return list(csv.DictReader(handle))


def orange(mode: str, train_rows: list[dict[str, str]], test_rows: list[dict[str, str]], schema: dict) -> dict:
    from Orange.classification.rules import CN2Learner, CN2UnorderedLearner
    from Orange.data import ContinuousVariable, DiscreteVariable, Domain, Table

    features = [c for c in schema["columns"] if c["name"] != schema["target"]]
    target = next(c for c in schema["columns"] if c["name"] == schema["target"])

    def encode(column: dict, value: str) -> float:
        if value == "":
            return np.nan
        if column["kind"] == "numeric":
            return float(value)
        return float(column["levels"].index(value)) if value in column["levels"] else np.nan

    variables = [
        ContinuousVariable(c["name"]) if c["kind"] == "numeric" else DiscreteVariable(c["name"], values=c["levels"])
        for c in features
    ]
    domain = Domain(variables, DiscreteVariable(target["name"], values=target["levels"]))

    def table(rows: list[dict[str, str]]) -> Table:
        x = np.array([[encode(c, r[c["name"]]) for c in features] for r in rows], dtype=float)
        y = np.array([encode(target, r[target["name"]]) for r in rows], dtype=float)
        return Table.from_numpy(domain, x.reshape(len(rows), len(features)), y)

    train, test = table(train_rows), table(test_rows)
    learner = CN2Learner() if mode == "orange-cn2" else CN2UnorderedLearner()
    started = time.perf_counter()
    model = learner(train)
    elapsed = time.perf_counter() - started
    accuracy = float(np.mean(model(test) == test.Y))
    return {"accuracy": accuracy, "rules": sum(1 for r in model.rule_list if r.selectors), "fit_seconds": elapsed}


def wittgenstein(train_rows: list[dict[str, str]], test_rows: list[dict[str, str]], schema: dict) -> dict:
    """RIPPER one class at a time in increasing frequency, as JRip orders them (wittgenstein is binary)."""
    import pandas as pd
    import wittgenstein as lw

    target = schema["target"]
    kinds = {c["name"]: c["kind"] for c in schema["columns"]}

    def frame(rows: list[dict[str, str]]) -> pd.DataFrame:
        df = pd.DataFrame(rows).replace("", np.nan)
        for name, kind in kinds.items():
            if kind == "numeric" and name != target:
                df[name] = pd.to_numeric(df[name])
        return df

    train, test = frame(train_rows), frame(test_rows)
    order = next(c for c in schema["columns"] if c["name"] == target)["levels"]
    started = time.perf_counter()
    models, remaining = [], train
    for cls in order[:-1]:
        if not (remaining[target] == cls).any():
            continue
        clf = lw.RIPPER(random_state=0)
        clf.fit(remaining, class_feat=target, pos_class=cls)
        models.append((cls, clf))
        covered = clf.predict(remaining.drop(columns=[target]))
        remaining = remaining[~np.asarray(covered, dtype=bool)]
    elapsed = time.perf_counter() - started
    features = test.drop(columns=[target])
    prediction = np.full(len(test), order[-1], dtype=object)
    decided = np.zeros(len(test), dtype=bool)
    for cls, clf in models:
        fires = np.asarray(clf.predict(features), dtype=bool) & ~decided
        prediction[fires] = cls
        decided |= fires
    accuracy = float(np.mean(prediction == test[target].to_numpy()))
    rules = sum(len(clf.ruleset_.rules) for _, clf in models)
    return {"accuracy": accuracy, "rules": rules, "fit_seconds": elapsed}


def main() -> None:
    tool, train_path, test_path, schema_path = sys.argv[1:5]
    schema = json.loads(Path(schema_path).read_text())
    train_rows, test_rows = read_rows(train_path), read_rows(test_path)
    if tool == "wittgenstein":
        result = wittgenstein(train_rows, test_rows, schema)
    else:
        result = orange(tool, train_rows, test_rows, schema)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
