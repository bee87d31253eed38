"""Fit Orange's CN2 on a train CSV and score a test CSV (run with a Python that has Orange3).

    python orange_cn2.py TRAIN.csv TEST.csv SCHEMA.json {ordered,unordered}

SCHEMA.json: {"target": name, "columns": [{"name", "kind": "numeric"|"categorical", "levels"}]}.
Prints one JSON line: accuracy, rules (without the default rule), fit seconds.
"""

from __future__ import annotations

import csv
import json
import sys
import time

import numpy as np
from Orange.classification.rules import CN2Learner, CN2UnorderedLearner
from Orange.data import ContinuousVariable, DiscreteVariable, Domain, Table


def load(path: str, schema: dict, domain: Domain) -> Table:
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    columns = [c for c in schema["columns"] if c["name"] != schema["target"]]
    target = next(c for c in schema["columns"] if c["name"] == schema["target"])

    def encode(column: dict, value: str) -> float:
        if value == "":
            return np.nan
        if column["kind"] == "numeric":
            return float(value)
        return float(column["levels"].index(value)) if value in column["levels"] else np.nan

    x = np.array([[encode(c, r[c["name"]]) for c in columns] for r in rows], dtype=float).reshape(
        len(rows), len(columns)
    )
    y = np.array([encode(target, r[target["name"]]) for r in rows], dtype=float)
    return Table.from_numpy(domain, x, y)


def main() -> None:
    train_path, test_path, schema_path, mode = sys.argv[1:5]
    schema = json.load(open(schema_path))
    variables = []
    for c in schema["columns"]:
        if c["name"] == schema["target"]:
            continue
        variables.append(
            ContinuousVariable(c["name"]) if c["kind"] == "numeric" else DiscreteVariable(c["name"], values=c["levels"])
        )
    target = next(c for c in schema["columns"] if c["name"] == schema["target"])
    domain = Domain(variables, DiscreteVariable(target["name"], values=target["levels"]))
    train, test = load(train_path, schema, domain), load(test_path, schema, domain)
    learner = CN2Learner() if mode == "ordered" else CN2UnorderedLearner()
    started = time.perf_counter()
    model = learner(train)
    elapsed = time.perf_counter() - started
    predicted = model(test)
    accuracy = float(np.mean(predicted == test.Y))
    rules = [r for r in model.rule_list if r.selectors]
    print(json.dumps({"accuracy": accuracy, "rules": len(rules), "fit_seconds": elapsed}))


if __name__ == "__main__":
    main()
