"""Compile models to Polars expressions, so prediction runs vectorised and streams.

Null semantics are decided here, once: a missing value never satisfies a condition
(only ``is missing`` matches it). Expressions are built flat — one
``when(rule).then(value)`` per rule joined by ``coalesce`` or summed — never as a
nested ``when/then`` chain, which overflows Polars' stack at a few thousand links (a
decision list's prediction chains its runs of one class, at most ``FAN_IN`` of them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import numpy as np
import polars as pl

from rulecli.errors import InputError, ModelFormatError, ParamError
from rulecli.model import neighbours, ops
from rulecli.model.core import (
    Closed,
    Committee,
    Condition,
    DecisionList,
    Formula,
    Model,
    Neighbours,
    Rule,
    RuleRegression,
    RuleSet,
    Vote,
    column_units,
)
from rulecli.model.ops import OPS, Shape, class_votes, is_numeric, rule_support, tie_order
from rulecli.model.text import render_conditions
from rulecli.model.tree import (
    Columns,
    Forest,
    Predictor,
    Tree,
    TreeModel,
    average_output,
    feature_kinds,
    leaf_rules,
    leaves_of,
    level_index,
    walkers,
)
from rulecli.schema import categorical_expr, col, normalize_missing, temporal_expr

PREDICTION = "prediction"
RULE = "rule"
RULE_TEXT = "rule_text"
DEFAULT_RULE = "default"
FIRST_MATCH = "__rulecli_first_match"
FIRES = "__rulecli_fires_"


def condition_expr(cond: Condition) -> pl.Expr:
    """Boolean expression for one condition; never null.

    Examples
    --------
    >>> from rulecli.model.core import Op
    >>> df = pl.DataFrame({"size": ["big", None, "small"]})
    >>> df.select(condition_expr(Condition("size", Op.EQ, "big"))).to_series().to_list()
    [True, False, False]
    """
    spec = OPS[cond.op]
    if spec.shape == Shape.MISSING:
        return getattr(col(cond.column), spec.polars)()
    numeric = is_numeric(cond)
    # NaN was read as missing when the frame was opened (normalize_missing); casting a
    # Float64 column is free, while another fill_nan here would copy it once per condition.
    x = col(cond.column).cast(pl.Float64) if numeric else categorical_expr(cond.column)
    value = cond.value
    if spec.shape == Shape.SET:
        assert isinstance(value, tuple)
        members = pl.Series(
            values=list(value) if numeric else [str(v) for v in value],
            dtype=pl.Float64 if numeric else pl.String,
        )
        # imploded in the plan: Series.implode() runs a query of its own per condition
        test = x.is_in(pl.lit(members).implode())
        expr = ~test if spec.negated else test
    elif spec.shape == Shape.INTERVAL:
        assert isinstance(value, tuple)
        low, high = value
        expr = x.is_between(low, high, closed=Closed(cond.closed).value)
    else:
        assert spec.apply is not None
        expr = spec.apply(x, pl.lit(value if numeric else str(value)))
    return expr.fill_null(cond.or_missing)


def rule_expr(rule: Rule) -> pl.Expr:
    """True where every condition of the rule holds (always true for the empty rule)."""
    if not rule.conditions:
        return pl.lit(True)
    return pl.all_horizontal([condition_expr(c) for c in rule.conditions])


def class_prior(model: Model) -> list[float] | None:
    counts = [0] * len(model.classes)
    rules = [*model.rules, *([model.default] if model.default is not None else [])]
    for rule in rules:
        if rule.stats is None or rule.stats.class_counts is None:
            return None
        counts = [a + b for a, b in zip(counts, rule.stats.class_counts, strict=True)]
    total = sum(counts)
    return [c / total for c in counts] if total else None


def rule_shares(rule: Rule, prior: list[float]) -> list[float]:
    if rule.probabilities is not None:
        return list(rule.probabilities)
    assert rule.stats is not None and rule.stats.class_counts is not None
    total = sum(rule.stats.class_counts)
    return [c / total for c in rule.stats.class_counts] if total else prior


# Each level combines at most this many expressions. Polars evaluates every input of a
# coalesce/sum before combining, so one flat level over many rules holds a column per rule;
# a tree of flat levels holds about FAN_IN * depth. Measured on 10M rows (Polars 2.1): a
# 209-rule list peaks at 191 MiB with the tree, 364 MiB flat; 1,000 rules 389 vs 1,505 MiB.
FAN_IN = 32


def _combine(exprs: list[pl.Expr], combine: Callable[[list[pl.Expr]], pl.Expr]) -> pl.Expr:
    """Combine many expressions through a shallow tree of flat ``combine`` calls."""
    while len(exprs) > FAN_IN:
        exprs = [combine(exprs[i : i + FAN_IN]) for i in range(0, len(exprs), FAN_IN)]
    return combine(exprs)


def first_match_expr(model: DecisionList) -> pl.Expr:
    """0-based number of the first matching rule; ``len(model.rules)`` means the default."""
    return _first_of([r.conditions for r in model.rules])


def _first_of(rules: list[tuple[Condition, ...]]) -> pl.Expr:
    firsts = [pl.when(rule_expr(Rule(c, ""))).then(pl.lit(i, dtype=pl.UInt32)) for i, c in enumerate(rules)]
    default = pl.lit(len(rules), dtype=pl.UInt32)
    return _combine([*firsts, default], pl.coalesce) if firsts else default


def formula_expr(formula: Formula) -> pl.Expr:
    """A formula's number per row (a missing input counts as the term's fill)."""
    expr = pl.lit(formula.intercept, dtype=pl.Float64)
    for term in formula.terms:
        if term.levels is None:
            x = col(term.column).cast(pl.Float64)
        else:
            levels = pl.lit(pl.Series(list(term.levels), dtype=pl.String)).implode()
            x = categorical_expr(term.column).is_in(levels).cast(pl.Float64)
        expr = expr + pl.lit(term.coefficient) * x.fill_null(term.fill)
    return expr if formula.bounds is None else expr.clip(*formula.bounds)


def committee_exprs(model: Committee, explain: bool = False) -> list[pl.Expr]:
    """The mean of the members' predictions (``prediction``) and, with ``explain``, each
    member's deciding rule as ``member/rule`` (``1/3,2/default``) and its text, joined."""
    parts = [number_exprs(member, explain) for member in model.members]
    prediction = _combine([p[0] for p in parts], pl.sum_horizontal) / float(len(parts))
    if model.neighbours is not None:
        prediction = _neighbour_corrected(model.neighbours, prediction)
    out = [prediction.alias(PREDICTION)]
    if not explain:
        return out
    rules = [pl.concat_str([pl.lit(f"{m}/"), p[1]]) for m, p in enumerate(parts, 1)]
    texts = [p[2] for p in parts]
    return [
        *out,
        _combine(rules, lambda group: pl.concat_str(group, separator=",")).alias(RULE),
        _combine(texts, lambda group: pl.concat_str(group, separator=" | ")).alias(RULE_TEXT),
    ]


