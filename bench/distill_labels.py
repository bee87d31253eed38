"""Which labels and rows could make distilled rules beat rules learned from the true classes?

    python bench/distill_labels.py

On the first split of every table `bench/wide.py` writes (run it first), a forest (defaults)
and ripper (defaults: its rule count n) learn from the train file. Ripper then learns again,
with at most n rules, from other labels and rows, and is scored on the test file:

- ``in-sample``: the forest's predictions on its own training rows (what `distill` does);
- ``out-of-bag``: each row labelled by the trees that did not draw it (Breiman's out-of-bag
  votes: the forest's generalisation, not its memory of the row);
- ``cleaned 0.85``: the true class, except where at least 85 % of the out-of-bag votes go to
  another class (noise filtering by the forest's consensus);
- ``swapped`` / ``jittered``: the rows plus twice as many made-up rows labelled by the
  forest: values swapped in from other rows at chance 0.3, or numbers moved by Gaussian
  noise of 0.1 standard deviations (what `distill` does by default).

Ripper meets its budget by learning its whole list and dropping the rules that cost fewest
right predictions on the rows it learns from.

Uses the library in-process (it reads the forest's out-of-bag votes as it learns). Prints a
Markdown table: every table, and the tables where the forest is over two points ahead.
"""

from __future__ import annotations

import json
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import polars as pl
from harness import OUT

import rulecli.learners.forest as forest_learner
from rulecli import api

SPLITS = OUT / "wide" / "splits"
SPLIT = "0.0"
MADE_UP = 2.0  # made-up rows per real row
SWAP = 0.3
CONSENSUS = 0.85
VARIANTS = ("in-sample", "out-of-bag", "cleaned 0.85", "swapped", "jittered")

_votes: list[forest_learner.OutOfBag] = []


def _spy(*args: object, **kwargs: object) -> forest_learner.OutOfBag:
    votes = _UNSPIED(*args, **kwargs)
    _votes.append(votes)
    return votes


_UNSPIED = forest_learner.out_of_bag
forest_learner.out_of_bag = _spy


def _accuracy(model: api.Predictor, test: Path, target: str) -> float:
    truth = api.read_table(test)[target].cast(pl.String)
    said = api.predict(model, str(test))["prediction"].cast(pl.String)
    return float((said == truth).fill_null(False).mean())


def _made_up(rows: pl.DataFrame, jitter: bool) -> pl.DataFrame:
    """Made-up rows as `distill` makes them (numbers jittered), or as it did before: each
    value, at chance ``SWAP``, taken from another random row."""
    count = round(MADE_UP * rows.height)
    if jitter:
        return api.jittered(rows, count, 0)
    rng = np.random.default_rng(0)
    base = rng.integers(0, rows.height, count)
    columns = {}
    for name in rows.columns:
        other = rng.integers(0, rows.height, count)
        columns[name] = rows[name].gather(np.where(rng.random(count) < SWAP, other, base))
    return pl.DataFrame(columns)


def _one(table: str) -> dict[str, object] | None:
    folder = SPLITS / table
    train, test = folder / f"{SPLIT}.train.arff", folder / f"{SPLIT}.test.arff"
    if not train.exists():
        return None
    target = json.loads((folder / f"{SPLIT}.train.schema.json").read_text())["target"]
    _votes.clear()
    forest = api.fit("forest", str(train), target=target)
    votes = _votes[0]
    plain = api.fit("ripper", str(train), target=target)
    n = max(1, len(plain.rules))
    frame = api.read_table(train).filter(pl.col(target).is_not_null())
    if frame.height != votes.sums.shape[0]:
        return None  # rows the forest left out: its votes do not line up with the file
    rows = frame.select(pl.exclude(target))
    truth = frame[target].cast(pl.String).to_numpy().astype(object)
    in_sample = api.predict(forest, rows)["prediction"].cast(pl.String)
    classes = np.array([str(c) for c in forest.classes], dtype=object)
    voted = votes.counts > 0
    out_of_bag = np.where(voted, classes[votes.sums.argmax(axis=1)], in_sample.to_numpy())
    share = votes.sums.max(axis=1) / np.maximum(votes.sums.sum(axis=1), 1e-12)
    cleaned = np.where(voted & (share >= CONSENSUS), out_of_bag, truth)
    result: dict[str, object] = {
        "table": table, "forest": _accuracy(forest, test, target), "plain": _accuracy(plain, test, target),
    }  # fmt: skip

    def learn(name: str, learn_rows: pl.DataFrame, labels: pl.Series) -> None:
        taught = learn_rows.with_columns(labels.alias(target))
        if taught[target].n_unique() < 2:
            result[name] = result["plain"]
            return
        result[name] = _accuracy(api.fit("ripper", taught, target=target, max_rules=n), test, target)

    learn("in-sample", rows, in_sample)
    learn("out-of-bag", rows, pl.Series(list(out_of_bag), dtype=pl.String))
    learn("cleaned 0.85", rows, pl.Series(list(cleaned), dtype=pl.String))
    for name, jitter in (("swapped", False), ("jittered", True)):
        more = pl.concat([rows, _made_up(rows, jitter)], how="vertical_relaxed")
        learn(name, more, api.predict(forest, more)["prediction"].cast(pl.String))
    return result


def _line(rows: list[dict[str, object]], title: str) -> str:
    def mean(key: str) -> str:
        return f"{statistics.mean(float(r[key]) for r in rows):.4f}"  # type: ignore[arg-type]

    def record(key: str) -> str:
        wins = sum(float(r[key]) > float(r["plain"]) + 0.005 for r in rows)  # type: ignore[arg-type]
        losses = sum(float(r[key]) < float(r["plain"]) - 0.005 for r in rows)  # type: ignore[arg-type]
        return f"{mean(key)} ({wins} / {losses})"

    return f"| {title} | {len(rows)} | {mean('forest')} | {mean('plain')} | " + " | ".join(map(record, VARIANTS)) + " |"


def main() -> None:
    if not SPLITS.exists():
        sys.exit("run bench/wide.py first: it writes the split files")
    tables = sorted(p.name for p in SPLITS.iterdir())
    with ProcessPoolExecutor(2) as pool:
        done = [r for r in pool.map(_one, tables) if r]
    ahead = [r for r in done if float(r["forest"]) > float(r["plain"]) + 0.02]  # type: ignore[arg-type]
    print("| tables | count | forest | ripper, true classes | " + " | ".join(VARIANTS) + " |")
    print("|---" * (4 + len(VARIANTS)) + "|")
    print(_line(done, "all"))
    print(_line(ahead, "the forest > 2 points ahead"))


if __name__ == "__main__":
    main()
