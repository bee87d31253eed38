"""Property tests on random small tables: learning, prediction and the model forms agree."""

from __future__ import annotations

import math

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.errors import InputError
from rulecli.learners.oner import OneRParams, fit_oner
from rulecli.metrics import rule_reports
from rulecli.model.compile import predict_expr
from rulecli.model.core import Closed, Condition, DecisionList, Op, Rule
from rulecli.model.serde import dumps, loads
from rulecli.model.text import parse_text, render_text


@st.composite
def tables(draw: st.DrawFn) -> pl.DataFrame:
    n = draw(st.integers(2, 40))
    n_classes = draw(st.integers(2, 4))
    cls = draw(st.lists(st.sampled_from("abcd"[:n_classes]), min_size=n, max_size=n))
    columns: dict[str, list[object]] = {}
    for i in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            values = st.one_of(st.none(), st.floats(-100, 100, allow_nan=False).map(lambda v: round(v, 1)))
        else:
            values = st.one_of(st.none(), st.sampled_from(["x", "y", "z", "it's", "a b"]))
        columns[f"f{i}"] = draw(st.lists(values, min_size=n, max_size=n))
    columns["cls"] = cls
    return pl.DataFrame(columns, strict=False)


PARAMS = st.builds(
    OneRParams,
    min_bucket=st.integers(1, 8),
    discretize=st.sampled_from(["min-bucket", "equal-width", "equal-frequency", "mdlp"]),
    bins=st.integers(1, 6),
    ties=st.sampled_from(["first", "chi2"]),
)


def reference_predict(model: DecisionList, row: dict[str, object]) -> str:
    """A plain-Python evaluator of decision lists, independent of the Polars compiler."""

    def holds(c: Condition) -> bool:
        v = row.get(c.column)
        if c.op == Op.MISSING:
            return v is None
        if c.op == Op.PRESENT:
            return v is not None
        if v is None:
            return False
        if c.op == Op.EQ:
            return str(v) == c.value if isinstance(c.value, str) else v == c.value
        if c.op == Op.INTERVAL:
            low, high = c.value
            left = v >= low if c.closed in (Closed.LEFT, Closed.BOTH) else v > low
            right = v <= high if c.closed in (Closed.RIGHT, Closed.BOTH) else v < high
            return left and right
        return {Op.LT: v < c.value, Op.LE: v <= c.value, Op.GT: v > c.value, Op.GE: v >= c.value}[c.op]

    for rule in model.rules:
        if all(holds(c) for c in rule.conditions):
            return rule.prediction
    return model.default.prediction


@given(tables(), PARAMS)
def test_oner_predictions_match_a_reference_and_every_model_form(df: pl.DataFrame, params: OneRParams):
    try:
        ds = prepare_dataset(df, DataSpec())
    except InputError:
        return  # single class or no usable feature: refused, as it should be
    model = fit_oner(ds, params)
    polars_predictions = df.select(predict_expr(model)).to_series().to_list()
    reference = [reference_predict(model, row) for row in df.iter_rows(named=True)]
    assert polars_predictions == reference
    for other in (loads(dumps(model)), parse_text(render_text(model))):
        assert df.select(predict_expr(other)).to_series().to_list() == reference
    assert dumps(loads(dumps(model))) == dumps(model)


@given(tables(), PARAMS)
def test_stored_rule_statistics_equal_a_recount(df: pl.DataFrame, params: OneRParams):
    try:
        ds = prepare_dataset(df, DataSpec())
    except InputError:
        return
    model = fit_oner(ds, params)
    recount = rule_reports(model, ds.frame.lazy(), pl.col("cls"))
    stored = [(r.stats.covered, r.stats.correct) for r in (*model.rules, model.default)]
    assert [(r.n_covered, r.n_correct) for r in recount] == stored
    assert sum(r.stats.covered for r in model.rules) == ds.n_rows


@given(
    st.lists(
        st.tuples(
            st.text(min_size=1, max_size=8),
            st.sampled_from([Op.EQ, Op.NE, Op.LT, Op.GE, Op.IN, Op.MISSING, Op.INTERVAL]),
            st.floats(-1e6, 1e6, allow_nan=False),
            st.text(max_size=6),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_text_round_trip_for_any_names_and_values(parts):
    conditions = []
    for name, op, number, text in parts:
        if op in (Op.LT, Op.GE):
            conditions.append(Condition(name, op, number))
        elif op == Op.INTERVAL:
            conditions.append(Condition(name, op, (number, number + 1.0 if math.isfinite(number + 1.0) else number)))
        elif op == Op.IN:
            conditions.append(Condition(name, op, (text, "other")))
        elif op == Op.MISSING:
            conditions.append(Condition(name, op))
        else:
            conditions.append(Condition(name, op, text))
    model = DecisionList("target col", ("p", "q"), (Rule(tuple(conditions), "p"),), Rule((), "q"))
    assert parse_text(render_text(model)) == model
