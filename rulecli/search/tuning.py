"""Settings chosen on the training rows: a small stratified CV, and light-rule truncation.

A rule learned from a noisy seed or a rare description covers a handful of rows and
mostly votes wrong elsewhere; AQ15 dropped such light rules ("truncation"). How light is
too light depends on the table's noise, so the share is chosen by a 3-fold CV on (at most
2,000 of) the training rows, with CART's one-standard-error rule: among the settings whose
held-out accuracy is within one standard error of the best, the one with the fewest rules.
A share of a class's rows means the same on a sample as on the whole table.

A tree's pruning strength does not carry over that way: the alpha right for 2,000 rows
prunes a million rows' tree to a few leaves. It is chosen at the table's own scale
(:func:`pruning_splits`): a 3-fold CV on every row up to ``TREE_CV_ROWS``, a held-out
quarter of the rows beyond.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Hashable

import numpy as np
import polars as pl

from rulecli.counting.encoded import Encoded
from rulecli.dataset import Dataset, stratified_folds
from rulecli.engines import EngineTable, is_engine_table
from rulecli.model.compile import PREDICTION, fires_frame, predict_expr, prediction_frame
from rulecli.model.core import Model, Rule, RuleRegression, RuleSet
from rulecli.schema import plain_column
from rulecli.search.rule_stats import engine_default_rule, set_default_rule
from rulecli.stats import hash_sampled

CHOSEN_BY = "3-fold cross-validation"
HELD_OUT_BY = "a held-out quarter of the rows"
TUNE_ROWS = 2000  # rows settings are chosen on: enough to see the noise, cheap on long tables
# a tree's pruning is chosen by a CV on every row up to this many (three growths of two
# thirds of the table), and on a held-out quarter beyond (one growth of three quarters):
# 30,000 rows keep either choice's standard error under a point
TREE_CV_ROWS = 30_000
HOLD_OUT = 0.25
TUNE_MIN_ROWS = 30  # below this a 3-fold CV is all chance: the defaults are kept
SHARE_GRID = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3)  # share of its class a rule must cover


Splits = tuple[list[tuple[Dataset, Dataset]], float]


def cv_splits(ds: Dataset | EngineTable, seed: int, rows: int = TUNE_ROWS) -> Splits | None:
    """Stratified 3-fold (train, test) pairs on at most about ``rows`` rows, and their
    number (counted by weight); None when the table is too small to choose anything on. An
    engine's table gives the same rows as its sample."""
    if ds.n_rows < TUNE_MIN_ROWS:
        return None
    if is_engine_table(ds):
        sample = ds.sample(seed, min(1.0, rows / ds.n_rows))
    elif ds.n_rows <= rows:
        sample = ds
    else:
        sample = ds.subset(np.flatnonzero(hash_sampled(ds.ids, seed, rows / ds.n_rows)))
    folds = stratified_folds(sample.y, 3, seed)
    splits = [(sample.subset(np.flatnonzero(folds != k)), sample.subset(np.flatnonzero(folds == k))) for k in range(3)]
    return splits, float(sample.total_weight)


def beats_default(
    ds: Dataset | EngineTable, seed: int, fit: Callable[[Dataset], Model | RuleRegression], repeats: int = 2
) -> tuple[float, float] | None:
    """Over ``repeats`` stratified 3-fold cross-validations on every row (seeded ``seed``,
    ``seed + 1``, …), the score on the held-out rows (by weight) of the models ``fit`` learns
    on the other two folds, and of the default alone: the majority class of the other two
    folds, or their mean. A score is the rows predicted right, or for a number minus the
    sum of squared errors. None where the table is too small to tell (``TUNE_MIN_ROWS``)."""
    ours = default = 0.0
    for repeat in range(repeats):
        drawn = cv_splits(ds, seed + repeat, ds.n_rows)
        if drawn is None:
            return None
        for train, test in drawn[0]:
            predicted = prediction_frame(fit(train), test.frame.lazy()).collect().get_column(PREDICTION)
            if test.regression:
                weights = np.ones(test.n_rows) if test.weights is None else test.weights
                mean = float(np.average(train.y, weights=train.weights))
                ours -= float(weights @ (test.y - predicted.to_numpy()) ** 2)
                default -= float(weights @ (test.y - mean) ** 2)
                continue
            ours += _right_by_weight(predicted, test)
            majority = train.classes[int(np.argmax(train.class_counts()))]
            default += _right_by_weight(pl.select(pl.repeat(majority, test.n_rows, dtype=pl.String)).to_series(), test)
    return ours, default


