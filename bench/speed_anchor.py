"""scikit-learn and LightGBM sides of bench/speed.py; prints one JSON line.

Runs with the anchors' Python (`make bench-env`):

    python speed_anchor.py forest-phases TRAIN TEST          # 100 trees, n_jobs=2: fit, predict_proba, save
    python speed_anchor.py forest-depth TRAIN TEST DEPTH     # 100 trees of max_depth DEPTH: scikit-learn and LightGBM rf
    python speed_anchor.py forest-predict TRAIN DATA DEPTH   # 100 trees of max_depth DEPTH: predict_proba on DATA
    python speed_anchor.py tree-default TRAIN TEST           # one tree, scikit-learn's defaults
    python speed_anchor.py tree TRAIN TEST LEAVES            # a fully grown tree, and LightGBM's one tree of LEAVES leaves

Features are encoded as sk_anchor.py encodes them (categories as ordinal codes, missing as
NaN); the target column is ``class``. Encoding and reading are not timed. Every timed
step is reported as [wall seconds, CPU seconds]; CPU counts every thread of this process
and any worker process it waited for.
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
from sk_anchor import encode

TARGET = "class"


def _cpu() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def timed(call):
    wall, cpu = time.perf_counter(), _cpu()
    out = call()
    return out, [time.perf_counter() - wall, _cpu() - cpu]


def _read(train_path: str, test_path: str):
    train, test = pl.read_parquet(train_path), pl.read_parquet(test_path)
    x_train, x_test = encode(train, test, TARGET)
    y_train = train.get_column(TARGET).to_numpy().astype(str)
    y_test = test.get_column(TARGET).to_numpy().astype(str)
    return x_train, y_train, x_test, y_test


def forest_phases(train_path: str, test_path: str) -> dict:
    import joblib
    from sklearn.ensemble import RandomForestClassifier

    x_train, y_train, x_test, y_test = _read(train_path, test_path)
    model = RandomForestClassifier(n_estimators=100, n_jobs=2, random_state=0)
    _, fit = timed(lambda: model.fit(x_train, y_train))
    proba, score = timed(lambda: model.predict_proba(x_test))
    accuracy = float(np.mean(model.classes_[proba.argmax(axis=1)] == y_test))
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "forest.joblib"
        _, save = timed(lambda: joblib.dump(model, target))
        size = target.stat().st_size
    return {"fit": fit, "score": score, "save": save, "accuracy": accuracy, "bytes": size}


def forest_depth(train_path: str, test_path: str, depth: str) -> dict:
    """100 trees no deeper than ``depth``: scikit-learn's forest and LightGBM's random
    forest mode with as many leaves as that depth allows, a bootstrap-sized bag per tree and
    scikit-learn's √features tried per node."""
    import lightgbm
    from sklearn.ensemble import RandomForestClassifier

    x_train, y_train, x_test, y_test = _read(train_path, test_path)
    forest = RandomForestClassifier(n_estimators=100, max_depth=int(depth), n_jobs=2, random_state=0)
    _, sk_fit = timed(lambda: forest.fit(x_train, y_train))
    features = x_train.shape[1]
    rf = lightgbm.LGBMClassifier(
        boosting_type="rf",
        n_estimators=100,
        max_depth=int(depth),
        num_leaves=2 ** int(depth),
        bagging_freq=1,
        bagging_fraction=0.632,  # the share of distinct rows in a bootstrap sample
        feature_fraction_bynode=math.isqrt(features) / features,
        min_child_samples=1,
        min_child_weight=1e-3,
        max_bin=255,
        n_jobs=2,
        verbose=-1,
        random_state=0,
    )
    _, lgb_fit = timed(lambda: rf.fit(x_train, y_train))
    return {
        "sklearn_fit": sk_fit,
        "sklearn_accuracy": float(np.mean(forest.predict(x_test) == y_test)),
        "lightgbm_fit": lgb_fit,
        "lightgbm_accuracy": float(np.mean(rf.predict(x_test) == y_test)),
    }


def forest_predict(train_path: str, data_path: str, depth: str) -> dict:
    from sklearn.ensemble import RandomForestClassifier

    x_train, y_train, x_data, _ = _read(train_path, data_path)
    model = RandomForestClassifier(n_estimators=100, max_depth=int(depth), n_jobs=2, random_state=0)
    model.fit(x_train, y_train)
    _, seconds = timed(lambda: model.predict_proba(x_data))
    return {"predict": seconds, "rows": int(x_data.shape[0])}


def tree_default(train_path: str, test_path: str) -> dict:
    from sklearn.tree import DecisionTreeClassifier

    x_train, y_train, x_test, y_test = _read(train_path, test_path)
    model = DecisionTreeClassifier(random_state=0)
    _, fit = timed(lambda: model.fit(x_train, y_train))
    return {
        "sklearn_fit": fit,
        "sklearn_accuracy": float(np.mean(model.predict(x_test) == y_test)),
        "sklearn_leaves": int(model.get_n_leaves()),
    }


def tree(train_path: str, test_path: str, leaves: str) -> dict:
    import lightgbm

    out = tree_default(train_path, test_path)
    x_train, y_train, x_test, y_test = _read(train_path, test_path)
    # one tree grown leaf-wise to the same number of leaves, from LightGBM's histograms: the
    # floor a histogram tree learner reaches
    booster = lightgbm.LGBMClassifier(
        n_estimators=1,
        num_leaves=int(leaves),
        learning_rate=1.0,
        min_child_samples=1,
        min_child_weight=1e-3,
        max_bin=255,
        n_jobs=2,
        verbose=-1,
        random_state=0,
    )
    _, lgb_fit = timed(lambda: booster.fit(x_train, y_train))
    return out | {
        "lightgbm_fit": lgb_fit,
        "lightgbm_accuracy": float(np.mean(booster.predict(x_test) == y_test)),
        "lightgbm_leaves": int(booster.booster_.dump_model()["tree_info"][0]["num_leaves"]),
    }


def main() -> None:
    mode, *args = sys.argv[1:]
    runs = {
        "forest-phases": forest_phases,
        "forest-depth": forest_depth,
        "forest-predict": forest_predict,
        "tree-default": tree_default,
        "tree": tree,
    }
    print(json.dumps(runs[mode](*args)))


if __name__ == "__main__":
    main()
