"""Training statistics of finished rules, counted the way ``evaluate`` recounts them."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import TypeVar

import numpy as np

from rulecli.counting.encoded import Encoded
from rulecli.dataset import Dataset
from rulecli.engines import TableBase
from rulecli.model.core import Committee, DecisionList, NumberStats, Rule, RuleRegression, RuleSet, RuleStats
from rulecli.model.export import rule_formulas
from rulecli.model.languages import rule_tests
from rulecli.stats import row_hash, sample_seed, tally

M = TypeVar("M", DecisionList, RuleSet, RuleRegression, Committee)


def stats_of(counts: np.ndarray, classes: Sequence[str], prediction: str) -> RuleStats:
    """A rule's statistics from the class counts of the rows it is credited with."""
    return RuleStats(tally(counts.sum()), tally(counts[classes.index(prediction)]), tuple(tally(c) for c in counts))


def _stats(enc: Encoded, rows: np.ndarray, prediction: str) -> RuleStats:
    return stats_of(enc.class_counts(rows), enc.classes, prediction)


def list_rule_stats(enc: Encoded, rules: list[Rule], default: str) -> tuple[list[Rule], Rule]:
    """Each rule of a decision list counts the rows it is the first to match."""
    remaining = np.ones(enc.n_rows, dtype=bool)
    out = []
    for rule in rules:
        fired = enc.rule_mask(rule.conditions) & remaining
        out.append(dataclasses.replace(rule, stats=_stats(enc, np.flatnonzero(fired), rule.prediction)))
        remaining &= ~fired
    return out, Rule((), default, _stats(enc, np.flatnonzero(remaining), default))


def set_rule_stats(enc: Encoded, rules: list[Rule], *, laplace_weights: bool) -> list[Rule]:
    """Each rule of a rule set counts every row it matches; optionally weight it by its
    Laplace confidence ``(correct + 1) / (covered + K)``."""
    out = []
    for rule in rules:
        stats = _stats(enc, np.flatnonzero(enc.rule_mask(rule.conditions)), rule.prediction)
        weight = (stats.correct + 1.0) / (stats.covered + enc.n_classes) if laplace_weights else rule.weight
        out.append(dataclasses.replace(rule, stats=stats, weight=weight))
    return out


def training_summary(ds: Dataset, rules: Sequence[Rule]) -> dict[str, object]:
    """What every covering learner records about its training run."""
    return {
        "rows": ds.total_weight,
        "class_counts": [tally(c) for c in ds.class_counts()],
        "rules": len(rules),
        "conditions": sum(len(r.conditions) for r in rules),
    }


def set_default_rule(enc: Encoded, rules: list[Rule]) -> Rule:
    """The fallback of a rule set: the majority class of the rows no rule matches
    (of all rows when every row is matched), with the statistics of those rows."""
    covered = np.zeros(enc.n_rows, dtype=bool)
    for rule in rules:
        covered |= enc.rule_mask(rule.conditions)
    uncovered = enc.class_counts(np.flatnonzero(~covered))
    return default_rule_of(uncovered, enc.class_counts(np.arange(enc.n_rows)), enc.classes)


def default_rule_of(uncovered: np.ndarray, every: np.ndarray, classes: Sequence[str]) -> Rule:
    """The default rule from the class counts of the rows no rule matches and of all rows:
    the majority of the former (of all rows when every row is matched), with its statistics."""
    pool = uncovered if uncovered.sum() > 0 else every
    prediction = classes[int(np.argmax(pool))]
    return Rule((), prediction, stats_of(uncovered, classes, prediction))


def engine_default_rule(table: TableBase, model: RuleSet) -> Rule:
    """:func:`set_default_rule` counted by an engine: one pass over the rows the model's
    rules leave."""
    uncovered = table.rule_counts(rule_tests(model, table.dialect), ordered=False)[-1]
    return default_rule_of(uncovered, table.class_counts(), model.classes)


