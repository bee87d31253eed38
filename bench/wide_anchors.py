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


def sklearn_runs(split: dict, schema: dict) -> list[dict]:
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier

    target = split["target"]
    # both halves typed as the schema says: a level seen only in the test half stays text
    types = {c["name"]: pl.String if c["kind"] == "categorical" else pl.Float64 for c in schema["columns"]}
    train = pl.read_csv(split["train"], schema_overrides=types)
    test = pl.read_csv(split["test"], schema_overrides=types)
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


def _orange_run(split: dict, schema: dict, seconds: float) -> list[dict]:
    return [{"tool": "orange-cn2", **orange("orange-cn2", read_rows(split["train"]), read_rows(split["test"]), schema)}]


def _sklearn_run(split: dict, schema: dict, seconds: float) -> list[dict]:
    return sklearn_runs(split, schema)


def _brl_run(split: dict, schema: dict, seconds: float) -> list[dict]:
    return [brl_run(split, seconds)]


def main() -> None:
    manifest, brl_seconds = sys.argv[1], float(sys.argv[2])
    for line in Path(manifest).read_text().splitlines():
        split = json.loads(line)
        schema = json.loads(Path(split["schema"]).read_text())
        split["target"] = schema["target"]
        results = []
        runs = [("orange-cn2", _orange_run), ("sklearn", _sklearn_run)]
        if split.get("items_train"):
            runs.append(("imodels-brl", _brl_run))
        for tool, run in runs:
            try:
                results += run(split, schema, brl_seconds)
            except Exception as exc:  # one tool failing on one split is a result, not the end of the run
                tools = ["sklearn-tree", "sklearn-forest"] if tool == "sklearn" else [tool]
                results += [{"tool": t, "accuracy": None, "error": str(exc)[:200]} for t in tools]
        for result in results:
            print(json.dumps({"id": split["id"], **result}), flush=True)


if __name__ == "__main__":
    main()
