"""Training statistics of finished rules, counted the way ``evaluate`` recounts them."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from rulecli.dataset import Dataset
from rulecli.model.core import Rule, RuleStats
from rulecli.search.encoded import Encoded
from rulecli.stats import tally


def _stats(enc: Encoded, rows: np.ndarray, prediction: str) -> RuleStats:
    counts = enc.class_counts(rows)
    correct = tally(counts[enc.classes.index(prediction)])
    return RuleStats(tally(counts.sum()), correct, tuple(tally(c) for c in counts))


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
    uncovered = np.flatnonzero(~covered)
    pool = uncovered if uncovered.size else np.arange(enc.n_rows)
    prediction = enc.classes[int(np.argmax(enc.class_counts(pool)))]
    return Rule((), prediction, _stats(enc, uncovered, prediction))
