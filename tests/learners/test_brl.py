"""BRL: exact pattern mining, the posterior against a direct calculation, MCMC that
recovers a known rule list, reproducibility."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest

from rulecli.counting import bits
from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.learners.brl import BRLParams, Posterior, _items, evaluate, fit_brl, gelman_rubin
from rulecli.model.compile import prediction_frame
from rulecli.model.serde import dumps, loads
from rulecli.search.patterns import Items, mine


@pytest.mark.parametrize("seed", range(8))
def test_mining_equals_a_brute_force_count(seed: int):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(20, 120)), int(rng.integers(2, 5))
    levels = rng.integers(2, 4, size=d)
    codes = np.stack([rng.integers(0, levels[j], size=n) for j in range(d)], axis=1)
    feature, masks, labels = [], [], []
    for j in range(d):
        for v in range(levels[j]):
            feature.append(j)
            masks.append(bits.pack(codes[:, j] == v))
            labels.append((j, v))
    items = Items(np.array(feature), np.stack(masks))
    min_count, max_length = int(rng.integers(1, n // 3 + 2)), int(rng.integers(1, 4))
    mined = mine(items, min_count, max_length)
    got = {tuple(labels[i] for i in p): int(s) for p, s in zip(mined.items, mined.support, strict=True)}
    expected = {}
    for length in range(1, max_length + 1):
        for feats in itertools.combinations(range(d), length):
            for values in itertools.product(*(range(levels[j]) for j in feats)):
                support = int(np.all(codes[:, list(feats)] == values, axis=1).sum())
                if support >= min_count:
                    expected[tuple(zip(feats, values, strict=True))] = support
    assert got == expected
    for p, b in zip(mined.items, mined.bits, strict=True):
        rows = np.all([codes[:, labels[i][0]] == labels[i][1] for i in p], axis=0)
        assert np.array_equal(bits.indices(b, n), np.flatnonzero(rows))


def _tiny():
    df = pl.DataFrame(
        {
            "a": ["x", "x", "y", "y", "y", "x", "y", "x"],
            "b": ["p", "q", "p", "q", "p", "q", "q", "p"],
            "c": ["no", "yes", "no", "yes", "yes", "yes", "no", "no"],
        }
    )
    return prepare_dataset(df, DataSpec(target="c"))


def test_posterior_matches_a_direct_calculation():
    ds = _tiny()
    params = BRLParams(min_support=0.25, max_length=2, lam=2.0, eta=1.5, alpha=0.7)
    table = _items(ds, params)
    patterns = mine(table.items, 2, 2)
    post = Posterior(patterns, ds.y, 2, params)
    rule_of = {tuple(str(table.conditions[i].value) for i in p): r for r, p in enumerate(patterns.items)}
    chosen = [rule_of[("x", "q")], rule_of[("p",)]]
    state = evaluate(post, chosen)
    a = ds.frame.get_column("a").to_list()
    b = ds.frame.get_column("b").to_list()
    y = ds.y.tolist()
    first = [i for i in range(8) if a[i] == "x" and b[i] == "q"]
    second = [i for i in range(8) if b[i] == "p" and i not in first]
    rest = [i for i in range(8) if i not in first and i not in second]
    alpha = 0.7
    likelihood = 0.0
    for group in (first, second, rest):
        n_k = [sum(1 for i in group if y[i] == k) for k in range(2)]
        likelihood += math.lgamma(2 * alpha) - math.lgamma(2 * alpha + len(group))
        likelihood += sum(math.lgamma(alpha + c) - math.lgamma(alpha) for c in n_k)
    assert state.log_likelihood == pytest.approx(likelihood, abs=1e-9)
    # prior: truncated Poisson(λ) on m, truncated Poisson(η) on each cardinality, uniform rule
    n_rules = patterns.size
    per_card = {c: int((patterns.cardinality == c).sum()) for c in (1, 2)}
    z = sum(2.0**k / math.factorial(k) for k in range(n_rules + 1))
    prior = math.log(2.0**2 / math.factorial(2) / z)
    eta_w = {c: 1.5**c / math.factorial(c) for c in (1, 2)}
    prior += math.log(eta_w[2] / (eta_w[1] + eta_w[2])) - math.log(per_card[2])
    prior += math.log(eta_w[1] / (eta_w[1] + eta_w[2])) - math.log(per_card[1])
    assert state.log_prior == pytest.approx(prior, abs=1e-9)
    # the incremental update equals a fresh evaluation
    swapped = [chosen[1], chosen[0]]
    assert evaluate(post, swapped, state, 0).log_posterior == pytest.approx(evaluate(post, swapped).log_posterior)
    longer = [*chosen, rule_of[("y",)]]
    assert evaluate(post, longer, state, 2).log_likelihood == pytest.approx(evaluate(post, longer).log_likelihood)


def test_brl_recovers_a_known_rule_list():
    rng = np.random.default_rng(0)
    n = 3000
    df = pl.DataFrame(
        {
            "color": rng.choice(["red", "green", "blue"], n),
            "size": rng.choice(["S", "M", "L"], n),
            "shape": rng.choice(["round", "square"], n),
            "noise": rng.choice(["u", "v", "w", "z"], n),
        }
    )
    color, size, shape = (df.get_column(c).to_numpy() for c in ("color", "size", "shape"))
    # IF color = red AND size = L THEN yes (0.95); ELSE IF shape = square THEN no (0.9); ELSE yes (0.8)
    p_yes = np.where((color == "red") & (size == "L"), 0.95, np.where(shape == "square", 0.1, 0.8))
    df = df.with_columns(pl.Series("label", np.where(rng.random(n) < p_yes, "yes", "no")))
    ds = prepare_dataset(df, DataSpec(target="label"))
    model = fit_brl(ds, BRLParams(min_support=0.05, iterations=3000, seed=1))
    found = [{(c.column, c.value) for c in r.conditions} for r in model.rules]
    assert found[0] == {("color", "red"), ("size", "L")}
    assert found[1] == {("shape", "square")}
    assert [r.prediction for r in model.rules[:2]] == ["yes", "no"] and model.default.prediction == "yes"
    probabilities = model.rules[0].probabilities
    assert probabilities is not None and probabilities[model.classes.index("yes")] > 0.85
    rhat = model.info.training["rhat"]
    assert rhat is not None and rhat < 1.2
    out = prediction_frame(model, df.lazy(), proba=True).collect()
    assert out.get_column("proba_yes")[0] in {
        p[model.classes.index("yes")] for p in [r.probabilities for r in (*model.rules, model.default)]
    }
    assert dumps(loads(dumps(model))) == dumps(model)
    assert dumps(model) == dumps(fit_brl(ds, BRLParams(min_support=0.05, iterations=3000, seed=1)))


def test_gelman_rubin():
    same = [np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.0, 3.0, 4.0])]
    assert gelman_rubin(same) == pytest.approx(math.sqrt(3 / 4))
    apart = [np.array([1.0, 1.1, 0.9, 1.0]), np.array([5.0, 5.1, 4.9, 5.0])]
    assert gelman_rubin(apart) > 5
    assert gelman_rubin([np.zeros(5)]) is None


def test_mining_refuses_an_explosion(monkeypatch):
    from rulecli.errors import ResourceLimitError
    from rulecli.search import patterns

    rng = np.random.default_rng(0)
    codes = rng.integers(0, 2, size=(64, 12))
    items = Items(
        np.repeat(np.arange(12), 2),
        np.stack([bits.pack(codes[:, j] == v) for j in range(12) for v in (0, 1)]),
    )
    monkeypatch.setattr(patterns, "BIT_BUDGET", 8 * 100)  # room for 100 one-word patterns
    with pytest.raises(ResourceLimitError, match="raise `min_support` or lower `max_rule_length`"):
        mine(items, 1, 2)
