"""Orange CN2, scikit-learn's tree and forest and imodels' BRL on many splits; JSON lines.

Runs with the anchors' Python (`make bench-env`), driven by bench/wide.py:

    python wide_anchors.py MANIFEST.jsonl BRL_SECONDS

MANIFEST: one JSON object per split: id, train/test CSV, schema (as anchors.py reads it),
and for two-class tables `items_train`/`items_test` (the 0/1 items brl mines from). BRL is
stopped after BRL_SECONDS per fit (it is reported as not finished).
"""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
from anchors import orange, read_rows
from sk_anchor import encode


class OutOfTime(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise OutOfTime


def sklearn_runs(split: dict) -> list[dict]:
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier

    target = split["target"]
    train = pl.read_csv(split["train"], infer_schema_length=None)
    test = pl.read_csv(split["test"], infer_schema_length=None)
    x_train, x_test = encode(train, test, target)
    y_train = train.get_column(target).cast(pl.String).to_numpy()
    y_test = test.get_column(target).cast(pl.String).to_numpy()
    out = []
    for tool, make in (("sklearn-tree", DecisionTreeClassifier), ("sklearn-forest", RandomForestClassifier)):
        model = make(random_state=0)
        started = time.perf_counter()
        model.fit(x_train, y_train)
        elapsed = time.perf_counter() - started
        trees = model.estimators_ if tool == "sklearn-forest" else [model]
        leaves = sum(int(t.get_n_leaves()) for t in trees)
        accuracy = float(np.mean(model.predict(x_test) == y_test))
        out.append({"tool": tool, "accuracy": accuracy, "rules": leaves, "fit_seconds": elapsed})
    return out


def brl_run(split: dict, seconds: float) -> dict:
    from imodels import BayesianRuleListClassifier

    train, test = pl.read_parquet(split["items_train"]), pl.read_parquet(split["items_test"])
    names = [c for c in train.columns if c != "__y"]
    y_train, y_test = train.get_column("__y").to_numpy(), test.get_column("__y").to_numpy()
    model = BayesianRuleListClassifier(max_iter=10_000, random_state=0)
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    started = time.perf_counter()
    try:
        model.fit(train.select(names).to_numpy(), y_train, feature_names=names)
    except OutOfTime:
        return {"tool": "imodels-brl", "accuracy": None, "rules": None, "fit_seconds": None}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    elapsed = time.perf_counter() - started
    proba = model.predict_proba(test.select(names).to_numpy())[:, 1]
    predicted = model.classes_[(proba >= 0.5).astype(int)]
    rules = max(len(model.d_star) - 1, 0) if model.d_star else 0
    return {
        "tool": "imodels-brl",
        "accuracy": float(np.mean(predicted == y_test)),
        "rules": rules,
        "fit_seconds": elapsed,
    }


def main() -> None:
    manifest, brl_seconds = sys.argv[1], float(sys.argv[2])
    for line in Path(manifest).read_text().splitlines():
        split = json.loads(line)
        schema = json.loads(Path(split["schema"]).read_text())
        split["target"] = schema["target"]
        results = []
        cn2 = orange("orange-cn2", read_rows(split["train"]), read_rows(split["test"]), schema)
        results.append({"tool": "orange-cn2", **cn2})
        results += sklearn_runs(split)
        if split.get("items_train"):
            results.append(brl_run(split, brl_seconds))
        for result in results:
            print(json.dumps({"id": split["id"], **result}), flush=True)


if __name__ == "__main__":
    main()