def pruning_splits(ds: Dataset | EngineTable, seed: int, cv_rows: int = TREE_CV_ROWS) -> tuple[Splits, str] | None:
    """The (train, test) pairs a tree's pruning (or another setting that does not carry over
    from a sample) is chosen on, the rows they score (by weight) and how they were drawn: a
    3-fold CV on every row up to ``cv_rows``; beyond, one split holding out a hashed quarter
    of the rows, so that the strength is chosen on a model grown from three quarters of the
    table, close to the whole table's. An engine's table, whose rows cannot be grown from in
    part, is cross-validated on a sample of ``cv_rows`` rows."""
    if is_engine_table(ds) or ds.n_rows <= cv_rows:
        cv = cv_splits(ds, seed, cv_rows)
        return None if cv is None else (cv, CHOSEN_BY)
    held = hash_sampled(ds.ids, seed, HOLD_OUT)
    test = ds.subset(np.flatnonzero(held))
    return ([(ds.subset(np.flatnonzero(~held)), test)], float(test.total_weight)), HELD_OUT_BY


def held_out_right(model: RuleSet, test: Dataset, fires: pl.DataFrame, column: dict[int, str]) -> float:
    """The test rows the model gets right, counted by weight; ``fires`` holds the tests of
    the rules of the model it was truncated from, on the test rows, ``column`` which column
    is which rule's (by the rule's identity)."""
    if model.rules:
        tests = [pl.col(column[id(rule)]) for rule in model.rules]
        predicted = fires.select(predict_expr(model, fires=tests)).get_column(PREDICTION)
    else:  # the default rule's literal, a row each
        predicted = prediction_frame(model, test.frame.lazy()).collect().get_column(PREDICTION)
    return _right_by_weight(predicted, test)


def _right_by_weight(predicted: pl.Series, test: Dataset) -> float:
    """The test rows whose class ``predicted`` names, counted by weight."""
    hits = (predicted == plain_column(test.frame, test.target).cast(pl.String)).fill_null(False).to_numpy()
    return float(hits.sum() if test.weights is None else test.weights[hits].sum())


def truncated(
    model: RuleSet,
    ds: Dataset | EngineTable,
    share: float,
    drop_majority: bool = False,
    per_class: int | None = None,
) -> RuleSet:
    """The rule set without the rules covering less than ``share`` of their class's training
    rows, and, with ``drop_majority``, without the rules of the training majority class (as
    a decision list leaves its most frequent class to the default rule) nor those whose rows
    hold more of the majority class than of their own (such a rule, a rough set's possible
    rule, was outvoted by a majority rule that is now gone), and, with ``per_class``, with
    at most that many rules per class (those right on the most rows, ties to the earlier);
    a default (if the model has one) becomes the majority of what the kept rules leave.
    Kept rules keep their statistics: in a rule set each counts every row it matches."""
    counts = ds.class_counts().tolist()
    totals = dict(zip(ds.classes, counts, strict=True))
    top = int(np.argmax(counts))
    majority = ds.classes[top] if drop_majority else None

    def outweighed(rule: Rule) -> bool:
        held = rule.stats.class_counts if rule.stats is not None else None
        return majority is not None and held is not None and held[top] > rule.stats.correct  # type: ignore[union-attr]

    kept = [
        r
        for r in model.rules
        if r.stats is not None
        and r.stats.correct >= share * totals[r.prediction]
        and r.prediction != majority
        and not outweighed(r)
    ]
    if per_class is not None:
        ranked = sorted(range(len(kept)), key=lambda i: (-kept[i].stats.correct, i))  # type: ignore[union-attr]
        taken: dict[str, int] = {}
        chosen = set()
        for i in ranked:
            if taken.get(kept[i].prediction, 0) < per_class:
                taken[kept[i].prediction] = taken.get(kept[i].prediction, 0) + 1
                chosen.add(i)
        kept = [r for i, r in enumerate(kept) if i in chosen]
    if len(kept) == len(model.rules):
        return model
    if model.default is None:
        default = None
    elif is_engine_table(ds):
        default = engine_default_rule(ds, dataclasses.replace(model, rules=tuple(kept)))
    else:
        default = set_default_rule(Encoded.from_dataset(ds), kept)
    return dataclasses.replace(model, rules=tuple(kept), default=default)


