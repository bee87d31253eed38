"""Rough sets: a hand-checked decision table, reducts that preserve discernibility and are
minimal, the discernibility-matrix enumeration against brute force, rules and voting."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.errors import ParamError
from rulecli.learners.reduct import ReductParams, _Granules, fit_reduct
from rulecli.model.compile import prediction_frame
from rulecli.model.serde import dumps, loads
from rulecli.search.roughset import DecisionTable, RoughSets

# Pawlak's flu table: p2 and p5 agree on every attribute but not on flu (inconsistent).
FLU = pl.DataFrame(
    {
        "headache": ["no", "yes", "yes", "no", "yes", "no"],
        "muscle_pain": ["yes", "no", "yes", "yes", "no", "yes"],
        "temperature": ["high", "high", "very_high", "normal", "high", "very_high"],
        "flu": ["yes", "yes", "yes", "no", "no", "yes"],
    }
)


def _flu(**params: object):
    ds = prepare_dataset(FLU, DataSpec(target="flu"))
    return ds, fit_reduct(ds, ReductParams(**params))  # type: ignore[arg-type]


def test_hand_checked_flu_table():
    _, model = _flu(all_reducts=True)
    t = model.info.training
    # POS = {p1, p3, p4, p6}: γ = 4/6; p2 and p5 form the boundary of both classes
    assert t["gamma"] == pytest.approx(4 / 6)
    assert not t["consistent"] and t["inconsistent_rows"] == 2
    assert t["core"] == ["temperature"]
    assert t["reducts"] == [["headache", "temperature"], ["muscle_pain", "temperature"]]
    assert t["approximations"] == {
        "no": {"lower": 1, "upper": 3, "boundary": 2},
        "yes": {"lower": 3, "upper": 5, "boundary": 2},
    }


def test_elimination_follows_the_given_order():
    _, given = _flu()
    assert given.info.training["reducts"] == [["muscle_pain", "temperature"]]  # headache is dropped first
    ds = prepare_dataset(FLU.select("muscle_pain", "headache", "temperature", "flu"), DataSpec(target="flu"))
    reordered = fit_reduct(ds, ReductParams())
    assert reordered.info.training["reducts"] == [["headache", "temperature"]]


def test_certain_and_possible_rules_from_the_flu_table():
    _, model = _flu()
    by_text = {(str([c.value for c in r.conditions]), r.prediction): r.stats for r in model.rules}
    # temperature = normal -> no and = very_high -> yes are certain and shortened to one descriptor
    assert by_text[("['normal']", "no")].correct == by_text[("['normal']", "no")].covered == 1
    assert by_text[("['very_high']", "yes")].covered == 2
    # the boundary description (muscle_pain = no, temperature = high) gives a possible rule per decision
    assert by_text[("['no', 'high']", "yes")].correct == 1 and by_text[("['no', 'high']", "no")].correct == 1
    assert dumps(loads(dumps(model))) == dumps(model)


def _is_reduct(rs: RoughSets, attributes: list[int]) -> bool:
    full = rs.gamma(rs.all_attributes)
    keeps = rs.gamma(frozenset(attributes)) == full
    minimal = all(rs.gamma(frozenset(attributes) - {a}) < full for a in attributes)
    return keeps and minimal


def _brute_force_reducts(rs: RoughSets) -> list[list[int]]:
    d = rs.table.n_attributes
    full = rs.gamma(rs.all_attributes)
    found: list[list[int]] = []
    for size in range(d + 1):
        for subset in itertools.combinations(range(d), size):
            if any(set(r) <= set(subset) for r in found):
                continue
            if rs.gamma(frozenset(subset)) == full:
                found.append(list(subset))
    return found


@pytest.mark.parametrize("seed", range(15))
def test_every_reduct_preserves_discernibility_and_is_minimal(seed: int):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(5, 60)), int(rng.integers(2, 7))
    codes = rng.integers(0, rng.integers(2, 4), size=(n, d)).astype(np.int32)
    y = (codes[:, 0] + (codes[:, 1] if d > 1 else 0) + (rng.random(n) < 0.1)) % 2
    rs = RoughSets(DecisionTable(tuple(f"a{j}" for j in range(d)), codes, y.astype(np.int64), 2))
    orders = [list(range(d)), list(reversed(range(d))), rng.permutation(d).tolist()]
    for order in orders:
        assert _is_reduct(rs, rs.eliminate(order))
        assert _is_reduct(rs, rs.quick_reduct(order))
    everything = rs.all_reducts()
    assert sorted(everything) == sorted(_brute_force_reducts(rs))
    assert all(_is_reduct(rs, r) for r in everything)
    core = set(rs.core())
    if rs.gamma(rs.all_attributes) == 1.0:
        # for a consistent table the core is exactly what every reduct shares
        assert core == set.intersection(*(set(r) for r in everything))


def test_gamma_is_a_group_by_count():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, size=(200, 4)).astype(np.int32)
    y = rng.integers(0, 2, 200)
    rs = RoughSets(DecisionTable(("a", "b", "c", "d"), codes, y, 2))
    for subset in [(0,), (1, 2), (0, 1, 3)]:
        groups: dict[tuple[int, ...], set[int]] = {}
        for row, label in zip(codes[:, list(subset)].tolist(), y.tolist(), strict=True):
            groups.setdefault(tuple(row), set()).add(label)
        positive = sum(1 for row in codes[:, list(subset)].tolist() if len(groups[tuple(row)]) == 1)
        assert rs.gamma(frozenset(subset)) == pytest.approx(positive / 200)


def test_numeric_attributes_are_discretised_and_rules_predict():
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 10, 120)
    df = pl.DataFrame({"x": x, "c": rng.choice(["p", "q"], 120), "y": np.where(x > 5, "hi", "lo")})
    ds = prepare_dataset(df, DataSpec(target="y"))
    model = fit_reduct(ds, ReductParams())
    assert model.info.training["reducts"] == [["x"]] and model.info.training["gamma"] == 1.0
    assert model.info.schema.feature("x").cuts is not None
    predicted = prediction_frame(model, df.lazy()).collect().get_column("prediction")
    assert (predicted == df.get_column("y")).all()
    unmatched = fit_reduct(ds, ReductParams(default="none"))
    assert unmatched.default is None


def test_too_many_attributes_for_all_reducts_is_refused():
    codes = np.zeros((3, 25), dtype=np.int32)
    rs = RoughSets(DecisionTable(tuple(f"a{j}" for j in range(25)), codes, np.array([0, 1, 0]), 2))
    with pytest.raises(ParamError, match="`n_reducts`"):
        rs.all_reducts()


def test_several_random_orders_pool_their_rules():
    ds = prepare_dataset(FLU, DataSpec(target="flu"))
    pooled = fit_reduct(ds, ReductParams(n_reducts=8, seed=1))
    assert len(pooled.info.training["reducts"]) == 2
    assert dumps(pooled) == dumps(fit_reduct(ds, ReductParams(n_reducts=8, seed=1)))


def _naive_shortened(granules: _Granules, g: int, cls: int, min_accuracy: float) -> tuple[list[int], list[int]]:
    """The definition: drop each descriptor in order while the rule stays accurate enough."""
    description = granules.descriptions[g]
    kept, counts = list(range(granules.descriptions.shape[1])), granules.counts[g]
    for position in range(granules.descriptions.shape[1]):
        trial = [p for p in kept if p != position]
        mask = (granules.descriptions[:, trial] == description[trial]).all(axis=1)
        trial_counts = granules.counts[mask].sum(axis=0)
        if trial_counts[cls] >= min_accuracy * trial_counts.sum() - 1e-9:
            kept, counts = trial, trial_counts
    return kept, counts.tolist()


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 200),
    st.integers(1, 9),
    st.integers(2, 4),
    st.sampled_from([1.0, 0.9, 0.6]),
    st.integers(0, 2**32 - 1),
)
def test_bitset_shortening_equals_the_definition(m: int, width: int, levels: int, min_accuracy: float, seed: int):
    rng = np.random.default_rng(seed)
    descriptions = np.unique(rng.integers(0, levels, size=(m, width)), axis=0)
    counts = rng.integers(0, 3, size=(descriptions.shape[0], 2)) * (rng.random((descriptions.shape[0], 2)) < 0.7)
    counts[counts.sum(axis=1) == 0, 0] = 1
    granules = _Granules(list(range(width)), descriptions, counts)
    certain = np.flatnonzero((counts > 0).sum(axis=1) == 1)
    assume(certain.size > 0)
    for g in certain[:10].tolist():
        cls = int(np.flatnonzero(counts[g])[0])
        kept, found = granules.shortened(g, cls, min_accuracy)
        assert (kept, found.tolist()) == _naive_shortened(granules, g, cls, min_accuracy)


def test_variable_precision_approximations_by_hand():
    # one granule of 4 rows, 3 of them yes: inside yes at β = 0.75, not at β = 0.8; it
    # meets no only while 1/4 > 1 − β
    table = DecisionTable(
        ("a",), np.array([[0], [0], [0], [0], [1], [2]], dtype=np.int32), np.array([1, 1, 1, 0, 0, 1]), 2
    )
    pawlak, loose, strict = RoughSets(table), RoughSets(table, 0.75), RoughSets(table, 0.8)
    assert pawlak.gamma((0,)) == pytest.approx(2 / 6)
    assert loose.gamma((0,)) == pytest.approx(1.0)
    assert strict.gamma((0,)) == pytest.approx(2 / 6)
    assert loose.approximations() == {
        0: {"lower": 1, "upper": 1, "boundary": 0},
        1: {"lower": 5, "upper": 5, "boundary": 0},
    }
    assert strict.approximations() == {
        0: {"lower": 1, "upper": 5, "boundary": 4},
        1: {"lower": 1, "upper": 5, "boundary": 4},
    }
    assert pawlak.approximations() == strict.approximations()
    # the empty set is positive only when the majority decision holds β of all rows
    assert RoughSets(table, 0.66).gamma(()) == 1.0 and loose.gamma(()) == 0.0


def test_a_beta_certain_description_gives_one_rule():
    frame = pl.DataFrame({"a": ["p"] * 4 + ["q", "r"] * 3, "d": ["yes", "yes", "yes", "no"] + ["no", "yes"] * 3})
    ds = prepare_dataset(frame, DataSpec(target="d"))
    pawlak = fit_reduct(ds, ReductParams(precision=1.0, min_share=0.0, majority_rules="keep"))
    loose = fit_reduct(ds, ReductParams(precision=0.75, min_share=0.0, majority_rules="keep"))
    assert sorted((r.conditions[0].value, r.prediction) for r in pawlak.rules) == [
        ("p", "no"),
        ("p", "yes"),
        ("q", "no"),
        ("r", "yes"),
    ]
    assert sorted((r.conditions[0].value, r.prediction) for r in loose.rules) == [
        ("p", "yes"),
        ("q", "no"),
        ("r", "yes"),
    ]
    assert loose.info.params["precision"] == 0.75
