"""The one rule representation every learner returns.

A :class:`Condition` tests one column; a :class:`Rule` is a conjunction of
conditions with a predicted class and training statistics. A
:class:`DecisionList` fires its first matching rule; a :class:`RuleSet` lets
every matching rule vote. Models are immutable; learners build new ones.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from rulecli.errors import ParamError
from rulecli.schema import Cuts, Schema, Unit

Scalar = str | float
Value = Scalar | tuple[Scalar, ...] | None


class Op(StrEnum):
    EQ = "="
    NE = "!="
    IN = "in"
    NOT_IN = "not in"
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    INTERVAL = "interval"
    MISSING = "is missing"
    PRESENT = "is not missing"


class Closed(StrEnum):
    """Which ends of an interval belong to it."""

    RIGHT = "right"
    LEFT = "left"
    BOTH = "both"
    NONE = "none"


NUMERIC_OPS = frozenset({Op.LT, Op.LE, Op.GT, Op.GE, Op.INTERVAL})


class Moment(float):
    """A date's number (days since 1970-01-01) or a date and time's (seconds since then):
    compared as the float it is, written as the date. A condition on a date column holds
    its bounds as moments, so every text form shows dates without knowing the schema."""

    unit: Unit

    def __new__(cls, value: float, unit: Unit) -> Moment:
        moment = super().__new__(cls, value)
        moment.unit = unit
        return moment

    def __reduce__(self) -> tuple[object, ...]:
        return (Moment, (float(self), self.unit))


def dated(cond: Condition, units: Mapping[str, Unit]) -> Condition:
    """``cond`` with its numbers as moments where its column holds dates (else itself)."""
    unit = units.get(cond.column)
    if unit is None or cond.value is None or isinstance(cond.value, str):
        return cond
    if isinstance(cond.value, tuple):
        if not all(isinstance(v, float) for v in cond.value):
            return cond
        value: Value = tuple(Moment(float(v), unit) for v in cond.value)
    else:
        value = Moment(float(cond.value), unit)
    return dataclasses.replace(cond, value=value)


def dated_rule(rule: Rule, units: Mapping[str, Unit]) -> Rule:
    if not units or not any(c.column in units for c in rule.conditions):
        return rule
    return dataclasses.replace(rule, conditions=tuple(dated(c, units) for c in rule.conditions))


def schema_units(schema: Schema | None) -> dict[str, Unit]:
    """The date columns a schema describes, with their units."""
    return {} if schema is None else {f.name: f.unit for f in schema.features if f.unit is not None}


def column_units(model: object) -> dict[str, Unit]:
    """The date columns a model reads (from its schema, or from its rules' moments for a
    model read from text) with their units: what turns an input column into numbers."""
    info = getattr(model, "info", None)
    units = schema_units(None if info is None else info.schema)
    for rule in getattr(model, "rules", ()):
        for cond in rule.conditions:
            values = cond.value if isinstance(cond.value, tuple) else (cond.value,)
            units.update((cond.column, v.unit) for v in values if isinstance(v, Moment))
    return units


@dataclass(frozen=True, slots=True)
class Condition:
    """A test on one column; a missing value never satisfies it (except ``is missing``,
    and a test marked ``or_missing``).

    ``value`` is a string or float for comparisons, a sorted tuple for ``in``/``not in``,
    a ``(low, high)`` pair for intervals (with ``closed``), and ``None`` for the
    missing-value tests.
    """

    column: str
    op: Op
    value: Value = None
    closed: Closed = Closed.RIGHT
    # a tree sends missing values down one branch: that branch's test also holds for them
    or_missing: bool = False

    def __post_init__(self) -> None:
        if self.op in (Op.MISSING, Op.PRESENT):
            if self.value is not None:
                raise ParamError(f"condition on '{self.column}': '{self.op}' takes no value")
            if self.or_missing:
                raise ParamError(f"condition on '{self.column}': '{self.op}' cannot add 'or missing'")
        elif self.op in (Op.IN, Op.NOT_IN):
            if not isinstance(self.value, tuple) or not self.value:
                raise ParamError(f"condition on '{self.column}': '{self.op}' needs a non-empty set")
        elif self.op == Op.INTERVAL:
            if not (isinstance(self.value, tuple) and len(self.value) == 2):
                raise ParamError(f"condition on '{self.column}': an interval needs (low, high)")
            low, high = self.value
            if not isinstance(low, float) or not isinstance(high, float) or not low <= high:
                raise ParamError(f"condition on '{self.column}': bad interval bounds {self.value}")
        elif isinstance(self.value, tuple) or self.value is None:
            raise ParamError(f"condition on '{self.column}': '{self.op}' needs one value")
        elif self.op in NUMERIC_OPS and not isinstance(self.value, float):
            raise ParamError(f"condition on '{self.column}': '{self.op}' needs a number")
        if isinstance(self.value, float) and not math.isfinite(self.value):
            raise ParamError(f"condition on '{self.column}': value must be finite")


@dataclass(frozen=True, slots=True)
class RuleStats:
    """Training statistics: rows the rule decided, of which correct, per-class counts
    (rows counted by their weights when the model learned with fractional weights)."""

    covered: int | float
    correct: int | float
    class_counts: tuple[int | float, ...] | None = None


@dataclass(frozen=True, slots=True)
class Rule:
    """``probabilities``: class probabilities a learner estimated for the rule's rows (BRL's
    posterior means); without them ``predict --proba`` uses the class shares of ``stats``."""

    conditions: tuple[Condition, ...]
    prediction: str
    stats: RuleStats | None = None
    weight: float | None = None
    probabilities: tuple[float, ...] | None = None


@dataclass(frozen=True)
class ModelInfo:
    """Where a model came from: learner, every parameter (seed included), schema, training summary."""

    algorithm: str = "manual"
    params: dict[str, object] = field(default_factory=dict)
    schema: Schema | None = None
    training: dict[str, object] = field(default_factory=dict)


class Vote(StrEnum):
    """How a rule set combines matching rules."""

    ONE = "one"  # one rule, one vote
    WEIGHTED = "weighted"  # each rule votes with its weight (or its correct count)
    DISTRIBUTION = "distribution"  # class counts of matching rules are summed
    BEST = "best"  # the matching rule with the largest weight (confidence) decides


@dataclass(frozen=True)
class DecisionList:
    """Ordered rules: the first matching rule decides; ``default`` decides the rest."""

    target: str
    classes: tuple[str, ...]
    rules: tuple[Rule, ...]
    default: Rule
    info: ModelInfo = field(default_factory=ModelInfo)

    kind = "decision_list"


@dataclass(frozen=True)
class RuleSet:
    """Unordered rules that vote; rows no rule matches get ``default`` or stay unclassified."""

    target: str
    classes: tuple[str, ...]
    rules: tuple[Rule, ...]
    default: Rule | None
    vote: Vote = Vote.ONE
    info: ModelInfo = field(default_factory=ModelInfo)

    kind = "rule_set"


Model = DecisionList | RuleSet


@dataclass(frozen=True, slots=True)
class Term:
    """``coefficient`` times a numeric column's value, or, with ``levels``, times 1 where a
    text column holds one of them and 0 where it holds another; a missing value counts as
    ``fill`` (the column's training mean, or the share of training rows in ``levels``)."""

    column: str
    coefficient: float
    fill: float
    levels: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Formula:
    """A number from a row: ``intercept`` plus its terms, kept within ``bounds`` (the least
    and greatest target its rule's training rows held, as Cubist bounds its predictions: a
    row far outside them — a typo of 58.9 for 5.89 — cannot send a formula to absurd
    values). A formula without terms is a constant."""

    intercept: float
    terms: tuple[Term, ...] = ()
    bounds: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        numbers = [self.intercept, *(x for t in self.terms for x in (t.coefficient, t.fill)), *(self.bounds or ())]
        if not all(isinstance(x, float) and math.isfinite(x) for x in numbers):
            raise ParamError("a formula's intercept, coefficients, fills and bounds must be finite numbers")
        if self.bounds is not None and not self.bounds[0] <= self.bounds[1]:
            raise ParamError(f"a formula's bounds must be (least, greatest), got {self.bounds}")


@dataclass(frozen=True, slots=True)
class NumberStats:
    """Training statistics of a rule that predicts a number: the rows it decided (by
    weight), their target's mean and standard deviation, and the formula's root mean
    squared error on them."""

    covered: int | float
    mean: float
    sd: float
    rmse: float


@dataclass(frozen=True, slots=True)
class NumberRule:
    """Conditions and the formula that predicts the target where they hold."""

    conditions: tuple[Condition, ...]
    formula: Formula
    stats: NumberStats | None = None


@dataclass(frozen=True)
class RuleRegression:
    """Rules that predict a number. ``ordered``: the first matching rule's formula decides
    (a decision list); otherwise the formulas of every matching rule are averaged. Rows no
    rule matches get ``default``'s."""

    target: str
    rules: tuple[NumberRule, ...]
    default: NumberRule
    ordered: bool = True
    info: ModelInfo = field(default_factory=ModelInfo)

    kind = "regression_rules"
    regression = True

    @property
    def classes(self) -> tuple[str, ...]:
        return ()


@dataclass(frozen=True, slots=True)
class NeighbourColumn:
    """A column the distance between two rows reads. A number: ``weight`` times the
    difference of the two values, each first kept within [``low``, ``high``] (a missing
    value read as ``fill``), plus 1 where one of them is missing and the other is not. Text:
    ``weight`` where the two values differ (a missing value is one more value)."""

    name: str
    weight: float
    numeric: bool
    fill: float = 0.0
    low: float = 0.0
    high: float = 0.0


@dataclass(frozen=True)
class Neighbours:
    """Stored training rows and each one's residual (its target minus the rules' prediction
    for it): a prediction adds the weighted mean residual of the ``k`` stored rows nearest
    to its row (weights 1 / (distance + 0.5); ties by stored order) and is kept within
    ``bounds``, after Quinlan's composite of instances and models (1993). ``values``: per
    column, the stored rows' values (None where missing)."""

    k: int
    columns: tuple[NeighbourColumn, ...]
    values: tuple[tuple[float | str | None, ...], ...]
    residuals: tuple[float, ...]
    bounds: tuple[float, float]

    def __post_init__(self) -> None:
        if not 1 <= self.k <= len(self.residuals):
            raise ParamError(f"a neighbour correction needs 1 <= k <= its {len(self.residuals)} stored rows")
        if len(self.values) != len(self.columns) or any(len(v) != len(self.residuals) for v in self.values):
            raise ParamError("a neighbour correction needs one value per stored row in each of its columns")
        numbers = [*self.residuals, *self.bounds, *(x for c in self.columns for x in (c.weight, c.fill, c.low, c.high))]
        if not all(isinstance(x, float) and math.isfinite(x) for x in numbers):
            raise ParamError("a neighbour correction's residuals, bounds and weights must be finite numbers")


@dataclass(frozen=True)
class Committee:
    """Lists of rules with formulas whose predictions are averaged, as Cubist's committees
    (Quinlan, RuleQuest): each list after the first was learned to make up for the one
    before it (towards ``2·y − its prediction``); each member's rules keep their own
    training statistics, counted against the target itself. With ``neighbours``, the mean
    is corrected by the nearest stored training rows (one list, or several)."""

    target: str
    members: tuple[RuleRegression, ...]
    info: ModelInfo = field(default_factory=ModelInfo)
    neighbours: Neighbours | None = None  # a correction by the nearest stored training rows

    kind = "committee"
    regression = True

    def __post_init__(self) -> None:
        if not self.members:
            raise ParamError("a committee needs at least one list of rules")

    @property
    def classes(self) -> tuple[str, ...]:
        return ()


def number_lists(model: RuleRegression | Committee) -> tuple[RuleRegression, ...]:
    """The lists of rules with formulas a model holds: a committee's members, or itself."""
    return model.members if isinstance(model, Committee) else (model,)


def interval_conditions(column: str, cuts: Cuts) -> list[Condition]:
    """One condition per interval of ``cuts``, in order (the first and last are open-ended)."""
    edges = cuts.edges
    if not edges:
        return [Condition(column, Op.PRESENT)]
    low_op, high_op = (Op.LE, Op.GT) if cuts.right_closed else (Op.LT, Op.GE)
    closed = Closed.RIGHT if cuts.right_closed else Closed.LEFT
    middle = [Condition(column, Op.INTERVAL, (edges[i - 1], edges[i]), closed) for i in range(1, len(edges))]
    return [Condition(column, low_op, edges[0]), *middle, Condition(column, high_op, edges[-1])]