def _neighbour_corrected(nb: Neighbours, prediction: pl.Expr) -> pl.Expr:
    """The rules' prediction corrected by the nearest stored rows, batch by batch."""
    names = [f"c{i}" for i in range(len(nb.columns))]
    stored = neighbours.stored_arrays(nb)  # once, for every batch

    def correct(rows: pl.Series) -> pl.Series:
        fields = {c.name: rows.struct.field(n) for c, n in zip(nb.columns, names, strict=True)}
        base = rows.struct.field("p").to_numpy().astype(np.float64)
        query = neighbours.query_arrays(nb, fields)
        return pl.Series(neighbours.corrected(nb, base, query, stored), dtype=pl.Float64)

    inputs = [prediction.alias("p"), *(col(c.name).alias(n) for c, n in zip(nb.columns, names, strict=True))]
    return pl.struct(inputs).map_batches(correct, return_dtype=pl.Float64, is_elementwise=True)


def number_exprs(model: RuleRegression, explain: bool = False) -> list[pl.Expr]:
    """The predicted number (``prediction``) and, with ``explain``, the deciding rule's
    number and text (``rule``, ``rule_text``; unordered rules: every matching rule's, as a
    rule set's). Ordered rules: the first matching rule's formula; unordered: the mean of the
    matching rules' formulas; rows no rule matches: the default's."""
    default = formula_expr(model.default.formula)
    tests = [rule_expr(Rule(r.conditions, "")) for r in model.rules]
    if model.ordered:
        firsts = [pl.when(t).then(formula_expr(r.formula)) for t, r in zip(tests, model.rules, strict=True)]
        prediction = _combine([*firsts, default], pl.coalesce)
    elif tests:
        sums = [
            pl.when(t).then(formula_expr(r.formula)).otherwise(0.0) for t, r in zip(tests, model.rules, strict=True)
        ]
        counts = [t.cast(pl.Float64) for t in tests]
        matched = _combine(counts, pl.sum_horizontal)
        prediction = pl.when(matched > 0).then(_combine(sums, pl.sum_horizontal) / matched).otherwise(default)
    else:
        prediction = default
    out = [prediction.alias(PREDICTION)]
    if not explain:
        return out
    texts = [render_conditions(r.conditions) for r in model.rules]
    if model.ordered:
        index = _first_of([r.conditions for r in model.rules])
        ids = [*(str(i) for i in range(1, len(tests) + 1)), DEFAULT_RULE]
        return [
            *out,
            _lookup(index, ids, pl.String()).alias(RULE),
            _lookup(index, [*texts, "ELSE"], pl.String()).alias(RULE_TEXT),
        ]
    matches = [pl.when(t).then(pl.lit(str(i))) for i, t in enumerate(tests, 1)]
    words = [pl.when(t).then(pl.lit(text)) for t, text in zip(tests, texts, strict=True)]
    decided = _combine(tests, pl.any_horizontal) if tests else pl.lit(False)

    def joined(parts: list[pl.Expr], separator: str) -> pl.Expr:
        return _combine(parts, lambda group: pl.concat_str(group, separator=separator, ignore_nulls=True))

    rule = (
        pl.when(decided).then(joined(matches, ",")).otherwise(pl.lit(DEFAULT_RULE)) if tests else pl.lit(DEFAULT_RULE)
    )
    text = pl.when(decided).then(joined(words, " | ")).otherwise(pl.lit("ELSE")) if tests else pl.lit("ELSE")
    return [*out, rule.alias(RULE), text.alias(RULE_TEXT)]


