"""Small statistical functions the learners share (no SciPy dependency)."""

from __future__ import annotations

import functools
import math

import numpy as np

_EPS = 1e-15
_MAX_ITER = 500


def _gamma_p_series(a: float, x: float) -> float:
    term = total = 1.0 / a
    denom = a
    for _ in range(_MAX_ITER):
        denom += 1.0
        term *= x / denom
        total += term
        if abs(term) < abs(total) * _EPS:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _gamma_q_fraction(a: float, x: float) -> float:
    """Lentz's continued fraction for the upper regularised gamma function."""
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, _MAX_ITER):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h * math.exp(-x + a * math.log(x) - math.lgamma(a))


def chi2_sf(statistic: float, dof: int) -> float:
    """P(X >= statistic) for a chi-square variable with ``dof`` degrees of freedom.

    Examples
    --------
    >>> round(chi2_sf(3.841458820694124, 1), 6)
    0.05
    """
    if dof <= 0:
        return 1.0
    if statistic <= 0:
        return 1.0
    a, x = dof / 2.0, statistic / 2.0
    if x < a + 1.0:
        return max(0.0, 1.0 - _gamma_p_series(a, x))
    return _gamma_q_fraction(a, x)


def chi2_independence(table: np.ndarray) -> tuple[float, int, float]:
    """Pearson's chi-square test on a contingency table: (statistic, dof, p-value).

    Empty rows and columns are dropped first, as they carry no information.
    """
    observed = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0].astype(np.float64)
    rows, cols = observed.shape
    if rows < 2 or cols < 2:
        return 0.0, 0, 1.0
    expected = observed.sum(axis=1, keepdims=True) * observed.sum(axis=0, keepdims=True) / observed.sum()
    statistic = float(((observed - expected) ** 2 / expected).sum())
    dof = (rows - 1) * (cols - 1)
    return statistic, dof, chi2_sf(statistic, dof)


# the same few critical values are asked for at every beam step of a search (a 100,000-row
# cn2 spent 12 % of its time bisecting them again)
@functools.lru_cache(maxsize=4096)
def chi2_critical(alpha: float, dof: int) -> float:
    """The statistic a chi-square variable with ``dof`` degrees of freedom exceeds with probability ``alpha``.

    Examples
    --------
    >>> round(chi2_critical(0.05, 1), 4)
    3.8415
    """
    if alpha >= 1.0 or dof <= 0:
        return 0.0
    low, high = 0.0, max(1.0, float(dof))
    while chi2_sf(high, dof) > alpha:
        high *= 2.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if chi2_sf(mid, dof) > alpha:
            low = mid
        else:
            high = mid
    return high


