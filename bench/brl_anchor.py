"""Fit imodels' BayesianRuleListClassifier on one split of one-hot items; print one JSON line.

Runs with the anchors' Python (`make bench-env`: imodels, six, Polars):

    python brl_anchor.py TRAIN.parquet TEST.parquet OPTIONS.json

The Parquet files hold 0/1 item columns (the same items rulecli mines from: levels,
"missing", and numeric intervals cut on the training rows) and the class in `__y`.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import polars as pl
from harness import auc


def main() -> None:
    train_path, test_path, options = sys.argv[1:4]
    from imodels import BayesianRuleListClassifier

    train, test = pl.read_parquet(train_path), pl.read_parquet(test_path)
    names = [c for c in train.columns if c != "__y"]
    x_train, x_test = train.select(names).to_numpy(), test.select(names).to_numpy()
    y_train, y_test = train.get_column("__y").to_numpy(), test.get_column("__y").to_numpy()
    model = BayesianRuleListClassifier(**json.loads(options))
    started = time.perf_counter()
    model.fit(x_train, y_train, feature_names=names)
    elapsed = time.perf_counter() - started
    proba = model.predict_proba(x_test)[:, 1]
    predicted = model.classes_[(proba >= 0.5).astype(int)]
    accuracy = float(np.mean(predicted == y_test))
    area = auc(proba, y_test == model.classes_[1]) if len(np.unique(y_test)) == 2 else None
    rules = max(len(model.d_star) - 1, 0) if model.d_star else 0
    print(json.dumps({"accuracy": accuracy, "auc": area, "rules": rules, "fit_seconds": elapsed}))


if __name__ == "__main__":
    main()