def _lookup(index: pl.Expr, values: list[object], dtype: pl.DataType) -> pl.Expr:
    """``values[index]`` per row.

    A gather from a literal Series streams in constant memory; ``replace_strict`` with a
    mapping held ~500 MiB more on 10M rows (measured with Polars 2.1).
    """
    return pl.lit(pl.Series(values, dtype=dtype)).gather(index)


def _by_rule(model: DecisionList, values: list[object], dtype: pl.DataType, index: pl.Expr | None) -> pl.Expr:
    """Look up a per-rule value (the default's last) by the first matching rule.

    ``index`` is a precomputed :func:`first_match_expr` column, so that several lookups
    (prediction, probabilities, explanation) evaluate the rules once.
    """
    return _lookup(first_match_expr(model) if index is None else index, values, dtype)


def predict_expr(model: Model, index: pl.Expr | None = None, fires: list[pl.Expr] | None = None) -> pl.Expr:
    """Predicted class (string); null only for a rule set row no rule matches and no default.

    ``fires``: a rule set's rules' tests, one per rule, where they were evaluated already
    (:func:`fires_frame`)."""
    if isinstance(model, DecisionList):
        if index is None:
            runs = _runs(model)
            if len(runs) <= FAN_IN:
                return _first_run(runs, model.default.prediction).alias(PREDICTION)
        labels = [r.prediction for r in (*model.rules, model.default)]
        return _by_rule(model, labels, pl.String(), index).alias(PREDICTION)
    return _vote_expr(model, fires).alias(PREDICTION)


T = TypeVar("T")
V = TypeVar("V")


def _runs(model: DecisionList) -> list[tuple[str, list[Rule]]]:
    return runs_of([(r, r.prediction) for r in model.rules], model.default.prediction)


def runs_of(rules: Sequence[tuple[T, V]], default: V) -> list[tuple[V, list[T]]]:
    """A decision list's rules (each with its prediction) in runs of one prediction, in
    order: the first run with a matching rule decides, whichever of its rules matched first.
    A last run that predicts what the default does decides nothing the default would not."""
    runs: list[tuple[V, list[T]]] = []
    for rule, value in rules:
        if runs and runs[-1][0] == value:
            runs[-1][1].append(rule)
        else:
            runs.append((value, [rule]))
    if runs and runs[-1][0] == default:
        runs.pop()
    return runs


