"""Rules that predict the class of least expected cost instead of the most frequent one.

Given a cost for each (true, predicted) pair of classes, a rule whose training rows hold
n_t rows of class t predicts the class k of least Σ_t n_t · cost(t, k) (Elkan 2001, "The
foundations of cost-sensitive learning": the optimal decision from class probabilities).
A rule's conditions stay; only what it predicts, and how many of its rows that gets right,
change, so every export and the text form carry the costs' decision as they are.
"""

from __future__ import annotations

import dataclasses

from rulecli.model.core import DecisionList, Rule, RuleSet, RuleStats

Costs = dict[str, dict[str, float]]  # true class -> predicted class -> cost


def cheapest(model: DecisionList | RuleSet, costs: Costs) -> tuple[DecisionList | RuleSet, int]:
    """The model with each rule (and the default) predicting its class of least expected
    cost, from its estimated class probabilities or its training class counts; and how many
    rules changed their class."""
    changed = 0

    def relabel(rule: Rule) -> Rule:
        nonlocal changed
        weights = rule.probabilities or (rule.stats.class_counts if rule.stats else None)
        if not weights or not any(weights):
            return rule
        expected = {k: sum(w * costs[t][k] for t, w in zip(model.classes, weights, strict=True)) for k in model.classes}
        best = min(model.classes, key=lambda k: (expected[k], k != rule.prediction, model.classes.index(k)))
        if best == rule.prediction:
            return rule
        changed += 1
        stats = rule.stats
        if stats is not None and stats.class_counts is not None:
            stats = RuleStats(stats.covered, stats.class_counts[model.classes.index(best)], stats.class_counts)
        return dataclasses.replace(rule, prediction=best, stats=stats)

    rules = tuple(relabel(r) for r in model.rules)
    default = None if model.default is None else relabel(model.default)
    return dataclasses.replace(model, rules=rules, default=default), changed