Cut = tuple[float, bool, int | None]  # (share, drop the majority class's rules, rules per class)
PER_CLASS_GRID = (1, 2, 3, 5)  # with no share: a few rules per class, those right on the most rows
CUTS: tuple[Cut, ...] = tuple((share, drop, None) for drop in (False, True) for share in SHARE_GRID) + tuple(
    (0.0, drop, k) for drop in (False, True) for k in PER_CLASS_GRID
)


def cuts(share: float | None, majority_rules: str | None, per_class: int | None = None) -> tuple[Cut, ...]:
    """The truncations to choose from: each given setting fixed, the others from the grid
    (a given share or rules-per-class limit is tried with the other left open too)."""
    grid = CUTS
    if share is not None or per_class is not None:
        grid = tuple((share or 0.0, drop, per_class) for drop in (False, True))
    return tuple(cut for cut in grid if majority_rules is None or cut[1] == (majority_rules == "drop"))


def truncation_scores(
    fitted: RuleSet, train: Dataset, test: Dataset, settings: tuple[Cut, ...]
) -> list[tuple[Cut, float, int]]:
    """(setting, held-out rows right, rules) of ``fitted`` truncated each way; settings that
    keep the same rules are scored once."""
    right_of: dict[tuple[bool, tuple[object, ...]], float] = {}
    out = []
    fires, names = fires_frame(fitted, test.frame.lazy())  # every rule tested once; truncations keep rules
    column = {id(rule): name for rule, name in zip(fitted.rules, names, strict=True)}
    for cut in settings:
        model = truncated(fitted, train, *cut)
        key = (cut[1], model.rules)
        if key not in right_of:
            right_of[key] = held_out_right(model, test, fires, column)
        out.append((cut, right_of[key], len(model.rules)))
    return out


def paid_choice(scores: dict[Hashable, tuple[float, int]]) -> Hashable:
    """Among settings scored (held-out rows right, rules, both summed over the folds), the
    one whose rules pay for themselves: the most held-out rows right less one row per rule
    in each fold, then the fewest rules, then the first (the grid's order)."""
    order = {key: i for i, key in enumerate(scores)}
    return min(scores, key=lambda key: (scores[key][1] - scores[key][0], scores[key][1], order[key]))


def one_se_choice(scores: dict[Hashable, tuple[float, int]], n: float) -> Hashable:
    """Among settings scored (held-out rows right, rules), the fewest rules within one standard
    error of the best accuracy, then the most right, then the first (the grid's order)."""
    best = max(right for right, _ in scores.values()) / n
    # rows counted by fractional weights: the folds' sums can come out a rounding above n
    floor = best - math.sqrt(max(0.0, best * (1.0 - best)) / n)
    near = [key for key in scores if scores[key][0] / n >= floor - 1e-12]
    order = {key: i for i, key in enumerate(scores)}
    return min(near, key=lambda key: (scores[key][1], -scores[key][0], order[key]))


def one_se_least_squares(scores: dict[Hashable, tuple[float, float, int]], n: float) -> Hashable:
    """Among settings scored (held-out sums of squared errors and of their squares, leaves),
    the fewest leaves whose mean squared error is within one standard error of the least
    (Breiman et al. 1984, ch. 8.5: the standard error of the squared errors' mean), then the
    least error, then the first."""
    mse = {key: s2 / n for key, (s2, _, _) in scores.items()}
    best = min(mse, key=lambda key: mse[key])
    spread = max(0.0, scores[best][1] / n - mse[best] ** 2)
    ceiling = mse[best] + math.sqrt(spread / n)
    near = [key for key in scores if mse[key] <= ceiling * (1 + 1e-12)]
    order = {key: i for i, key in enumerate(scores)}
    return min(near, key=lambda key: (scores[key][2], mse[key], order[key]))