def _first_run(runs: list[tuple[str, list[Rule]]], default: str) -> pl.Expr:
    """The prediction of the first run with a matching rule: which of a run's rules matched
    first does not change it. RIPPER's list is one run (every rule predicts the rarer
    class): one test of any rule instead of a first-match number per row, 0.76 s -> 0.64 s
    on 10M rows and 20 rules."""
    otherwise = pl.lit(default, dtype=pl.String)
    if not runs:
        return otherwise
    tests = [_combine([rule_expr(r) for r in rules], pl.any_horizontal) for _, rules in runs]
    labels = [pl.lit(label, dtype=pl.String) for label, _ in runs]
    chain = pl.when(tests[0]).then(labels[0])
    for test, label in zip(tests[1:], labels[1:], strict=True):
        chain = chain.when(test).then(label)
    return chain.otherwise(otherwise)


def fires_frame(model: Model, lf: pl.LazyFrame) -> tuple[pl.DataFrame, list[str]]:
    """``lf``'s rows with each rule's test beside them as a boolean column, and those
    columns' names: several versions of a rule set made of its rules (truncated to fewer)
    are then predicted (``predict_expr(..., fires=[pl.col(name), ...])``) without testing
    the rules again."""
    names = [f"{FIRES}{i}" for i in range(len(model.rules))]
    tests = [rule_expr(r).alias(name) for r, name in zip(model.rules, names, strict=True)]
    return model_input(model, lf).with_columns(tests).collect(), names


def _per_class(
    model: RuleSet, fires: list[pl.Expr], values: Callable[[Rule], list[float]], combine: Callable[..., pl.Expr]
) -> list[pl.Expr]:
    """Per class: ``combine`` of what each matching rule gives it (``values(rule)[k]``)."""
    per_class: list[list[pl.Expr]] = [[] for _ in model.classes]
    for fire, rule in zip(fires, model.rules, strict=True):
        for k, value in enumerate(values(rule)):
            if value:
                per_class[k].append(pl.when(fire).then(pl.lit(value)).otherwise(0.0))
    return [_combine(exprs, combine) if exprs else pl.lit(0.0) for exprs in per_class]


def _scores(model: RuleSet, vote: Vote, fires: list[pl.Expr]) -> list[pl.Expr]:
    """One score expression per class: the votes of the matching rules (``fires``: each rule's test)."""
    combine = pl.max_horizontal if vote == Vote.BEST else pl.sum_horizontal
    return _per_class(model, fires, lambda rule: class_votes(rule, model.classes, vote), combine)


def _supports(model: RuleSet, fires: list[pl.Expr]) -> list[pl.Expr]:
    """Per class: the summed training support of the matching rules that predict it."""

    def own(rule: Rule) -> list[float]:
        return [rule_support(rule) if c == rule.prediction else 0.0 for c in model.classes]

    return _per_class(model, fires, own, pl.sum_horizontal)


def _winner(model: RuleSet, scores: list[pl.Expr], fires: list[pl.Expr]) -> pl.Expr:
    """The index of the class with the largest score; ties go to the larger support of the
    matching rules, then to the class more frequent in training (:func:`ops.tie_order`)."""
    supports = _supports(model, fires)
    k = len(model.classes)
    rank = np.empty(k, dtype=np.int64)
    rank[tie_order(model.classes, model.info.training)] = np.arange(k)

    # Each score and support enters once and the choice is made on arrays: written as
    # expressions, every class's tie test repeats every score, K^3 copies of the rules'
    # tests (19 classes and 500 rules took 24 GB)
    def pick(both: pl.Series) -> pl.Series:
        values = both.struct.unnest().to_numpy().astype(np.float64)
        score, support = values[:, :k], values[:, k:]
        tied = score == score.max(axis=1, keepdims=True)
        top = np.where(tied, support, -1.0).max(axis=1, keepdims=True)
        chosen = np.where(tied & (support == top), rank[None, :], k)
        return pl.Series(chosen.argmin(axis=1).astype(np.uint32))

    fields = [s.alias(f"s{i}") for i, s in enumerate(scores)] + [u.alias(f"u{i}") for i, u in enumerate(supports)]
    return pl.struct(fields).map_batches(pick, return_dtype=pl.UInt32, is_elementwise=True)


