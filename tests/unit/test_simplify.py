"""Simplified rules predict exactly what the rules they replace predicted."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rulecli import api
from rulecli.model.compile import prediction_frame
from rulecli.model.core import Closed, Condition, DecisionList, Op, Rule, RuleSet, Vote
from rulecli.model.simplify import _implies, _reachable, simplify, simplify_conditions
from rulecli.model.text import render_conditions
from tests.conftest import SAMPLE

rng = np.random.default_rng(0)
N = 300
FRAME = pl.DataFrame(
    {
        "x": [None if m else float(v) for m, v in zip(rng.random(N) < 0.1, rng.integers(0, 10, N), strict=True)],
        "c": [
            None if m else str(v) for m, v in zip(rng.random(N) < 0.1, rng.choice(["a", "b", "c", "d"], N), strict=True)
        ],
    },
    schema={"x": pl.Float64, "c": pl.String},
)
LEVELS = ["a", "b", "c", "d"]
number = st.integers(0, 10).map(float)
numeric_test = st.one_of(
    st.builds(
        lambda op, v, m: Condition("x", op, v, or_missing=m),
        st.sampled_from([Op.LT, Op.LE, Op.GT, Op.GE]),
        number,
        st.booleans(),
    ),
    st.builds(
        lambda a, b, closed: Condition("x", Op.INTERVAL, (min(a, b), max(a, b)), closed),
        number,
        number,
        st.sampled_from(list(Closed)),
    ),
)
categorical_test = st.one_of(
    st.builds(lambda v, m: Condition("c", Op.EQ, v, or_missing=m), st.sampled_from(LEVELS), st.booleans()),
    st.builds(
        lambda vs, m: Condition("c", Op.IN, tuple(sorted(vs)), or_missing=m),
        st.sets(st.sampled_from(LEVELS), min_size=1),
        st.booleans(),
    ),
    st.builds(lambda v: Condition("c", Op.NE, v), st.sampled_from(LEVELS)),
    st.just(Condition("c", Op.PRESENT)),
)
rule = st.builds(
    lambda conds, label: Rule(tuple(conds), label),
    st.lists(st.one_of(numeric_test, categorical_test), min_size=0, max_size=5),
    st.sampled_from(["p", "q"]),
)


def _predictions(model) -> list:
    return prediction_frame(model, FRAME.lazy()).collect()["prediction"].to_list()


@given(rules=st.lists(rule, min_size=1, max_size=6))
def test_simplified_decision_lists_and_rule_sets_predict_the_same(rules):
    listed = DecisionList("y", ("p", "q"), tuple(rules), Rule((), "q"))
    voting = RuleSet("y", ("p", "q"), tuple(rules), Rule((), "q"), Vote.ONE)
    for model in (listed, voting):
        simpler = simplify(model)
        assert _predictions(simpler) == _predictions(model), render_conditions(rules[0].conditions)
        assert simplify(simpler) == simpler, "simplifying twice changes nothing more"


def test_bounds_merge_into_the_tightest_test_and_sets_intersect():
    merged = simplify_conditions(
        (
            Condition("d", Op.GE, 27.0),
            Condition("c", Op.IN, ("a", "b")),
            Condition("d", Op.GE, 45.0),
            Condition("c", Op.EQ, "b"),
        )
    )
    assert render_conditions(merged) == "d >= 45 AND c = 'b'"
    interval = simplify_conditions((Condition("d", Op.GE, 2.0), Condition("d", Op.LT, 5.0)))
    assert render_conditions(interval) == "d in [2, 5)"
    assert simplify_conditions((Condition("d", Op.GT, 5.0), Condition("d", Op.LT, 2.0))) == (
        Condition("d", Op.GT, 5.0),
        Condition("d", Op.LT, 2.0),
    ), "a contradiction stays as written"


def test_a_rule_an_earlier_rule_always_catches_is_dropped_from_a_list():
    general = Rule((Condition("x", Op.GE, 3.0),), "p")
    specific = Rule((Condition("x", Op.GE, 5.0), Condition("c", Op.EQ, "a")), "q")
    other = Rule((Condition("x", Op.LT, 3.0),), "q")
    model = DecisionList("y", ("p", "q"), (general, specific, other), Rule((), "q"))
    assert simplify(model).rules == (general, other)
    assert _predictions(simplify(model)) == _predictions(model)


@given(rules=st.lists(rule, min_size=1, max_size=12))
def test_a_rule_is_dropped_exactly_when_an_earlier_kept_rule_implies_it(rules):
    # the definition, pair by pair; _reachable compares only rules whose columns allow it
    expected: list[Rule] = []
    for r in rules:
        if not any(_implies(r.conditions, earlier.conditions) for earlier in expected):
            expected.append(r)
    assert _reachable(rules) == expected


@pytest.mark.parametrize("learner", ["ripper", "cn2"])
@pytest.mark.parametrize("dataset", ["labor", "penguins", "house"])
def test_learned_rules_test_each_column_once_and_predict_as_their_expanded_form(learner: str, dataset: str):
    path = SAMPLE / f"{dataset}.csv"
    target = {"labor": "class", "penguins": "species", "house": "value"}[dataset]
    model = api.fit(learner, str(path), target=target)
    data = api.read_table(str(path))
    for r in model.rules:
        assert len({c.column for c in r.conditions}) == len(r.conditions), r
    # the same rules written redundantly (intervals as two bounds, every test twice) predict alike
    expanded = type(model)(**{**model.__dict__, "rules": tuple(_expand(r) for r in model.rules)})
    assert api.predict(expanded, data)["prediction"].to_list() == api.predict(model, data)["prediction"].to_list()
    assert simplify(expanded).rules == model.rules


def _expand(r: Rule) -> Rule:
    out = []
    for c in r.conditions:
        if c.op == Op.INTERVAL:
            low, high = c.value  # type: ignore[misc]
            with_low, with_high = c.closed in (Closed.LEFT, Closed.BOTH), c.closed in (Closed.RIGHT, Closed.BOTH)
            out += [
                Condition(c.column, Op.GE if with_low else Op.GT, low),
                Condition(c.column, Op.LE if with_high else Op.LT, high),
            ]
        else:
            out += [c, c]
    return Rule(tuple(out), r.prediction, r.stats, r.weight, r.probabilities)
