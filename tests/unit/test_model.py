"""The shared rule model: condition semantics, compiled prediction, text and JSON forms."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from rulecli.errors import ModelFormatError, ParamError
from rulecli.model.compile import (
    condition_expr,
    first_match_expr,
    predict_expr,
    prediction_frame,
    proba_exprs,
    rule_id_expr,
)
from rulecli.model.core import Closed, Condition, DecisionList, ModelInfo, Op, Rule, RuleSet, RuleStats, Vote
from rulecli.model.serde import dumps, loads
from rulecli.model.text import parse_text, render_text

FRAME = pl.DataFrame(
    {
        "x": [1.0, 2.0, 3.0, None, float("nan")],
        "c": ["a", "b", None, "a", "c"],
    }
)


def _eval(cond: Condition) -> list[bool]:
    return FRAME.select(condition_expr(cond)).to_series().to_list()


@pytest.mark.parametrize(
    ("cond", "expected"),
    [
        (Condition("c", Op.EQ, "a"), [True, False, False, True, False]),
        (Condition("c", Op.NE, "a"), [False, True, False, False, True]),
        (Condition("c", Op.IN, ("a", "c")), [True, False, False, True, True]),
        (Condition("c", Op.NOT_IN, ("a",)), [False, True, False, False, True]),
        (Condition("x", Op.LT, 2.0), [True, False, False, False, False]),
        (Condition("x", Op.LE, 2.0), [True, True, False, False, False]),
        (Condition("x", Op.GT, 2.0), [False, False, True, False, False]),
        (Condition("x", Op.GE, 2.0), [False, True, True, False, False]),
        (Condition("x", Op.INTERVAL, (1.0, 3.0), Closed.RIGHT), [False, True, True, False, False]),
        (Condition("x", Op.INTERVAL, (1.0, 3.0), Closed.LEFT), [True, True, False, False, False]),
        (Condition("x", Op.INTERVAL, (1.0, 3.0), Closed.BOTH), [True, True, True, False, False]),
        (Condition("x", Op.INTERVAL, (1.0, 3.0), Closed.NONE), [False, True, False, False, False]),
        (Condition("c", Op.MISSING), [False, False, True, False, False]),
        (Condition("c", Op.PRESENT), [True, True, False, True, True]),
    ],
)
def test_missing_never_satisfies_a_condition(cond, expected):
    # row 4 is NaN in x: NaN is not a number to compare (prediction_frame reads it as missing)
    got = _eval(cond)
    if cond.column == "x":
        assert got[:4] == expected[:4]
    else:
        assert got == expected


def test_nan_reads_as_missing_when_predicting():
    model = DecisionList("y", ("hi", "lo"), (Rule((Condition("x", Op.GT, 2.0),), "hi"),), Rule((), "lo"))
    out = prediction_frame(model, FRAME.lazy()).collect().to_series().to_list()
    assert out == ["lo", "lo", "hi", "lo", "lo"]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"column": "x", "op": Op.LT, "value": "a"},
        {"column": "x", "op": Op.IN, "value": ()},
        {"column": "x", "op": Op.MISSING, "value": 1.0},
        {"column": "x", "op": Op.INTERVAL, "value": (3.0, 1.0)},
        {"column": "x", "op": Op.EQ, "value": float("inf")},
    ],
)
def test_malformed_conditions_are_refused(kwargs):
    with pytest.raises(ParamError):
        Condition(**kwargs)


def _list_model() -> DecisionList:
    return DecisionList(
        "y",
        ("hi", "lo", "mid"),
        (
            Rule((Condition("x", Op.GE, 3.0),), "hi", RuleStats(4, 3, (3, 1, 0))),
            Rule((Condition("c", Op.EQ, "a"),), "lo", RuleStats(2, 2, (0, 2, 0))),
        ),
        Rule((), "mid", RuleStats(4, 2, (1, 1, 2))),
        ModelInfo(algorithm="test", params={"seed": 0}),
    )


def test_decision_list_first_match_wins():
    df = pl.DataFrame({"x": [5.0, 1.0, 5.0, 1.0], "c": ["a", "a", "b", None]})
    out = df.select(predict_expr(_list_model()), rule_id_expr(_list_model()))
    assert out.get_column("prediction").to_list() == ["hi", "lo", "hi", "mid"]
    assert out.get_column("rule").to_list() == ["1", "2", "1", "default"]


def test_decision_list_probabilities_are_rule_class_shares():
    df = pl.DataFrame({"x": [5.0, 1.0, 1.0], "c": ["a", "a", "b"]})
    probs = df.select(proba_exprs(_list_model())).rows()
    assert probs == [(0.75, 0.25, 0.0), (0.0, 1.0, 0.0), (0.25, 0.25, 0.5)]


def _set_model(vote: Vote, default: Rule | None) -> RuleSet:
    return RuleSet(
        "y",
        ("hi", "lo"),
        (
            Rule((Condition("x", Op.GE, 3.0),), "hi", RuleStats(3, 3, (3, 0)), weight=1.0),
            Rule((Condition("c", Op.EQ, "a"),), "lo", RuleStats(5, 4, (1, 4)), weight=0.5),
            Rule((Condition("c", Op.IN, ("a", "b")),), "lo", RuleStats(6, 4, (2, 4)), weight=0.4),
        ),
        default,
        vote,
    )


def test_rule_set_votes_one_weighted_distribution_and_unclassified():
    df = pl.DataFrame({"x": [5.0, 5.0, 1.0, 1.0], "c": ["a", "z", "b", "z"]})
    one = df.select(predict_expr(_set_model(Vote.ONE, None))).to_series().to_list()
    assert one == ["lo", "hi", "lo", None]  # row 1: 1 vote hi vs 2 votes lo
    weighted = df.select(predict_expr(_set_model(Vote.WEIGHTED, Rule((), "hi")))).to_series().to_list()
    assert weighted == ["hi", "hi", "lo", "hi"]  # row 1: 1.0 vs 0.9
    dist = df.select(predict_expr(_set_model(Vote.DISTRIBUTION, None))).to_series().to_list()
    assert dist == ["lo", "hi", "lo", None]  # row 1: hi 3+1+2=6, lo 0+4+4=8
    ids = df.select(rule_id_expr(_set_model(Vote.ONE, None))).to_series().to_list()
    assert ids == ["1,2,3", "1", "3", None]


def test_thousands_of_rules_compile_flat_without_overflowing():
    n = 5000
    rules = tuple(Rule((Condition("x", Op.EQ, float(i)),), "hit") for i in range(n))
    model = DecisionList("y", ("hit", "miss"), rules, Rule((), "miss"))
    df = pl.DataFrame({"x": [0.0, 4999.0, 5000.5]})
    assert df.select(predict_expr(model)).to_series().to_list() == ["hit", "hit", "miss"]
    ids = df.select(rule_id_expr(model)).to_series().to_list()
    assert ids == ["1", "5000", "default"]


TEXT = """\
# business rules kept in git
IF `odd name` in {'a', 'it''s'} AND x in [1, 2.5) THEN y = 'hi'  (covers 3, correct 2)
IF x is missing THEN y = 'lo'
IF c != 'b' AND x >= -1e3 THEN y = 'lo'
ELSE y = 'mid'
"""


def test_text_format_reads_and_renders_stably():
    model = parse_text(TEXT)
    assert isinstance(model, DecisionList)
    first = model.rules[0]
    assert first.conditions[0] == Condition("odd name", Op.IN, ("a", "it's"))
    assert first.conditions[1] == Condition("x", Op.INTERVAL, (1.0, 2.5), Closed.LEFT)
    assert first.stats == RuleStats(3, 2)
    rendered = render_text(model)
    assert render_text(parse_text(rendered)) == rendered
    assert "IF c != 'b' AND x >= -1000 THEN y = 'lo'" in rendered


def test_rule_set_text_header_and_weights():
    text = "RULESET VOTE weighted\nIF x > 1 THEN y = 'a'  (weight 0.75)\nIF TRUE THEN y = 'b'\n"
    model = parse_text(text)
    assert isinstance(model, RuleSet) and model.vote == Vote.WEIGHTED and model.default is None
    assert model.rules[0].weight == 0.75 and model.rules[1].conditions == ()
    assert render_text(model) == text


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("IF x = 'a' THEN y = 'b'\n", "must end with an ELSE"),
        ("IF x = 'a' THEM y = 'b'\nELSE y = 'c'\n", "<rules>:1:12: expected THEN"),
        ("IF x < 'a' THEN y = 'b'\nELSE y = 'c'\n", "<rules>:1:6: '<' compares with a number"),
        ("IF x = 'a' THEN y = 'b'\n\nELSE z = 'c'\n", "<rules>:3:1: every rule must predict the same column"),
        ("IF x in (2, 1] THEN y = 'b'\nELSE y = 'c'\n", "<rules>:1:9: interval low end"),
        ("IF x = 'a THEN y = 'b'\nELSE y = 'c'\n", "<rules>:1:22: unterminated quoted text"),
        ("ELSE y = 'c'\nIF x = 'a' THEN y = 'b'\n", "<rules>:2:1: nothing may follow the ELSE line"),
        ("WHEN x = 1\n", "<rules>:1:1: expected IF, ELSE"),
    ],
)
def test_text_syntax_errors_report_line_and_column(text, where):
    with pytest.raises(ModelFormatError, match=where.replace("(", r"\(").replace("]", r"\]")):
        parse_text(text)


def test_json_round_trip_is_byte_identical():
    text = dumps(_list_model())
    assert dumps(loads(text)) == text
    assert text.endswith("\n")
    body = json.loads(text)
    assert body["format"] == "rulecli-model" and body["format_version"] == 1


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(format_version=99), "newer than this rulecli reads"),
        (lambda d: d.update(format="other"), "not a rulecli model"),
        (
            lambda d: d["rules"][0]["conditions"][0].update(op="~="),
            r"rules\[0\]\.conditions\[0\]\.op: unknown operator",
        ),
        (lambda d: d["rules"][0].update(prediction="nope"), "'nope' is not one of the classes"),
        (lambda d: d["rules"][0]["stats"].update(class_counts=[1]), "expected 3 counts"),
        (lambda d: d.update(kind="hedge"), "unknown model kind"),
        (lambda d: d.update(kind="forest"), "missing field .features."),
        (lambda d: d["rules"][0]["conditions"][0].update(value="x"), "needs a number"),
    ],
)
def test_bad_model_files_give_clear_errors(mutate, message):
    body = json.loads(dumps(_list_model()))
    mutate(body)
    with pytest.raises(ModelFormatError, match=message):
        loads(json.dumps(body), "m.json")


def test_truncated_json_is_reported_as_corrupt():
    text = dumps(_list_model())
    with pytest.raises(ModelFormatError, match="truncated or corrupt"):
        loads(text[: len(text) // 2], "m.json")


def test_text_and_json_forms_predict_alike():
    model = _list_model()
    df = pl.DataFrame({"x": [5.0, 1.0, None, 3.0], "c": ["a", "a", "b", None]})
    from_text = parse_text(render_text(model))
    from_json = loads(dumps(model))
    expected = df.select(predict_expr(model)).to_series().to_list()
    assert df.select(predict_expr(from_text)).to_series().to_list() == expected
    assert df.select(predict_expr(from_json)).to_series().to_list() == expected


def test_or_missing_is_written_in_parentheses_and_read_either_way():
    grouped = "IF (age < 30.5 or missing) AND (sex in {'f'} or missing) THEN y = 'a'\nELSE y = 'b'\n"
    bare = "IF age < 30.5 or missing AND sex in {'f'} or missing THEN y = 'a'\nELSE y = 'b'\n"
    assert render_text(parse_text(bare)) == render_text(parse_text(grouped)) == grouped
    (rule,) = parse_text(grouped).rules
    assert [c.or_missing for c in rule.conditions] == [True, True]


def _forest_body_model():
    from rulecli.dataset import DataSpec, prepare_dataset
    from rulecli.learners.forest import ForestParams, fit_forest

    df = pl.DataFrame(
        {
            "x": [float(i % 7) if i % 5 else None for i in range(40)],
            "c": ["a", "b"] * 20,
            "y": ["p", "q", "q", "p"] * 10,
        }
    )
    return fit_forest(prepare_dataset(df, DataSpec(target="y")), ForestParams(trees=2, jobs=1))


def _forest_body() -> dict:
    return json.loads(dumps(_forest_body_model()))


@pytest.mark.parametrize(
    ("field", "index", "bad", "message"),
    [
        ("feature", -1, 1.5, r"trees\[1\]\.feature\[\d+\]: expected an integer, found 1\.5"),
        ("left", 0, True, r"trees\[1\]\.left\[0\]: expected an integer, found True"),
        ("left", 0, 2**70, r"trees\[1\]\.left\[0\]: expected an integer"),
        ("threshold", 0, "inf", r"trees\[1\]\.threshold\[0\]: expected a finite number, found 'inf'"),
        ("impurity", -1, True, r"trees\[1\]\.impurity\[\d+\]: expected a finite number, found True"),
        ("value", -1, [1, "2"], r"trees\[1\]\.value\[\d+\]: expected a finite number, found '2'"),
        ("value", -1, [1], r"trees\[1\]\.value\[\d+\]: expected a list of 2 numbers"),
        ("left_levels", -1, ["a", 3], r"trees\[1\]\.left_levels\[\d+\]: expected a list of text levels"),
        ("missing_left", 0, 0, r"trees\[1\]\.missing_left: expected true/false per node"),
    ],
)
def test_a_bad_entry_deep_in_a_forest_file_is_named(field, index, bad, message):
    """Arrays are converted at once; a bad one is still read entry by entry to name it,
    in a file laid out as rulecli writes it (each node array on a line of its own, parsed
    apart from the JSON) or on one line."""
    body = _forest_body()
    array = body["trees"][1][field]
    array[index % len(array)] = bad
    with pytest.raises(ModelFormatError, match=message):
        loads(json.dumps(body), "m.json")
    laid_out = json.dumps(body, indent=2)
    for key in ("feature", "threshold", "missing_left", "left", "right", "value", "left_levels", "right_levels"):
        for tree in body["trees"]:  # each array on one line, as dumps writes them
            one_line = json.dumps(tree[key], separators=(",", ":"))
            laid_out = laid_out.replace(json.dumps(tree[key], indent=2).replace("\n", "\n      "), one_line, 1)
    assert '"threshold": [' in laid_out and laid_out.count("\n") < 200
    with pytest.raises(ModelFormatError, match=message):
        loads(laid_out, "m.json")


def test_a_forest_file_reads_the_same_arrays_laid_out_or_on_one_line():
    # the node arrays on lines of their own are parsed apart from the JSON, in one pass per
    # key over every tree (a JSON parse made an object of each number: 441 MiB took 20 s)
    from rulecli.model.serde import _parsed, _set_aside

    text = dumps(_forest_body_model())
    arrays = _set_aside(text)[1]  # the file as written takes the quick path, for every numeric array
    assert len(arrays) == 2 * 11 and len(_parsed(arrays)) >= 2 * 9
    assert _set_aside(json.dumps(json.loads(text)))[1] == {}  # one line: the JSON path
    laid_out, one_line = loads(text, "a"), loads(json.dumps(json.loads(text)), "b")
    for a, b in zip(laid_out.trees, one_line.trees, strict=True):
        for name in ("feature", "threshold", "missing_left", "left", "right", "value", "n_samples", "impurity"):
            assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name
            assert getattr(a, name).dtype == getattr(b, name).dtype, name
    assert dumps(laid_out) == text


@pytest.mark.parametrize(
    "labels",
    [
        ("b", "b", "b"),  # one run, as RIPPER writes them
        ("a", "a", "b", "c", "b", "c", "c"),  # a run of the default's class before others
        ("c", "c"),  # every rule predicts what the default does
        ("a", "b", "a", "b", "a", "b", "a", "b"),
    ],
)
def test_a_decision_lists_prediction_by_runs_is_the_first_matching_rules(labels):
    """Prediction alone tests runs of one class together; it must name the class of
    the first rule that matches, as the first-match number does (proba, explain)."""
    rng = np.random.default_rng(len(labels))
    n = 2_000
    x = rng.normal(size=n)
    x[rng.random(n) < 0.1] = np.nan
    levels = pl.Series(["p", "q", "r", None], dtype=pl.String)
    frame = pl.DataFrame({"x": x, "c": levels.gather(rng.integers(0, 4, n))})
    tests = [
        Condition("x", Op.GT, 0.5),
        Condition("c", Op.EQ, "q"),
        Condition("x", Op.MISSING),
        Condition("x", Op.LT, -1.0),
    ]
    rules = tuple(
        Rule(
            (tests[i % 4],) if i != 4 else (),  # an empty rule matches every row that reaches it
            label,
        )
        for i, label in enumerate(labels)
    )
    model = DecisionList("y", ("a", "b", "c"), rules, Rule((), "c"))
    lf = frame.lazy()
    by_runs = lf.with_columns(predict_expr(model)).collect()["prediction"]
    by_number = lf.with_columns(predict_expr(model, first_match_expr(model))).collect()["prediction"]
    assert by_runs.to_list() == by_number.to_list()
    assert len(set(by_runs.to_list())) > 1 or set(labels) == {"c"}


def test_tree_arrays_are_written_as_json_writes_each_value():
    """The forest writer formats each distinct number once; the text is what ``json``
    makes of the plain values (whole counts as integers, impurities cut to 10 digits,
    NaN thresholds as null, +inf as "+inf")."""
    import json
    import math

    import rulecli
    from rulecli.model.serde import nodes_json
    from tests.conftest import SAMPLE

    def reference(values: np.ndarray, kind: str) -> object:
        if kind == "threshold":
            return [None if math.isnan(v) else "+inf" if v == math.inf else v for v in values.tolist()]
        if kind == "count":
            return [int(v) if v == math.floor(v) else v for v in values.ravel().tolist()]
        if kind == "short":
            return [v if v == 0 else float(f"{v:.10g}") for v in values.tolist()]
        return values.tolist()

    models = [
        rulecli.fit("forest", SAMPLE / "penguins.csv", target="species", trees=5),
        rulecli.fit("forest", SAMPLE / "penguins.csv", target="body_mass_g", trees=3),
        rulecli.fit("forest", SAMPLE / "labor.csv", target="class", trees=5),
    ]
    for model in models:
        for nodes, written in zip(model.trees, nodes_json(model.trees), strict=True):
            for key, kind in (("threshold", "threshold"), ("n_samples", "count"), ("impurity", "short")):
                assert json.loads(written[key]) == reference(getattr(nodes, key), kind)
                assert written[key] == json.dumps(reference(getattr(nodes, key), kind), separators=(",", ":"))
            value = nodes.value
            rows = value.tolist() if value.shape[1] == 1 else [reference(r, "count") for r in value]
            assert written["value"] == json.dumps(rows, separators=(",", ":"))
            assert written["improvement"] == json.dumps(reference(nodes.improvement, "short"), separators=(",", ":"))