def recounted(model: M, table: TableBase) -> M:
    """The rule model with each rule's statistics counted by ``table``'s engine on all its
    rows, as the learners credit them: the rows each rule decides in a decision list, every
    row it matches in a rule set, the rest for the default. Its predictions stay as learned."""
    if isinstance(model, RuleRegression):
        return _recounted_numbers(model, table)
    if isinstance(model, Committee):  # each list's rules against the target itself
        members = tuple(_recounted_numbers(m, table) for m in model.members)
        info = dataclasses.replace(model.info, training=dict(model.info.training) | {"rows": table.n_rows})
        return dataclasses.replace(model, members=members, info=info)
    counts = table.rule_counts(rule_tests(model, table.dialect), isinstance(model, DecisionList))
    rules = tuple(
        dataclasses.replace(r, stats=stats_of(counts[i], model.classes, r.prediction))
        for i, r in enumerate(model.rules)
    )
    default = model.default
    if default is not None:
        default = dataclasses.replace(default, stats=stats_of(counts[-1], model.classes, default.prediction))
    training = dict(model.info.training) | {"rows": table.n_rows}
    if "class_counts" in training:
        training["class_counts"] = [tally(c) for c in table.class_counts()]
    info = dataclasses.replace(model.info, training=training)
    return dataclasses.replace(model, rules=rules, default=default, info=info)


def _recounted_numbers(model: RuleRegression, table: TableBase) -> RuleRegression:
    formulas, default = rule_formulas(model, table.dialect)
    figures = table.number_rule_stats(rule_tests(model, table.dialect), formulas, default, model.ordered)

    def stats(i: int) -> NumberStats:
        rows, mean, variance, mse = figures[i]
        return NumberStats(int(rows), float(mean), math.sqrt(max(variance, 0.0)), math.sqrt(max(mse, 0.0)))

    rules = tuple(dataclasses.replace(r, stats=stats(i)) for i, r in enumerate(model.rules))
    fallback = dataclasses.replace(model.default, stats=stats(-1))
    info = dataclasses.replace(model.info, training=dict(model.info.training) | {"rows": table.n_rows})
    return dataclasses.replace(model, rules=rules, default=fallback, info=info)


def learning_sample(ds: Dataset, rows: int, seed: int) -> tuple[Dataset, Dataset] | None:
    """The ``rows`` rows of ``ds`` with the least hashed row numbers, to learn from, and the
    next ``rows`` (or all the others, if fewer), to choose on; None when ``ds`` has no more
    than ``rows`` rows (or ``rows`` is 0: every row). The least hashes, not those under a
    bound: ``ds`` may itself be an engine's sample drawn with the same seed, all of whose
    hashes are under any bound above its own."""
    if rows <= 0 or ds.n_rows <= rows:
        return None
    order = np.argsort(row_hash(ds.ids, sample_seed(seed)), kind="stable")
    return ds.subset(np.sort(order[:rows])), ds.subset(np.sort(order[rows : 2 * rows]))


def counted_on_every_row(model: RuleSet, sample: Dataset, ds: Dataset, seed: int) -> RuleSet:
    """A rule set learned from ``sample`` (of :func:`learning_sample`) with its rules'
    statistics, its default rule and its training summary counted on every row of ``ds``,
    and the sample recorded as an engine's is (``training.sample``)."""
    enc = Encoded.from_dataset(ds)
    rules = set_rule_stats(enc, list(model.rules), laplace_weights=False)
    default = None if model.default is None else set_default_rule(enc, rules)
    note = {
        "rows": sample.n_rows,
        "of_rows": ds.n_rows,
        "drawn_by": "a hash of the row numbers",
        "seed": seed,
        "statistics": "recounted on every row",
    }
    training = model.info.training | training_summary(ds, rules) | {"sample": note}
    info = dataclasses.replace(model.info, training=training)
    return dataclasses.replace(model, rules=tuple(rules), default=default, info=info)
