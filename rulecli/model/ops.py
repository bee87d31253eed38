"""Rule semantics in one table: each condition operator, how every form writes it, and votes.

Prediction (``compile``), the text form (``text``) and every export (``export``: SQL,
Python, Polars) read the entries below, so an operator or a target language is added in
one place. The shared meaning: a missing value satisfies no test but ``is missing`` (and
a test marked ``or missing``); a column is compared as a number when any condition on it
is numeric, as text otherwise.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from rulecli.errors import ModelFormatError
from rulecli.model.core import (
    NUMERIC_OPS,
    Closed,
    Committee,
    Condition,
    Op,
    Rule,
    RuleRegression,
    Vote,
    column_units,
    number_lists,
)
from rulecli.schema import Unit


class Shape(StrEnum):
    """What an operator's value is: one value, a set, an interval, or nothing."""

    COMPARE = "compare"
    SET = "set"
    INTERVAL = "interval"
    MISSING = "missing"


@dataclass(frozen=True)
class OpSpec:
    """One operator. ``text``: its keyword in rule files; ``python``/``sql``/``polars``: its
    operator in that language (for sets the membership word, for missing tests the test);
    ``apply``: the comparison itself, which works on Python values and Polars expressions
    alike; ``negated``: the set or missing test is the complement (``not in``, ``is not missing``)."""

    shape: Shape
    text: str
    python: str
    sql: str
    polars: str
    apply: Callable[[Any, Any], Any] | None = None
    negated: bool = False


OPS: dict[Op, OpSpec] = {
    Op.EQ: OpSpec(Shape.COMPARE, "=", "==", "=", "==", operator.eq),
    Op.NE: OpSpec(Shape.COMPARE, "!=", "!=", "<>", "!=", operator.ne),
    Op.LT: OpSpec(Shape.COMPARE, "<", "<", "<", "<", operator.lt),
    Op.LE: OpSpec(Shape.COMPARE, "<=", "<=", "<=", "<=", operator.le),
    Op.GT: OpSpec(Shape.COMPARE, ">", ">", ">", ">", operator.gt),
    Op.GE: OpSpec(Shape.COMPARE, ">=", ">=", ">=", ">=", operator.ge),
    Op.IN: OpSpec(Shape.SET, "in", "in", "IN", "is_in"),
    Op.NOT_IN: OpSpec(Shape.SET, "not in", "not in", "NOT IN", "is_in", negated=True),
    Op.INTERVAL: OpSpec(Shape.INTERVAL, "in", "", "", "is_between"),
    Op.MISSING: OpSpec(Shape.MISSING, "is missing", "is None", "IS NULL", "is_null"),
    Op.PRESENT: OpSpec(Shape.MISSING, "is not missing", "is not None", "IS NOT NULL", "is_not_null", negated=True),
}


def ends(closed: Closed) -> tuple[bool, bool]:
    """Whether an interval holds its low and its high end."""
    return closed in (Closed.LEFT, Closed.BOTH), closed in (Closed.RIGHT, Closed.BOTH)


def is_numeric(cond: Condition) -> bool:
    """True when the condition compares its column as a number."""
    if cond.op in NUMERIC_OPS:
        return True
    if isinstance(cond.value, tuple):
        return all(isinstance(v, float) for v in cond.value)
    return isinstance(cond.value, float)


def column_kinds(conditions: Iterable[Condition]) -> dict[str, bool]:
    """Each column the conditions read, True where any of them compares it as a number."""
    kinds: dict[str, bool] = {}
    for cond in conditions:
        numeric = OPS[cond.op].shape != Shape.MISSING and is_numeric(cond)
        kinds[cond.column] = kinds.get(cond.column, False) or numeric
    return kinds


def rule_kinds(model: RuleRegression | Committee) -> dict[str, bool]:
    """Each column rules with formulas read, True where compared as a number: a formula's
    terms read numbers, or text in an indicator, as the conditions on their column do."""
    lists = number_lists(model)
    rules = [r for m in lists for r in m.rules]
    kinds = {t.column: t.levels is None for rule in (*rules, *(m.default for m in lists)) for t in rule.formula.terms}
    kinds |= column_kinds(c for rule in rules for c in rule.conditions)
    nearest = model.neighbours if isinstance(model, Committee) else None
    return kinds | {c.name: c.numeric for c in nearest.columns} if nearest is not None else kinds


Kinds = dict[str, bool | Unit]  # each column read: a number (True, or the unit of a date) or text


def dated_kinds(kinds: dict[str, bool], model: object) -> Kinds:
    """The model's column kinds with its date columns' units in place of True: what turns
    an input column (a date as text, or a date type) into the number the model compares."""
    units = column_units(model)
    return {name: units.get(name, True) if numeric else False for name, numeric in kinds.items()}


def rule_weight(rule: Rule, vote: Vote) -> float:
    """What a matching rule adds to its class's score (``one``, ``weighted``, ``best``)."""
    if vote == Vote.ONE:
        return 1.0
    if rule.weight is not None:
        return rule.weight
    if rule.stats is not None:
        return float(rule.stats.correct)
    return 1.0


def class_votes(rule: Rule, classes: tuple[str, ...], vote: Vote) -> list[float]:
    """A matching rule's score for each class: its class counts (``distribution``), else
    :func:`rule_weight` for its own class."""
    if vote == Vote.DISTRIBUTION:
        if rule.stats is None or rule.stats.class_counts is None:
            raise ModelFormatError("distribution voting needs class counts on every rule")
        return [float(c) for c in rule.stats.class_counts]
    scores = [0.0] * len(classes)
    scores[classes.index(rule.prediction)] = rule_weight(rule, vote)
    return scores


def rule_support(rule: Rule) -> float:
    """A rule's training support: the rows of its own class it covers (0 without statistics)."""
    return float(rule.stats.correct) if rule.stats is not None else 0.0


def tie_order(classes: tuple[str, ...], training: dict[str, object]) -> list[int]:
    """The order in which classes whose votes and support tie are preferred: the more
    frequent in training first (``training["class_counts"]``), then the class order."""
    counts = training.get("class_counts")
    if not (isinstance(counts, list) and len(counts) == len(classes)):
        return list(range(len(classes)))
    return sorted(range(len(classes)), key=lambda k: (-float(counts[k]), k))


MAX_EXACT = 2**53  # every integer up to it is an exact double


def tie_keys(votes: list[list[float]], supports: list[float], order: list[int]) -> tuple[float, list[float]] | None:
    """rulecli's tie order as numbers another engine adds and compares: with integer votes
    and supports, ``(score * M + support) * (K + 1) + prefer[class]`` (M the supports' sum
    plus one, ``prefer`` K minus the class's place in ``order``) is largest for the class
    that wins on score, then support, then prior, and unique. Returns (M, prefer), or None
    when a vote or support is fractional or a sum of such keys could pass 2^53."""
    k = len(order)
    flat = [v for row in votes for v in row]
    if not all(float(v).is_integer() for v in flat) or not all(float(s).is_integer() for s in supports):
        return None
    scale = sum(supports) + 1.0
    if (max(flat, default=0.0) * max(len(votes), 1) + 1.0) * scale * (k + 1) >= MAX_EXACT:
        return None
    prefer = [0.0] * k
    for place, cls in enumerate(order):
        prefer[cls] = float(k - place)
    return scale, prefer