def _vote_expr(model: RuleSet, fires: list[pl.Expr] | None = None) -> pl.Expr:
    if fires is None:
        fires = [rule_expr(r) for r in model.rules]  # each rule's test, built once for every use below
    winner = _lookup(_winner(model, _scores(model, model.vote, fires), fires), list(model.classes), pl.String())
    fallback = pl.lit(model.default.prediction if model.default else None, dtype=pl.String)
    return pl.when(decided_expr(model, fires)).then(winner).otherwise(fallback)


def proba_exprs(model: Model, index: pl.Expr | None = None) -> list[pl.Expr]:
    """One ``proba_<class>`` expression per class: a decision list's deciding rule's training
    class shares; a rule set's votes for each class as shares of all its votes (rows no rule
    matches: the default rule's class shares)."""
    prior = class_prior(model)
    if prior is None:
        raise ModelFormatError(
            "this model has no class probabilities (its rules carry no class counts; "
            "text rule files never do, use the JSON model)"
        )
    names = [f"proba_{c}" for c in model.classes]
    if isinstance(model, DecisionList):
        shares = [rule_shares(r, prior) for r in (*model.rules, model.default)]
        return [
            _by_rule(model, [row[k] for row in shares], pl.Float64(), index).alias(name) for k, name in enumerate(names)
        ]
    # the model's own vote, so that the predicted class always has the largest probability
    scores = _scores(model, model.vote, [rule_expr(r) for r in model.rules])
    total = _combine(scores, pl.sum_horizontal)
    fallback = rule_shares(model.default, prior) if model.default is not None else None
    return [
        pl.when(total > 0)
        .then(score / total)
        .otherwise(pl.lit(fallback[k] if fallback else None, dtype=pl.Float64))
        .alias(name)
        for k, (score, name) in enumerate(zip(scores, names, strict=True))
    ]


def rule_id_expr(model: Model, index: pl.Expr | None = None) -> pl.Expr:
    """Which rule decided each row: its 1-based number, ``default``, or (sets) all matches."""
    if isinstance(model, DecisionList):
        ids = [*(str(i) for i in range(1, len(model.rules) + 1)), DEFAULT_RULE]
        return _by_rule(model, ids, pl.String(), index).alias(RULE)
    matches = [pl.when(rule_expr(r)).then(pl.lit(str(i))) for i, r in enumerate(model.rules, 1)]
    joined = (
        _combine(matches, lambda group: pl.concat_str(group, separator=",", ignore_nulls=True))
        if matches
        else pl.lit("")
    )
    fallback = pl.lit(DEFAULT_RULE if model.default is not None else None, dtype=pl.String)
    return pl.when(decided_expr(model)).then(joined).otherwise(fallback).alias(RULE)


def rule_text_expr(model: Model, index: pl.Expr | None = None) -> pl.Expr:
    """The text of the rule(s) that decided each row."""
    if isinstance(model, DecisionList):
        texts = [*(render_conditions(r.conditions) for r in model.rules), "ELSE"]
        return _by_rule(model, texts, pl.String(), index).alias(RULE_TEXT)
    lookup = {str(i): render_conditions(r.conditions) for i, r in enumerate(model.rules, 1)}
    lookup[DEFAULT_RULE] = "ELSE"
    return (
        rule_id_expr(model)
        .str.split(",")
        .list.eval(pl.element().replace_strict(lookup, default=None, return_dtype=pl.String))
        .list.join(" | ")
        .alias(RULE_TEXT)
    )


def decided_expr(model: Model, fires: list[pl.Expr] | None = None) -> pl.Expr:
    """True where a non-default rule decided the row (the numerator of coverage)."""
    if not model.rules:
        return pl.lit(False)
    return _combine(fires if fires is not None else [rule_expr(r) for r in model.rules], pl.any_horizontal)


WALK = "__rulecli_walk"
# Rows per NumPy pass when walking trees: bounds the memory of a batch's feature matrices.
_WALK_ROWS = 1 << 16


