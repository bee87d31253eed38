"""A customer table as users bring them: an ID, a signup date, free-text notes, missing
values, a 3-class imbalanced target (81 % majority) that a few columns decide up to noise.

    python bench/messy.py OUT.csv [ROWS] [SEED]
"""

from __future__ import annotations

import sys
from datetime import date, timedelta

import numpy as np
import polars as pl

WORDS = [
    "called",
    "about",
    "billing",
    "wants",
    "upgrade",
    "unhappy",
    "with",
    "support",
    "asked",
    "for",
    "refund",
    "happy",
    "renewal",
    "pending",
    "late",
    "payment",
]


def customers(n: int = 5000, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    start = date(2018, 1, 1)
    days = rng.integers(0, 5 * 365, n)
    signup = [(start + timedelta(days=int(d))).isoformat() for d in days]
    signup_missing = rng.random(n) < 0.05
    age = rng.integers(18, 80, n).astype(float)
    age[rng.random(n) < 0.08] = np.nan
    income = rng.lognormal(10.5, 0.5, n).round(0)
    income[rng.random(n) < 0.1] = np.nan
    plan = rng.choice(["basic", "plus", "premium"], n, p=[0.6, 0.3, 0.1])
    region = rng.choice(["north", "south", "east", "west", "centre"], n)
    tickets = rng.poisson(1.5, n)
    notes = [" ".join(rng.choice(WORDS, rng.integers(2, 7))) + f" #{i}" for i in range(n)]
    # risk rises with tickets, falls with tenure; premium customers rarely leave
    recent = days > 4 * 365
    score = tickets + 1.5 * recent - 1.5 * (plan == "premium") + rng.normal(0, 0.8, n)
    risk = np.where(score > 4.2, "high", np.where(score > 3.3, "medium", "low"))
    return pl.DataFrame(
        {
            "Customer ID": [f"C{100000 + i}" for i in rng.permutation(n)],
            "signup_date": pl.Series(signup).scatter(np.flatnonzero(signup_missing), None),
            "age": age,
            "income": income,
            "plan": plan,
            "region": region,
            "support_tickets": tickets,
            "notes": notes,
            "churn_risk": risk,
        }
    ).with_columns(pl.col("age", "income").fill_nan(None))


if __name__ == "__main__":
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    customers(rows, int(sys.argv[3]) if len(sys.argv) > 3 else 0).write_csv(sys.argv[1])
