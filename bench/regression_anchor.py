"""Fit one anchor regressor on a train/test split and print one JSON line.

Runs with the anchors' Python (`make bench-env`: scikit-learn, cubist, Polars):

    python regression_anchor.py TOOL TRAIN TEST TARGET

TOOL: ``sk-tree-cv`` (scikit-learn's tree, its ``ccp_alpha`` chosen by 5-fold CV among the
full tree's pruning path), ``sk-forest`` (100 trees, a third of the features per split) or
``cubist`` (Cubist's defaults: one committee, no neighbours). Output: r2, rmse, size
(leaves, or rules), fit seconds.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
from sk_anchor import encode, read


def main() -> None:
    tool, train_path, test_path, target = sys.argv[1:5]
    from sklearn.metrics import mean_squared_error, r2_score

    train, test = read(train_path), read(test_path)
    y_train = train.get_column(target).cast(float).to_numpy()
    y_test = test.get_column(target).cast(float).to_numpy()
    started = time.perf_counter()
    if tool == "cubist":
        from cubist import Cubist

        def frame(df, levels=None):
            # plain column names (a column named y or with punctuation breaks Cubist's data
            # file) and text as pandas categoricals of the training levels (a level Cubist did
            # not see ends its run), letters, digits and underscores only (its data files split on
            # punctuation)
            pdf = df.drop(target).select(kept).to_pandas()  # a constant text column breaks its names file
            pdf.columns = [f"x{k}" for k in range(pdf.shape[1])]
            for name in pdf.columns:
                if not pd.api.types.is_numeric_dtype(pdf[name]) or pd.api.types.is_bool_dtype(pdf[name]):
                    text = pdf[name].astype("string").str.replace(r"[^A-Za-z0-9_]", "_", regex=True)
                    known = None if levels is None else levels[name].cat.categories
                    pdf[name] = text.astype(pd.CategoricalDtype(known) if known is not None else "category")
            return pdf

        import pandas as pd

        kept = [c for c in train.columns if c != target and train.get_column(c).n_unique() > 1]
        train_frame = frame(train)
        model = Cubist(n_rules=500).fit(train_frame, y_train)
        elapsed = time.perf_counter() - started
        predicted = model.predict(frame(test, train_frame))
        size = int(model.coeffs_.groupby(["committee", "rule"]).ngroups)
    else:
        from sklearn.ensemble import RandomForestRegressor
        from sklearn.model_selection import GridSearchCV, KFold
        from sklearn.tree import DecisionTreeRegressor

        x_train, x_test = encode(train, test, target)
        started = time.perf_counter()
        if tool == "sk-forest":
            model = RandomForestRegressor(n_estimators=100, max_features=1 / 3, n_jobs=2, random_state=0)
            model.fit(x_train, y_train)
            size = sum(t.get_n_leaves() for t in model.estimators_)
        else:
            path = DecisionTreeRegressor(random_state=0).cost_complexity_pruning_path(x_train, y_train)
            alphas = np.unique(path.ccp_alphas)
            if alphas.size > 60:  # the path's quantiles: a long table's path has thousands
                alphas = np.unique(np.quantile(alphas, np.linspace(0, 1, 60)))
            search = GridSearchCV(
                DecisionTreeRegressor(random_state=0),
                {"ccp_alpha": alphas},
                cv=KFold(5, shuffle=True, random_state=0),
                scoring="neg_mean_squared_error",
            )
            model = search.fit(x_train, y_train).best_estimator_
            size = model.get_n_leaves()
        elapsed = time.perf_counter() - started
        predicted = model.predict(x_test)
    rmse = float(np.sqrt(mean_squared_error(y_test, predicted)))
    print(
        json.dumps({"r2": float(r2_score(y_test, predicted)), "rmse": rmse, "size": int(size), "fit_seconds": elapsed})
    )


if __name__ == "__main__":
    main()