def walk_expr(model: TreeModel, explain: bool = False) -> pl.Expr:
    """A struct of ``prediction``, ``proba_<class>`` (classes) and, for a single tree with
    ``explain``, the leaf's ``rule`` number and ``rule_text``, from walking the trees.

    Trees are walked over NumPy batches inside the streaming plan rather than compiled to
    one expression per leaf: a deep tree has thousands of leaves of dozens of conditions,
    which Polars evaluates slowly (a 11,000-leaf tree: 99 s and 2.5 GB on 1M rows).
    """
    kinds = feature_kinds(model)
    used = list(kinds)
    index = {name: j for j, name in enumerate(model.features)}
    levels = level_index(model.info.schema, model.features)
    # batches hold only the features the trees split on (a wide model may use few of its columns)
    row_of = np.full(len(model.features), -1, dtype=np.int64)
    row_of[[index[name] for name in used]] = np.arange(len(used))
    prepared = walkers(model, row_of)
    # each categorical feature's levels as an Enum in code order: a level's place is its code
    enums = [pl.Enum(list(levels[index[name]])) for name in used]
    regression = model.regression
    names = [f"proba_{c}" for c in model.classes]
    class_names = pl.Series(model.classes, dtype=pl.String)
    fields: dict[str, pl.DataType] = {PREDICTION: pl.Float64() if regression else pl.String()}
    fields |= {n: pl.Float64() for n in names}
    explained = explain and isinstance(model, Tree)
    if explained:
        assert isinstance(model, Tree)
        rules = leaf_rules(model.nodes, model.features, column_units(model))
        leaf_ids = np.array([leaf for leaf, _ in rules])
        rule_texts = pl.Series([render_conditions(c) for _, c in rules], dtype=pl.String)
        fields |= {RULE: pl.String(), RULE_TEXT: pl.String()}

    def score(frame: pl.DataFrame) -> pl.DataFrame:
        batch = _walk_input(frame, used, kinds, enums)
        out = average_output(prepared, batch)
        columns: dict[str, object] = {}
        if regression:
            columns[PREDICTION] = out[:, 0]
        else:
            # gathered by Polars: an array of Python strings took four times as long (0.055 s a million rows)
            columns[PREDICTION] = class_names.gather(out.argmax(axis=1))
            columns |= {name: out[:, k] for k, name in enumerate(names)}
        if explained:
            rank = np.searchsorted(leaf_ids, leaves_of(prepared.trees[0], batch))
            columns[RULE] = pl.Series(rank + 1).cast(pl.String)
            columns[RULE_TEXT] = rule_texts.gather(rank)
        return pl.DataFrame(columns, schema=fields)

    def batches(s: pl.Series) -> pl.Series:
        frame = s.struct.unnest()
        parts = [score(frame.slice(i, _WALK_ROWS)) for i in range(0, frame.height, _WALK_ROWS)]
        result = pl.concat(parts) if parts else pl.DataFrame(schema=fields)
        return result.to_struct(WALK)

    source = pl.struct([col(u) for u in used]) if used else pl.struct(pl.lit(0).alias("_"))
    return source.map_batches(batches, return_dtype=pl.Struct(fields), is_elementwise=True).alias(WALK)


def _walk_input(frame: pl.DataFrame, used: list[str], kinds: dict[str, bool], enums: list[pl.Enum]) -> Columns:
    """A batch of rows as tree-walk input: numbers (NaN missing) and level codes (-1 unseen or
    missing), a feature per row, each matrix made in one select (NaN reads as missing, as a
    null does)."""
    n = frame.height
    if not used:
        return Columns(np.empty((0, n)), np.empty((0, n), dtype=np.int32), n)
    numbers = frame.select(
        (col(name).cast(pl.Float64) if kinds[name] else pl.repeat(np.nan, n, dtype=pl.Float64)).alias(str(k))
        for k, name in enumerate(used)
    )
    codes = frame.select(
        (
            pl.repeat(-1, n, dtype=pl.Int32)
            if kinds[name]
            # replace_strict on a dict of levels to codes took twice as long (0.084 -> 0.045 s
            # for 4 columns of 1M rows)
            else col(name).cast(pl.String).cast(enums[k], strict=False).to_physical().cast(pl.Int32).fill_null(-1)
        ).alias(str(k))
        for k, name in enumerate(used)
    )
    # a frame's array is column-major: transposed, each feature's values lie together
    return Columns(numbers.to_numpy().T, codes.to_numpy().T, n)


