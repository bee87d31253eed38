"""Fit a scikit-learn tree or forest on one train/test split and print one JSON line.

Runs with the anchors' Python (`make bench-env`: scikit-learn and Polars):

    python sk_anchor.py {tree,forest}[-regression] TRAIN TEST TARGET OPTIONS.json

TRAIN/TEST: CSV or Parquet. Categorical (text) features are ordinal-encoded with the
training levels (unseen and missing: NaN, which scikit-learn's trees route themselves); a
``-regression`` mode predicts a numeric target. OPTIONS: keyword arguments for the estimator.
Output: accuracy or r2, leaves, fit seconds.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import polars as pl


def read(path: str) -> pl.DataFrame:
    return pl.read_parquet(path) if path.endswith(".parquet") else pl.read_csv(path, infer_schema_length=None)


def encode(train: pl.DataFrame, test: pl.DataFrame, target: str) -> tuple[np.ndarray, np.ndarray]:
    columns = []
    for name, dtype in train.schema.items():
        if name == target:
            continue
        if dtype.is_numeric():
            columns.append(pl.col(name).cast(pl.Float64))
        else:
            levels = sorted(train.get_column(name).drop_nulls().cast(pl.String).unique().to_list())
            mapping = {v: float(i) for i, v in enumerate(levels)}
            columns.append(pl.col(name).cast(pl.String).replace_strict(mapping, default=None, return_dtype=pl.Float64))
    to_x = lambda df: df.select(columns).fill_null(np.nan).to_numpy().astype(np.float64)  # noqa: E731
    return to_x(train), to_x(test)


def main() -> None:
    mode, train_path, test_path, target, options = sys.argv[1:6]
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from sklearn.metrics import r2_score
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    train, test = read(train_path), read(test_path)
    mode, _, suffix = mode.partition("-")
    regression = suffix == "regression"
    x_train, x_test = encode(train, test, target)
    y_train = train.get_column(target).to_numpy()
    y_test = test.get_column(target).to_numpy()
    if not regression:
        y_train, y_test = y_train.astype(str), y_test.astype(str)
    kwargs = json.loads(options)
    estimators = {
        ("tree", False): DecisionTreeClassifier,
        ("tree", True): DecisionTreeRegressor,
        ("forest", False): RandomForestClassifier,
        ("forest", True): RandomForestRegressor,
    }
    model = estimators[(mode, regression)](random_state=0, **kwargs)
    started = time.perf_counter()
    model.fit(x_train, y_train)
    elapsed = time.perf_counter() - started
    predicted = model.predict(x_test)
    if regression:
        score = {"r2": float(r2_score(y_test, predicted))}
    else:
        score = {"accuracy": float(np.mean(predicted == y_test))}
    trees = model.estimators_ if mode == "forest" else [model]
    leaves = sum(t.get_n_leaves() for t in trees)
    print(json.dumps({**score, "leaves": int(leaves), "fit_seconds": elapsed}))


if __name__ == "__main__":
    main()
