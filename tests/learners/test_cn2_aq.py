"""CN2 and AQ: hand-checkable searches, the significance test, covering, voting and caps."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.errors import ParamError
from rulecli.learners.aq import AQParams, fit_aq
from rulecli.learners.cn2 import CN2Params, _lrs, fit_cn2
from rulecli.metrics import confusion_report, rule_reports, scored_frame
from rulecli.model.core import Closed, Condition, DecisionList, Op, RuleSet, Vote
from rulecli.model.serde import dumps
from tests.conftest import SAMPLE


def _conjunction() -> pl.DataFrame:
    # class 'a' exactly when c = 'u' and d = 'p'; each feature alone is only half right
    c = ["u", "u", "v", "v"] * 8
    d = ["p", "q", "p", "q"] * 8
    cls = ["a" if (ci, di) == ("u", "p") else "b" for ci, di in zip(c, d, strict=True)]
    return pl.DataFrame({"c": c, "d": d, "cls": cls})


def test_cn2_by_hand_pure_ties_go_to_the_larger_rule_and_covered_rows_leave():
    # Pure complexes all have entropy 0: 'c = v' (16 rows of b) beats 'c = u AND d = p'
    # (8 rows of a) by support. Once its rows are gone, 'd = p' alone is pure for a.
    model = fit_cn2(prepare_dataset(_conjunction(), DataSpec()), CN2Params())
    assert isinstance(model, DecisionList)
    assert [(r.conditions, r.prediction, r.stats.covered) for r in model.rules] == [
        ((Condition("c", Op.EQ, "v"),), "b", 16),
        ((Condition("d", Op.EQ, "p"),), "a", 8),
    ]
    assert model.default.prediction == "b" and model.default.stats.covered == 8


def test_likelihood_ratio_statistic_by_hand():
    counts = np.array([[8, 2]])
    prior = np.array([0.5, 0.5])
    expected = 2 * (8 * math.log(8 / 5) + 2 * math.log(2 / 5))
    assert _lrs(counts, prior)[0] == pytest.approx(expected)


def test_cn2_significance_test_keeps_noise_out():
    rng = np.random.default_rng(4)
    df = pl.DataFrame(
        {"f": rng.choice(["a", "b", "c", "d"], 200), "g": rng.normal(size=200), "cls": rng.choice(["x", "y"], 200)}
    )
    ds = prepare_dataset(df, DataSpec())
    strict = fit_cn2(ds, CN2Params(alpha=0.01))
    loose = fit_cn2(ds, CN2Params(alpha=1.0))
    assert len(strict.rules) < len(loose.rules)


def test_cn2_ordered_rules_cover_what_they_claim_and_respect_caps():
    df = pl.read_csv(SAMPLE / "penguins.csv")
    ds = prepare_dataset(df, DataSpec(target="species"))
    model = fit_cn2(ds, CN2Params(min_support=5, max_rule_length=2))
    assert all(r.stats.covered >= 5 for r in model.rules)
    assert all(len(r.conditions) <= 2 for r in model.rules)
    recount = rule_reports(model, df.lazy(), pl.col("species"))
    assert [(r.n_covered, r.n_correct) for r in recount] == [
        (r.stats.covered, r.stats.correct) for r in (*model.rules, model.default)
    ]
    assert dumps(model) == dumps(fit_cn2(ds, CN2Params(min_support=5, max_rule_length=2)))


def test_cn2_unordered_learns_each_class_and_sums_distributions():
    df = pl.read_csv(SAMPLE / "penguins.csv")
    ds = prepare_dataset(df, DataSpec(target="species"))
    model = fit_cn2(ds, CN2Params(ordered=False))
    assert isinstance(model, RuleSet) and model.vote == Vote.DISTRIBUTION
    assert {r.prediction for r in model.rules} == set(ds.classes)
    report = confusion_report(scored_frame(model, df.lazy(), pl.col("species")).collect(), model.classes)
    assert report.as_dict()["accuracy"] > 0.9
    best = fit_cn2(ds, CN2Params(ordered=False, vote=Vote.BEST))
    assert best.vote == Vote.BEST and all(r.weight is not None for r in best.rules)


def test_aq_intervals_end_midway_between_seed_and_counterexample():
    df = pl.DataFrame({"x": [float(i) for i in range(20)], "cls": ["a"] * 10 + ["b"] * 10})
    model = fit_aq(prepare_dataset(df, DataSpec()), AQParams(min_share=0.0, majority_rules="keep"))
    for rule in model.rules:
        (cond,) = rule.conditions
        assert (cond.value * 2) % 1 == 0  # halfway between two integers
        if rule.prediction == "a":
            assert cond.op == Op.LE and cond.value < 10
        else:
            assert cond.op == Op.GE and cond.value > 9
    covered = set()
    for rule in model.rules:
        value = rule.conditions[0].value
        covered |= {i for i in range(20) if (i <= value if rule.prediction == "a" else i >= value)}
    assert covered == set(range(20))


def test_aq_rules_are_consistent_within_max_error():
    df = _conjunction()
    model = fit_aq(prepare_dataset(df, DataSpec()), AQParams(max_error=0.0))
    for rule in model.rules:
        assert rule.stats.correct == rule.stats.covered
    ds = prepare_dataset(df, DataSpec())
    report = confusion_report(scored_frame(model, ds.frame.lazy(), pl.col("cls")).collect(), model.classes)
    assert report.as_dict()["accuracy"] == 1.0


def test_aq_internal_disjunction_and_interval_selectors():
    df = pl.DataFrame(
        {
            "colour": ["red", "green", "blue", "red", "green", "blue"] * 3,
            "size": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] * 3,
            "cls": ["p", "p", "n", "n", "n", "n"] * 3,
        }
    )
    model = fit_aq(prepare_dataset(df, DataSpec()), AQParams(max_error=0.0, seed=2))
    ops = {c.op for r in model.rules for c in r.conditions}
    assert ops <= {Op.EQ, Op.IN, Op.LE, Op.GE, Op.INTERVAL, Op.PRESENT}
    for rule in model.rules:
        assert rule.stats.correct == rule.stats.covered
        for cond in rule.conditions:
            if cond.op == Op.INTERVAL:
                assert cond.closed == Closed.BOTH


@pytest.mark.slow  # aq is the slowest learner (tests.conftest.SLOWEST)
def test_aq_cross_validation_in_workers_learns_the_same_rules(monkeypatch):
    # the error bound is chosen by fits that move to worker processes once they take long;
    # wherever they ran, the choice and the model file are the same
    import rulecli.learners.aq as aq

    rng = np.random.default_rng(5)
    n = 150
    x, z = rng.normal(size=n), rng.choice(["u", "v", "w"], n)
    y = np.where((x > 0) ^ (rng.random(n) < 0.25), "p", "q")
    ds = prepare_dataset(pl.DataFrame({"x": x, "z": z, "y": y}), DataSpec(target="y"))
    here = dumps(fit_aq(ds, AQParams(jobs=1)))
    started = []
    real = aq.worker_map

    def spy(*args, **kwargs):
        started.append(args[1])  # the fits sent to workers
        return real(*args, **kwargs)

    monkeypatch.setattr(aq, "PARALLEL_AFTER", 0.0)
    monkeypatch.setattr(aq, "worker_map", spy)
    assert dumps(fit_aq(ds, AQParams(jobs=2))) == here
    assert len(started) == 1 and len(started[0]) == len(aq.ERROR_GRID) * 3


def test_aq_unclassified_rows_are_counted_when_there_is_no_default():
    df = pl.DataFrame({"c": ["u", "v", "w"] * 4, "y": ["a", "b", "b"] * 4})
    model = fit_aq(prepare_dataset(df, DataSpec()), AQParams(default="none", vote="support"))
    assert model.default is None and model.vote == Vote.WEIGHTED
    unseen = pl.DataFrame({"c": ["u", "zzz", None], "y": ["a", "b", "b"]})
    report = confusion_report(scored_frame(model, unseen.lazy(), pl.col("y")).collect(), model.classes)
    assert report.n_unclassified == 2


@pytest.mark.parametrize(
    ("make", "option"),
    [
        (lambda: CN2Params(beam_width=0), "beam_width"),
        (lambda: CN2Params(alpha=0.0), "alpha"),
        (lambda: CN2Params(quality="gini"), "quality"),
        (lambda: AQParams(max_error=1.0), "max_error"),
        (lambda: AQParams(vote="sum"), "vote"),
        (lambda: AQParams(default="first"), "default"),
    ],
)
def test_bad_parameters(make, option):
    with pytest.raises(ParamError, match=option):
        make()


def test_aq_says_in_its_training_summary_when_max_rules_cut_its_search():
    ds = prepare_dataset(pl.read_csv(SAMPLE / "penguins.csv"), DataSpec(target="species"))
    cut = fit_aq(ds, AQParams(max_rules=1, max_error=0.05, min_share=0.0, majority_rules="keep"))
    assert cut.info.training["search_cut"] == "stopped after 1 rules with rows left uncovered (`max_rules`)"
    assert "search_cut" not in fit_aq(ds, AQParams(max_error=0.05, min_share=0.0, majority_rules="keep")).info.training


@pytest.mark.slow  # aq is the slowest learner (tests.conftest.SLOWEST)
def test_aq_learns_a_long_table_from_a_sample_and_counts_its_rules_on_every_row():
    # AQ's time grows with the square of the rows: beyond learn_rows it learns from a hashed sample
    rng = np.random.default_rng(3)
    x = rng.random(3000)
    df = pl.DataFrame({"x": x, "y": np.where((x > 0.5) ^ (rng.random(3000) < 0.1), "a", "b")})
    ds = prepare_dataset(df, DataSpec())
    model = fit_aq(ds, AQParams(learn_rows=600, max_error=0.1))
    sample = model.info.training["sample"]
    assert sample["rows"] == 600 and sample["of_rows"] == 3000
    assert model.info.training["rows"] == 3000
    from rulecli.counting.encoded import Encoded

    every_row = Encoded.from_dataset(ds)
    covered = [int(every_row.rule_mask(rule.conditions).sum()) for rule in model.rules]
    assert [rule.stats.covered for rule in model.rules] == covered and sum(covered) > 1000
    assert fit_aq(ds, AQParams(learn_rows=0, max_error=0.1, min_share=0.0)).info.training.get("sample") is None


def test_a_sample_to_learn_from_is_not_the_tuning_sample_again():
    # drawn with the run's seed, the 2,000-row tuning sample of a 10,000-row sample of 100,000
    # rows kept all 10,000 (every row below the sample's hash bound is below the tuning's)
    from rulecli.search.rule_stats import learning_sample
    from rulecli.search.tuning import TUNE_ROWS, cv_splits

    df = pl.DataFrame({"x": np.arange(100_000) % 7, "y": np.where(np.arange(100_000) % 3 == 0, "a", "b")})
    drawn = learning_sample(prepare_dataset(df, DataSpec()), 10_000, 0)
    assert drawn is not None and drawn[0].n_rows == drawn[1].n_rows == 10_000
    sample = drawn[0]
    assert not set(sample.ids.tolist()) & set(drawn[1].ids.tolist())
    chosen_on = cv_splits(sample, 0)
    assert chosen_on is not None and chosen_on[1] < 1.2 * TUNE_ROWS


def test_cn2_tries_a_long_features_thresholds_at_its_rows_quantiles():
    from rulecli.search.selectors import MAX_THRESHOLDS, QUANTILES, spread

    short = np.cumsum(np.ones(MAX_THRESHOLDS))
    assert spread(short) == slice(None)  # every value, as before
    rows = np.random.default_rng(0).integers(1, 20, size=(10 * MAX_THRESHOLDS, 2))
    below = np.cumsum(rows.sum(axis=1))
    picks = spread(below)
    assert isinstance(picks, np.ndarray) and picks.size == QUANTILES and picks[-1] == below.size - 1
    assert np.all(np.diff(picks) > 0)
    # each threshold tried is the first at or past its share of the rows
    shares = below[picks] / below[-1]
    assert np.all(np.diff(below[picks]) <= 2 * below[-1] / QUANTILES + 40)
    assert shares[0] >= 1 / QUANTILES - 1e-12 and shares[0] < 2 / QUANTILES