def prediction_frame(
    model: Predictor,
    lf: pl.LazyFrame,
    *,
    keep: tuple[str, ...] = (),
    proba: bool = False,
    explain: bool = False,
) -> pl.LazyFrame:
    """The lazy plan of ``predict``: kept columns, prediction, probabilities, explanation."""
    # a kept date column is written as read, not as the number the model compares
    raw = {name: RAW + name for name in keep if name in column_units(model)}
    lf = model_input(model, lf.with_columns(col(name).alias(copy) for name, copy in raw.items()))
    kept = [col(raw[name]).alias(name) if name in raw else col(name) for name in keep]
    if isinstance(model, Tree | Forest):
        if proba and model.regression:
            raise ParamError("`proba` needs classes; this model predicts a number")
        if explain and isinstance(model, Forest):
            raise ParamError("`explain` names one deciding rule; a forest has none (a single tree does)")
        fields = [PREDICTION, *([f"proba_{c}" for c in model.classes] if proba else [])]
        fields += [RULE, RULE_TEXT] if explain else []
        scored = lf.with_columns(walk_expr(model, explain))
        return scored.select([*kept, *(pl.col(WALK).struct.field(f) for f in fields)])
    if isinstance(model, RuleRegression | Committee):
        if proba:
            raise ParamError("`proba` needs classes; this model predicts a number")
        exprs = number_exprs(model, explain) if isinstance(model, RuleRegression) else committee_exprs(model, explain)
        return lf.with_columns(exprs).select([*kept, *(e.meta.output_name() for e in exprs)])
    index = None
    if isinstance(model, DecisionList) and (proba or explain):
        lf = lf.with_columns(first_match_expr(model).alias(FIRST_MATCH))
        index = pl.col(FIRST_MATCH)
    exprs = [predict_expr(model, index)]
    if proba:
        exprs.extend(proba_exprs(model, index))
    if explain:
        exprs.extend([rule_id_expr(model, index), rule_text_expr(model, index)])
    names = [e.meta.output_name() for e in exprs]
    # with_columns broadcasts a model without rules (a literal) to every row; select would not
    return lf.with_columns(exprs).select([*kept, *names])


RAW = "\x00raw "  # a kept date column's copy as read (no column of a file is named so)


def model_input(model: Predictor, lf: pl.LazyFrame) -> pl.LazyFrame:
    """The rows as the model compares them: NaN read as missing, and date columns (text,
    Date or Datetime) as the days or seconds their rules count; a column already numbers
    (a training table's) is left as it is."""
    lf = normalize_missing(lf)
    units = column_units(model)
    if not units:
        return lf
    schema = lf.collect_schema()
    dated = [
        temporal_expr(name, unit).alias(name)
        for name, unit in units.items()
        if name in schema and not schema[name].is_numeric()
    ]
    return lf.with_columns(dated) if dated else lf


def column_kinds(model: Predictor) -> dict[str, bool]:
    """Each column the model reads, with True where it is compared as a number."""
    if isinstance(model, Tree | Forest):
        return feature_kinds(model)
    if isinstance(model, RuleRegression | Committee):
        return ops.rule_kinds(model)
    return ops.column_kinds(c for rule in model.rules for c in rule.conditions)


def read_dtypes_for(model: Predictor) -> dict[str, pl.DataType]:
    """CSV dtypes that make the data read the way the model compares it.

    The target is left to inference, exactly as training read it.
    """
    dates = column_units(model)
    return {
        name: pl.Float64() if numeric and name not in dates else pl.String()
        for name, numeric in column_kinds(model).items()
    }


def check_data(model: Predictor, columns: Mapping[str, pl.DataType], source: str) -> None:
    """Fail with one clear line when the data lacks a column the model needs or has the wrong type."""
    kinds = column_kinds(model)
    missing = [c for c in kinds if c not in columns]
    if missing:
        raise InputError(
            f"{source}: column '{missing[0]}' is needed by the model but missing from the data "
            f"(data has: {', '.join(columns)})"
        )
    dates = column_units(model)
    for name, numeric in kinds.items():
        dtype = columns[name]
        if name in dates and (dtype.is_temporal() or dtype == pl.String):
            continue  # read as dates: a value in no date form is missing
        if numeric and not (dtype.is_numeric() or dtype == pl.Null):
            raise InputError(
                f"{source}: column '{name}' must be numeric (the model compares it with numbers) but is {dtype}"
            )
