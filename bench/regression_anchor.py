"""Fit one anchor regressor on a train/test split and print one JSON line.

Runs with the anchors' Python (`make bench-env`: scikit-learn, cubist, Polars):

    python regression_anchor.py TOOL TRAIN TEST TARGET

TOOL: ``sk-tree-cv`` (scikit-learn's tree, its ``ccp_alpha`` chosen by 5-fold CV among the
full tree's pruning path), ``sk-forest`` (100 trees, a third of the features per split),
``cubist`` (Cubist's defaults: one committee, no neighbours), ``figs`` (imodels' FIGS, at
most 12 rules, as the issue that asked for it set), ``weka-m5rules`` or ``weka-m5p``
(Weka's, with their defaults; Debian's ``weka`` package) or ``rulekit`` (RuleKit 2's
regression rules with their defaults; PyPI ``rulekit`` carries its Java jar). Output: r2, rmse, size
(leaves, or rules), fit seconds.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
from sk_anchor import encode, read

WEKA = {"m5rules": "weka.classifiers.rules.M5Rules", "m5p": "weka.classifiers.trees.M5P"}


def arff(frames: list[pl.DataFrame], paths: list[str], target: str) -> None:
    """The frames as ARFF files with one header: names and text values quoted, a text column's
    levels those of every frame (Weka refuses a level its header lacks), the target last."""
    whole = pl.concat(frames, how="vertical_relaxed")
    columns = [c for c in whole.columns if c != target] + [target]

    def quote(text: str) -> str:
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"

    header = ["@relation table"]
    for name in columns:
        dtype = whole.schema[name]
        if dtype.is_numeric():
            header.append(f"@attribute {quote(name)} numeric")
        else:
            levels = sorted(whole.get_column(name).cast(pl.String).drop_nulls().unique().to_list())
            header.append(f"@attribute {quote(name)} {{{','.join(quote(v) for v in levels)}}}")
    for frame, path in zip(frames, paths, strict=True):
        rows = []
        for row in frame.select(columns).iter_rows():
            cells = []
            for name, value in zip(columns, row, strict=True):
                if value is None or (isinstance(value, float) and value != value):
                    cells.append("?")
                elif whole.schema[name].is_numeric():
                    cells.append(repr(float(value)))
                else:
                    cells.append(quote(str(value)))
            rows.append(",".join(cells))
        with Path(path).open("w") as handle:
            handle.write("\n".join([*header, "@data", *rows]) + "\n")


def weka(learner: str, train: pl.DataFrame, test: pl.DataFrame, target: str, y_test: np.ndarray) -> dict:
    """Weka's M5Rules or M5P with its defaults on the split: R² from its test RMSE, its rules."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        paths = [f"{folder}/train.arff", f"{folder}/test.arff"]
        arff([train, test], paths, target)
        started = time.perf_counter()
        done = subprocess.run(
            [
                "java",
                "-Xmx8g",
                "-cp",
                "/usr/share/java/weka.jar",
                WEKA[learner],
                "-t",
                paths[0],
                "-T",
                paths[1],
                "-no-cv",
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=1800,
        )
        elapsed = time.perf_counter() - started
    text = done.stdout
    tested = text[text.index("=== Error on test data ===") :]
    rmse = float(re.search(r"Root mean squared error\s+([-\d.eE]+)", tested).group(1))
    rules = re.search(r"Number of Rules\s*:\s*(\d+)", text)
    return {
        "r2": 1.0 - rmse**2 / float(np.var(y_test)),
        "rmse": rmse,
        "size": int(rules.group(1)) if rules else 0,
        "fit_seconds": elapsed,
    }


def main() -> None:
    tool, train_path, test_path, target = sys.argv[1:5]
    from sklearn.metrics import mean_squared_error, r2_score

    train, test = read(train_path), read(test_path)
    y_train = train.get_column(target).cast(float).to_numpy()
    y_test = test.get_column(target).cast(float).to_numpy()
    started = time.perf_counter()
    if tool.startswith("weka-"):
        print(json.dumps(weka(tool.removeprefix("weka-"), train, test, target, y_test)))
        return
    if tool == "rulekit":
        from rulekit.main import RuleKit
        from rulekit.regression import RuleRegressor

        RuleKit.init()
        plain = {c: f"x{k}" for k, c in enumerate(c for c in train.columns if c != target)}  # 'c' broke its table
        model = RuleRegressor()
        model.fit(train.drop(target).rename(plain).to_pandas(), y_train)
        elapsed = time.perf_counter() - started
        predicted = np.asarray(model.predict(test.drop(target).rename(plain).to_pandas()), dtype=float)
        size = len(model.model.rules)
    elif tool in ("cubist", "cubist-committees", "cubist-neighbours", "cubist-both"):
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
                    # missing as NaN, which Cubist writes as its '?' (pd.NA was written '<NA>', a value)
                    text = text.astype(object).where(text.notna(), np.nan)
                    known = None if levels is None else levels[name].cat.categories
                    pdf[name] = text.astype(pd.CategoricalDtype(known) if known is not None else "category")
            return pdf

        import pandas as pd

        kept = [c for c in train.columns if c != target and train.get_column(c).n_unique() > 1]
        train_frame = frame(train)
        committees = 5 if tool in ("cubist-committees", "cubist-both") else 1
        neighbours = 5 if tool in ("cubist-neighbours", "cubist-both") else 0
        model = Cubist(n_rules=500, n_committees=committees, neighbors=neighbours or None)
        model.fit(train_frame, y_train)
        elapsed = time.perf_counter() - started
        predicted = model.predict(frame(test, train_frame))
        size = int(model.coeffs_.groupby(["committee", "rule"]).ngroups)
    else:
        from sklearn.ensemble import RandomForestRegressor
        from sklearn.model_selection import GridSearchCV, KFold
        from sklearn.tree import DecisionTreeRegressor

        x_train, x_test = encode(train, test, target)
        started = time.perf_counter()
        if tool == "figs":
            from imodels import FIGSRegressor

            model = FIGSRegressor(max_rules=12, random_state=0)
            # FIGS takes no missing values: the training mean stands in
            means = np.nanmean(x_train, axis=0)
            x_train = np.where(np.isnan(x_train), means, x_train)
            x_test = np.where(np.isnan(x_test), means, x_test)
            model.fit(x_train, y_train)
            size = int(model.complexity_)
        elif tool == "sk-forest":
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
