"""Metrics against hand counts."""

from __future__ import annotations

import polars as pl
import pytest

from rulecli.metrics import confusion_report, rule_reports, scored_frame
from rulecli.model.core import Condition, DecisionList, Op, Rule, RuleSet, Vote
from rulecli.stats import chi2_independence, chi2_sf

MODEL = DecisionList(
    "y",
    ("a", "b"),
    (Rule((Condition("x", Op.EQ, "p"),), "a"), Rule((Condition("x", Op.EQ, "q"),), "b")),
    Rule((), "a"),
)
DATA = pl.DataFrame({"x": ["p", "p", "p", "q", "q", "r", "r", "p"], "y": ["a", "a", "b", "b", "a", "b", "a", "a"]})


def test_confusion_and_headline_metrics():
    df = scored_frame(MODEL, DATA.lazy(), pl.col("y")).collect()
    report = confusion_report(df, MODEL.classes)
    assert report.confusion.tolist() == [[4, 1, 0], [2, 1, 0]]
    m = report.as_dict()
    assert m["accuracy"] == pytest.approx(5 / 8)
    assert m["balanced_accuracy"] == pytest.approx((4 / 5 + 1 / 3) / 2)
    p_a, r_a = 4 / 6, 4 / 5
    p_b, r_b = 1 / 2, 1 / 3
    f_a, f_b = 2 * p_a * r_a / (p_a + r_a), 2 * p_b * r_b / (p_b + r_b)
    assert m["macro_f1"] == pytest.approx((f_a + f_b) / 2)
    pe = (5 * 6 + 3 * 2) / 64
    assert m["kappa"] == pytest.approx((5 / 8 - pe) / (1 - pe))
    assert m["coverage"] == pytest.approx(6 / 8)


def test_unseen_true_labels_and_unclassified_rows_are_counted():
    rs = RuleSet("y", ("a", "b"), (Rule((Condition("x", Op.EQ, "p"),), "a"),), None, Vote.ONE)
    data = pl.DataFrame({"x": ["p", "z"], "y": ["c", "a"]})
    report = confusion_report(scored_frame(rs, data.lazy(), pl.col("y")).collect(), rs.classes)
    assert report.labels == ("a", "b", "c")
    assert report.n_unclassified == 1
    assert report.as_dict()["accuracy"] == 0.0


def test_rule_reports_count_n_a_n_ab_n_b():
    reports = {r.rule: r for r in rule_reports(MODEL, DATA.lazy(), pl.col("y"))}
    first = reports["1"]
    assert (first.n_covered, first.n_correct, first.n_class) == (4, 3, 5)
    assert reports["default"].n_covered == 2 and reports["default"].n_correct == 1
    d = first.as_dict(8)
    assert d["coverage"] == 0.5 and d["class_support"] == 0.6 and d["accuracy"] == 0.75


def test_chi2_survival_function_known_values():
    assert chi2_sf(3.841458820694124, 1) == pytest.approx(0.05, abs=1e-9)
    assert chi2_sf(11.070497693516351, 5) == pytest.approx(0.05, abs=1e-9)
    assert chi2_sf(0.5, 3) == pytest.approx(0.918891411, abs=1e-8)
    statistic, dof, p = chi2_independence(pl.DataFrame({"a": [10, 0], "b": [0, 10]}).to_numpy())
    assert (round(statistic, 6), dof) == (20.0, 1)
    assert p == pytest.approx(7.744e-06, rel=1e-3)
