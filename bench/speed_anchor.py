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
import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl
from harness import clock
from sk_anchor import encode

TARGET = "class"


# settings both LightGBM runs share: leaves as small as scikit-learn's, its 255 bins
LIGHTGBM = {
    "min_child_samples": 1,
    "min_child_weight": 1e-3,
    "max_bin": 255,
    "n_jobs": 2,
    "verbose": -1,
    "random_state": 0,
}


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
    _, fit = clock(lambda: model.fit(x_train, y_train))
    proba, score = clock(lambda: model.predict_proba(x_test))
    accuracy = float(np.mean(model.classes_[proba.argmax(axis=1)] == y_test))
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "forest.joblib"
        _, save = clock(lambda: joblib.dump(model, target))
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
    _, sk_fit = clock(lambda: forest.fit(x_train, y_train))
    features = x_train.shape[1]
    rf = lightgbm.LGBMClassifier(
        boosting_type="rf",
        n_estimators=100,
        max_depth=int(depth),
        num_leaves=2 ** int(depth),
        bagging_freq=1,
        bagging_fraction=0.632,  # the share of distinct rows in a bootstrap sample
        feature_fraction_bynode=math.isqrt(features) / features,
        **LIGHTGBM,
    )
    _, lgb_fit = clock(lambda: rf.fit(x_train, y_train))
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
    _, seconds = clock(lambda: model.predict_proba(x_data))
    return {"predict": seconds, "rows": int(x_data.shape[0])}


def _sklearn_tree(x_train, y_train, x_test, y_test) -> dict:
    from sklearn.tree import DecisionTreeClassifier

    model = DecisionTreeClassifier(random_state=0)
    _, fit = clock(lambda: model.fit(x_train, y_train))
    return {
        "sklearn_fit": fit,
        "sklearn_accuracy": float(np.mean(model.predict(x_test) == y_test)),
        "sklearn_leaves": int(model.get_n_leaves()),
    }


def tree_default(train_path: str, test_path: str) -> dict:
    return _sklearn_tree(*_read(train_path, test_path))


def tree(train_path: str, test_path: str, leaves: str) -> dict:
    import lightgbm

    x_train, y_train, x_test, y_test = _read(train_path, test_path)
    out = _sklearn_tree(x_train, y_train, x_test, y_test)
    # one tree grown leaf-wise to the same number of leaves, from LightGBM's histograms: the
    # floor a histogram tree learner reaches
    booster = lightgbm.LGBMClassifier(n_estimators=1, num_leaves=int(leaves), learning_rate=1.0, **LIGHTGBM)
    _, lgb_fit = clock(lambda: booster.fit(x_train, y_train))
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
