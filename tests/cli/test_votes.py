"""Tied votes in a rule set: the larger support of the matching rules wins, then the class
more frequent in training — in predict, in every export, and in the probabilities."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest

from rulecli import api
from rulecli.model.core import Condition, ModelInfo, Op, Rule, RuleSet, Vote
from tests.conftest import run_cli, slow_for

RULES = """\
RULESET VOTE one
CLASSES 'a', 'b', 'c'
IF x = 'u' THEN y = 'a'  (covers 10, correct 3)
IF z = 'v' THEN y = 'b'  (covers 10, correct 8)
IF w = 'q' THEN y = 'c'  (covers 5, correct 5)
ELSE y = 'c'
"""
ROWS = pl.DataFrame(
    {
        "x": ["u", "u", "u", "n", "u"],
        "z": ["v", "n", "v", "n", "n"],
        "w": ["n", "q", "q", "n", "n"],
        "y": ["b", "c", "b", "c", "a"],
    }
)


def _all_forms(model: object, frame: pl.DataFrame) -> dict[str, list[object]]:
    namespace: dict[str, object] = {}
    exec(api.export(model, "python"), namespace)
    polars_expr = eval(api.export(model, "polars"), {"pl": pl})
    con = duckdb.connect()
    con.register("t", frame.to_arrow())
    return {
        "predict": api.predict(model, frame)["prediction"].to_list(),
        "python": [namespace["predict"](row) for row in frame.to_dicts()],  # type: ignore[operator]
        "polars": frame.select(polars_expr.alias("p"))["p"].to_list(),
        "sql": [r[0] for r in con.sql(api.export(model, "sql", table="t").replace("SELECT *,", "SELECT")).fetchall()],
    }


def test_equal_votes_go_to_the_larger_support_through_the_command(tmp_path: Path):
    rules, data = tmp_path / "r.txt", tmp_path / "d.csv"
    rules.write_text(RULES)
    ROWS.write_csv(data)
    result = run_cli("predict", str(rules), str(data))
    assert result.code == 0, result.stderr
    # u+v: a (support 3) vs b (8) -> b; u+q: a (3) vs c (5) -> c; u+v+q: b (8) wins a three-way tie
    assert result.stdout.splitlines()[1:] == ["b", "c", "b", "c", "a"]


def test_every_export_breaks_ties_as_predict_does():
    model = api.loads_model(RULES)
    forms = _all_forms(model, ROWS)
    assert all(values == ["b", "c", "b", "c", "a"] for values in forms.values()), forms


def test_without_support_the_class_more_frequent_in_training_wins():
    rules = (Rule((Condition("x", Op.EQ, "u"),), "a"), Rule((Condition("z", Op.EQ, "v"),), "b"))
    info = ModelInfo(training={"class_counts": [2, 9]})
    model = RuleSet("y", ("a", "b"), rules, None, Vote.ONE, info)
    forms = _all_forms(model, ROWS.head(1))
    assert all(values == ["b"] for values in forms.values()), forms


@pytest.mark.parametrize("learner", slow_for(["aq", "reduct", "cn2", "ripper"]))
def test_probabilities_follow_the_vote(tmp_path: Path, learner: str):
    rng = np.random.default_rng(3)
    n = 400
    a = rng.choice(["p", "q", "r"], n)
    y = np.where(rng.random(n) < 0.7, a, "q")
    frame = pl.DataFrame({"a": a, "b": rng.choice(["s", "t"], n), "c": rng.normal(size=n).round(1), "y": y})
    data = tmp_path / "d.csv"
    frame.write_csv(data)
    extra = {"cn2": ["--unordered"], "ripper": ["--unordered"]}.get(learner, [])
    model = tmp_path / "m.json"
    assert run_cli(learner, str(data), "-y", "y", *extra, "-o", str(model), "-q").code == 0
    out = api.predict(api.load(model), data, proba=True)
    proba = out.select(pl.col("^proba_.*$")).to_numpy()
    classes = [c.removeprefix("proba_") for c in out.columns if c.startswith("proba_")]
    chosen = np.array([classes.index(p) for p in out["prediction"]])
    assert (proba[np.arange(len(chosen)), chosen] >= proba.max(axis=1) - 1e-12).all()


def test_an_empty_reduct_predicts_the_majority_and_says_so(tmp_path: Path):
    rng = np.random.default_rng(0)
    n = 500
    y = np.where(rng.random(n) < 0.95, "stay", "leave")  # the minority first in class order
    data = tmp_path / "d.csv"
    pl.DataFrame({"noise": rng.choice(["a", "b"], n), "y": y}).write_csv(data)
    model = tmp_path / "m.json"
    result = run_cli("reduct", str(data), "--discretize", "equal-width", "-o", str(model))
    assert result.code == 0, result.stderr
    assert "the reduct is empty" in result.stderr
    scored = run_cli("predict", str(model), str(data)).stdout.splitlines()[1:]
    assert set(scored) == {"stay"}


def test_a_rule_set_vote_grows_linearly_with_the_classes():
    # each class's tie test once repeated every score: K^3 copies of the rules' tests
    # (soybean, 19 classes, took 24 GB); the plan must grow with K, not K^3
    from rulecli.model.compile import predict_expr
    from rulecli.model.core import Condition, Op, Rule, RuleSet, Vote

    def plan_size(k: int) -> int:
        classes = tuple(f"c{i}" for i in range(k))
        rules = tuple(Rule((Condition("x", Op.EQ, f"v{i}"),), classes[i % k]) for i in range(40))
        return len(str(predict_expr(RuleSet("y", classes, rules, Rule((), "c0"), Vote.ONE))))

    assert plan_size(16) < 3 * plan_size(4)


def test_rule_set_exports_grow_linearly_with_the_classes():
    from rulecli import api
    from rulecli.model.core import Condition, Op, Rule, RuleSet, RuleStats, Vote

    def sizes(k: int) -> tuple[int, int]:
        classes = tuple(f"c{i}" for i in range(k))
        rules = tuple(Rule((Condition("x", Op.EQ, f"v{i}"),), classes[i % k], RuleStats(3, 2)) for i in range(40))
        model = RuleSet("y", classes, rules, Rule((), "c0"), Vote.ONE)
        return len(api.export(model, "sql")), len(api.export(model, "polars"))

    small, large = sizes(4), sizes(16)
    assert large[0] < 3 * small[0] and large[1] < 3 * small[1], (small, large)
