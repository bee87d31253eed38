"""The forests' hashed bootstrap: Poisson(1) draws per row, bags as unrelated as drawn ones."""

from __future__ import annotations

import math

import numpy as np

from rulecli.stats import POISSON_CUTS, bag_key, poisson_draws


def _bags(n: int, trees: int, seed: int = 0) -> np.ndarray:
    return np.array([poisson_draws(np.arange(n), bag_key(s)) for s in np.random.SeedSequence(seed).spawn(trees)])


def test_draws_follow_poisson_one():
    draws = _bags(200_000, 2).ravel()
    for k in range(4):
        expected = math.exp(-1) / math.factorial(k)
        # 400k draws: the standard error of each share is below 0.0008
        assert abs(float(np.mean(draws == k)) - expected) < 0.004, k
    assert abs(draws.mean() - 1) < 0.01 and abs(draws.var() - 1) < 0.02
    assert draws.max() <= len(POISSON_CUTS)


def test_no_two_bags_alike():
    # a hash salted only by the tree made some pairs of bags nearly equal (correlation 0.95
    # on 57 rows, 0.35 on 1,000, 0.21 on 20,000). The largest of 4,950 pairs' correlations of
    # drawn bags: 0.43 to 0.58 on 57 rows (20 seeds), within 4.5 standard errors (1/sqrt(n))
    # on more rows
    for n, bound in ((57, 0.75), (1000, 4.5 / math.sqrt(1000)), (20_000, 4.5 / math.sqrt(20_000))):
        bags = _bags(n, 100)
        corr = np.corrcoef(bags)[~np.eye(100, dtype=bool)]
        assert np.abs(corr).max() < bound, n
        neighbours = [np.corrcoef(b[:-1], b[1:])[0, 1] for b in bags]
        assert np.abs(neighbours).max() < bound, n


def test_bags_depend_on_the_seed_alone():
    a, b = _bags(500, 3, seed=7), _bags(500, 3, seed=7)
    assert np.array_equal(a, b) and not np.array_equal(a, _bags(500, 3, seed=8))


def test_compiled_draws_are_numpys():
    """A forest on a large table draws its bags by the compiled kernel, a small one by NumPy:
    the same seed must draw the same bag either way (the model file depends on it)."""
    from rulecli.counting import kernel
    from rulecli.stats import hash_seed

    cuts = np.array(POISSON_CUTS, dtype=np.int64)
    for seed in np.random.SeedSequence(5).spawn(25):
        key = bag_key(seed)
        salt, multiplier = key
        for n in (0, 1, 3, 10_000):
            expected = poisson_draws(np.arange(n), key).astype(np.float64)
            assert np.array_equal(kernel.poisson_draws(n, hash_seed(salt), multiplier, cuts), expected), (seed, n)
