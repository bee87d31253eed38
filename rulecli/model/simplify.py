"""Rules without redundancy: one condition per column, no rule a decision list never reaches.

- Within a rule, several tests of one column become one: numeric bounds the tightest
  interval (``duration >= 27 AND duration >= 45`` is ``duration >= 45``; a lower and an
  upper bound one interval), categorical sets their intersection. A column tested once
  keeps its condition as written; a contradiction (an empty interval or set) is left as
  it is, since it says the rule never fires.
- In a decision list, a rule more specific than an earlier one (every row it matches, the
  earlier one matches first) never decides a row and is dropped.

Neither changes a prediction: a rule matches exactly the rows it matched before.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable

from rulecli.model.core import Closed, Condition, DecisionList, Model, Op, Rule
from rulecli.model.ops import OPS, Shape, ends, is_numeric

_LOWER = {Op.GT: False, Op.GE: True}
_UPPER = {Op.LT: False, Op.LE: True}


def simplify(model: Model) -> Model:
    """The model with each rule's conditions merged and, in a decision list, unreachable rules dropped."""
    rules = [dataclasses.replace(r, conditions=simplify_conditions(r.conditions)) for r in model.rules]
    if isinstance(model, DecisionList):
        rules = _reachable(rules)
    return dataclasses.replace(model, rules=tuple(rules))


def simplify_conditions(conditions: tuple[Condition, ...]) -> tuple[Condition, ...]:
    columns: dict[str, list[Condition]] = {}
    for cond in conditions:
        columns.setdefault(cond.column, []).append(cond)
    out: list[Condition] = []
    for tests in columns.values():
        merged = _merge(tests) if len(tests) > 1 else None
        out += [merged] if merged is not None else list(dict.fromkeys(tests))
    return tuple(out)


def _merge(tests: list[Condition]) -> Condition | None:
    """One condition equal to all of ``tests`` (one column), or None when they do not merge."""
    strict = [t for t in tests if not t.or_missing]
    # a test that missing values fail makes "or missing" on the others moot
    or_missing = not strict
    if all(_is_bound(t) for t in tests):
        return _interval(tests, or_missing)
    if all(_is_members(t) for t in tests):
        allowed = set(_values(tests[0]))
        for t in tests[1:]:
            allowed &= set(_values(t))
        if not allowed:
            return None
        ordered = tuple(v for v in _values(tests[0]) if v in allowed)
        if len(ordered) == 1:
            return Condition(tests[0].column, Op.EQ, ordered[0], or_missing=or_missing)
        return Condition(tests[0].column, Op.IN, ordered, or_missing=or_missing)
    return None


def _is_bound(c: Condition) -> bool:
    return c.op in _LOWER or c.op in _UPPER or c.op == Op.INTERVAL


def _is_members(c: Condition) -> bool:
    return c.op in (Op.EQ, Op.IN) and not is_numeric(c)


def _values(c: Condition) -> tuple:
    return c.value if isinstance(c.value, tuple) else (c.value,)


def _bounds(c: Condition) -> tuple[tuple[float, bool], tuple[float, bool]]:
    """(low, low included), (high, high included) of a numeric bound test."""
    if c.op == Op.INTERVAL:
        low, high = c.value  # type: ignore[misc]
        with_low, with_high = ends(c.closed)
        return (low, with_low), (high, with_high)
    value = float(c.value)  # type: ignore[arg-type]
    if c.op in _LOWER:
        return (value, _LOWER[c.op]), (math.inf, False)
    return (-math.inf, False), (value, _UPPER[c.op])


def _interval(tests: list[Condition], or_missing: bool) -> Condition | None:
    lows, highs = zip(*(_bounds(t) for t in tests), strict=True)
    # the tightest: the largest low (excluded beats included), the smallest high (likewise)
    low, with_low = max(lows, key=lambda b: (b[0], not b[1]))
    high, with_high = min(highs, key=lambda b: (b[0], b[1]))
    if low > high or (low == high and not (with_low and with_high)):
        return None
    column = tests[0].column
    if high == math.inf:
        return Condition(column, Op.GE if with_low else Op.GT, low, or_missing=or_missing)
    if low == -math.inf:
        return Condition(column, Op.LE if with_high else Op.LT, high, or_missing=or_missing)
    closed = {(True, True): Closed.BOTH, (True, False): Closed.LEFT, (False, True): Closed.RIGHT}
    return Condition(column, Op.INTERVAL, (low, high), closed.get((with_low, with_high), Closed.NONE), or_missing)


def _reachable(rules: Iterable[Rule]) -> list[Rule]:
    kept: list[Rule] = []
    # an earlier rule can hold every row of a later one only if it tests no column the
    # later one leaves free: kept rules grouped by the columns they test, and only groups
    # within the rule's columns compared (CN2's 4,000-rule lists compared every pair)
    by_columns: dict[frozenset[str], list[tuple[Condition, ...]]] = {}
    for rule in rules:
        columns = frozenset(c.column for c in rule.conditions)
        if not any(
            _implies(rule.conditions, general)
            for tested, earlier in by_columns.items()
            if tested <= columns
            for general in earlier
        ):
            kept.append(rule)
            by_columns.setdefault(columns, []).append(rule.conditions)
    return kept


def _implies(specific: tuple[Condition, ...], general: tuple[Condition, ...]) -> bool:
    """Every row ``specific`` matches, ``general`` matches too (sound, not complete)."""
    return all(any(_implies_one(s, g) for s in specific if s.column == g.column) for g in general)


def _implies_one(s: Condition, g: Condition) -> bool:
    if s == g:
        return True
    if s.or_missing and not g.or_missing:
        return False
    if OPS[s.op].shape == Shape.MISSING or OPS[g.op].shape == Shape.MISSING:
        return g.op == Op.PRESENT and not s.or_missing and OPS[s.op].shape != Shape.MISSING
    if _is_bound(s) and _is_bound(g):
        (sl, sli), (sh, shi) = _bounds(s)
        (gl, gli), (gh, ghi) = _bounds(g)
        low_ok = sl > gl or (sl == gl and (gli or not sli))
        high_ok = sh < gh or (sh == gh and (ghi or not shi))
        return low_ok and high_ok
    if _is_members(s) and _is_members(g):
        return set(_values(s)) <= set(_values(g))
    if _is_members(s) and g.op in (Op.NE, Op.NOT_IN) and not is_numeric(g):
        return not (set(_values(s)) & set(_values(g)))
    return False