Z95 = 1.959963984540054  # the standard normal's 97.5 % point: two-sided 95 % intervals
# Student's t 97.5 % points for 1..30 degrees of freedom (beyond: the normal's)
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def wilson(successes: float, n: float) -> list[float] | None:
    """The 95 % Wilson score interval of a share ``successes / n`` (Wilson 1927): inside
    [0, 1] and sound for shares near 0 or 1 and for small ``n``; None when ``n`` is 0.

    >>> [round(v, 4) for v in wilson(180, 200)]
    [0.8506, 0.9343]
    """
    if n <= 0:
        return None
    share = successes / n
    z2 = Z95 * Z95
    centre = (share + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return [max(0.0, centre - half), min(1.0, centre + half)]


def mean_interval(mean: float, sd: float, k: int) -> list[float] | None:
    """The 95 % t interval of a mean of ``k`` values (cross-validation folds); None for one."""
    if k < 2:
        return None
    t = _T975[k - 2] if k - 1 <= len(_T975) else Z95
    half = t * sd / math.sqrt(k)
    return [mean - half, mean + half]


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjustment (family-wise error over every test made)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def tally(x: float) -> int | float:
    """A weighted count: an integer when it is whole (so unweighted models stay integers)."""
    return int(x) if float(x).is_integer() else float(x)


def is_whole(weights: np.ndarray) -> bool:
    """Every weight a whole number (each row stands for that many copies)."""
    return bool(np.all(weights == np.round(weights)))


def tallies(counts: np.ndarray) -> np.ndarray:
    """Weighted counts as integers where they are all whole numbers, else as floats."""
    if counts.dtype.kind == "f" and np.all(counts == np.round(counts)):
        return counts.astype(np.int64)
    return counts


# A row's place in a hashed sample: modular arithmetic that 64-bit integers hold exactly
# (every product stays below 2^62), so NumPy and a SQL engine draw the same rows from
# the rows' numbers without seeing them in order.
HASH_PRIME = 2_147_483_647  # 2^31 - 1
HASH_STEPS = ((1_103_515_245, 12_345), (48_271, 11), (69_621, 7))


def hash_seed(seed: int) -> int:
    return (seed * 2_654_435_761 + 1) % HASH_PRIME


def row_hash(ids: np.ndarray, seed: int) -> np.ndarray:
    """Each row number's hash in ``[0, HASH_PRIME)``: a square between mixing steps, so nearby
    rows land far apart (what the SQL engines compute in ``rulecli.engines.sql``)."""
    h = (ids.astype(np.int64) + hash_seed(seed)) % HASH_PRIME
    for i, (a, c) in enumerate(HASH_STEPS):
        h = (h * a + c) % HASH_PRIME
        if i == 0:
            h = (h * h) % HASH_PRIME
    return h


# A sample to learn from is drawn with a seed of its own. The learner's hashed draws from
# it (cross-validation rows, a held-out share) use the run's seed, and with that same seed
# a draw at a higher rate than the sample's keeps every row of it: aq's 2,000-row tuning
# sample of a 10,000-row sample was all 10,000 rows (161 s instead of 15).
SAMPLE_SEED_OFFSET = 7_919


def sample_seed(seed: int) -> int:
    """The seed a sample to learn from is drawn with (the run's seed is ``seed``)."""
    return seed + SAMPLE_SEED_OFFSET


def hash_sampled(ids: np.ndarray, seed: int, rate: float) -> np.ndarray:
    """The rows a hashed sample of ``rate`` keeps (a mask)."""
    return row_hash(ids, seed) < hash_threshold(rate)


def hash_threshold(rate: float) -> int:
    return math.ceil(rate * HASH_PRIME)


def _poisson_cuts() -> tuple[int, ...]:
    """Hash values at which Poisson(1)'s distribution function passes 0, 1, 2, ... draws."""
    cuts, total, p, k = [], 0.0, math.exp(-1.0), 0
    while (cut := math.ceil((total + p) * HASH_PRIME)) < HASH_PRIME:
        cuts.append(cut)
        total += p
        k += 1
        p /= k
    return tuple(cuts)


POISSON_CUTS = _poisson_cuts()


def bag_key(seed: np.random.SeedSequence) -> tuple[int, int]:
    """A bootstrap's hash seed and row multiplier, from the seed a tree grows from."""
    salt, multiplier = (int(v) for v in seed.generate_state(2))
    return salt, multiplier % (HASH_PRIME - 1) + 1


def bag_hash(ids: np.ndarray, key: tuple[int, int]) -> np.ndarray:
    """A row's hash in one bootstrap: the rows' numbers times the bag's multiplier go into
    :func:`row_hash` (a salt alone would make every bag the same quadratic of the row
    number, shifted, and some pairs of bags nearly equal)."""
    salt, multiplier = key
    return row_hash(ids.astype(np.int64) % HASH_PRIME * multiplier % HASH_PRIME, salt)


def poisson_draws(ids: np.ndarray, key: tuple[int, int]) -> np.ndarray:
    """How often the bootstrap ``key`` draws each row: Poisson(1) from the row's hash (the
    limit of n draws from n rows), so any engine draws the same bag from the row numbers
    without materialising it, as Spark MLlib's forests do."""
    return np.searchsorted(np.array(POISSON_CUTS), bag_hash(ids, key), side="right")


def run_starts(keys: np.ndarray) -> np.ndarray:
    """True where a run of equal sorted ``keys`` begins (values, or cells' nodes or trees)."""
    first = np.empty(keys.size, dtype=bool)
    first[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    return first


def distinct_values(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of ``x`` (no NaN) in order, and each one's position among them:
    ``np.unique(x, return_inverse=True)`` from one sort, in 65-110 ms against its 90-135 on
    700,000 rows. -0.0 and 0.0 are one value, written 0.0 (as an engine's GROUP BY gives it)."""
    x = x + 0.0
    order = np.argsort(x)
    ordered = x[order]
    first = run_starts(ordered)
    inverse = np.empty(x.size, dtype=np.int64)
    inverse[order] = np.cumsum(first) - 1
    return ordered[first], inverse


def class_groups(y: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows grouped by class code (each class's rows in table order), and where each
    class's group starts and ends: ``order[bounds[k]:bounds[k + 1]]`` are class k's rows."""
    # 16-bit codes sort by NumPy's radix sort: one pass instead of a comparison sort
    codes = y.astype(np.int16) if n_classes <= np.iinfo(np.int16).max else y
    bounds = np.zeros(n_classes + 1, dtype=np.int64)
    np.cumsum(np.bincount(y, minlength=n_classes), out=bounds[1:])
    return np.argsort(codes, kind="stable"), bounds


# The strided sample that says whether a column has few distinct values, and the share of
# distinct values in it above which the column is sorted whole instead of class by class
SAMPLED_VALUES = 65_536
MANY_DISTINCT = 0.5


def class_counts_by_value(
    x: np.ndarray, y: np.ndarray, n_classes: int, groups: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A numeric column's (NaN: missing) distinct present values in order, each one's rows
    of each class, and each class's missing rows: unweighted counts, as
    ``distinct_values`` and a bincount would give them. -0.0 and 0.0 are one value, 0.0.
    ``groups``: :func:`class_groups` of ``y``.

    With few distinct values each class's values are sorted alone (NumPy sorts values
    without their positions 3-4x faster than it orders positions), and the classes' short
    lists of distinct values are merged: 11-15 ms against 38-44 ms for 1,000,000 values
    with 50-7,200 distinct ones. With many (a sample says which), the merge would cost more
    than it saves, and the column is ordered whole."""
    sample = x[:: max(1, x.size // SAMPLED_VALUES)]
    sample = sample[~np.isnan(sample)]
    if np.unique(sample).size > MANY_DISTINCT * sample.size:
        present = ~np.isnan(x)
        values, inverse = distinct_values(x[present])
        counts = np.bincount(inverse * n_classes + y[present], minlength=values.size * n_classes)
        return values, counts.reshape(values.size, n_classes), np.bincount(y[~present], minlength=n_classes)
    order, bounds = groups
    grouped = x[order]
    grouped += 0.0
    missing = np.zeros(n_classes, dtype=np.int64)
    per_class = []
    for k in range(n_classes):
        ordered = grouped[bounds[k] : bounds[k + 1]]
        ordered.sort()  # NaN sorts last
        present = int(np.searchsorted(ordered, np.nan))
        missing[k] = ordered.size - present
        ordered = ordered[:present]
        starts = np.flatnonzero(run_starts(ordered))
        per_class.append((ordered[starts], np.diff(starts, append=present)))
    values = np.unique(np.concatenate([distinct for distinct, _ in per_class]))
    counts = np.zeros((values.size, n_classes), dtype=np.int64)
    for k, (distinct, count) in enumerate(per_class):
        counts[np.searchsorted(values, distinct), k] = count
    return values, counts, missing


def weighted_quantile(x: np.ndarray, w: np.ndarray, q: float) -> float:
    """NumPy's linear quantile of the table with each value written out ``w`` times (and its
    continuation to fractional weights): the copies at positions floor(q (N - 1)) and the
    next, interpolated by NumPy itself on those two values so the rounding is NumPy's."""
    order = np.argsort(x, kind="stable")
    xs, cumulative = x[order], np.cumsum(w[order])
    position = q * (cumulative[-1] - 1.0)
    below = math.floor(position)
    at = np.searchsorted(cumulative, [below, below + 1.0], side="right")
    a, b = xs[min(int(at[0]), xs.size - 1)], xs[min(int(at[1]), xs.size - 1)]
    return float(np.quantile(np.array([a, b]), position - below))
