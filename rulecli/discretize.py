"""Cut points for numeric columns, and expressions that reapply them.

Methods
-------
equal-width
    ``bins`` intervals of equal length between the training minimum and maximum.
equal-frequency
    Cuts at the ``k/bins`` quantiles; repeated cuts (heavy ties) collapse.
mdlp
    Fayyad & Irani (1993), "Multi-interval discretization of continuous-valued
    attributes for classification learning": recursive binary splits at the
    class-entropy minimising boundary, accepted only while the information gain
    passes the minimum-description-length test.
min-bucket
    Holte (1993)'s 1R discretisation as Weka's OneR implements it: intervals hold
    at least ``bins`` rows of their majority class, neighbours with the same
    majority class merge; cuts are midpoints and intervals are ``[a, b)``.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from rulecli.errors import ParamError
from rulecli.params import DISCRETIZERS
from rulecli.schema import Cuts, numeric_expr, plain_column
from rulecli.stats import distinct_values, weighted_quantile

METHODS = DISCRETIZERS
SUPERVISED = frozenset({"mdlp", "min-bucket"})
# sorted distinct present values and each value's position among them (stats.distinct_values)
Distinct = tuple[np.ndarray, np.ndarray]
# sorted distinct present values and each value's rows of each class (by weight)
ValueCounts = tuple[np.ndarray, np.ndarray]


def readable(
    points: np.ndarray, low: np.ndarray, high: np.ndarray, *, with_low: bool = False, with_high: bool = False
) -> np.ndarray:
    """Each point written with as few decimals as it can be: the shortest decimal within a
    hundredth of the gap ``high - low`` of the point that still lies between ``low`` and
    ``high`` (either end allowed where ``with_low`` / ``with_high``), or the point itself.

    A midpoint's float is often a long decimal (42.349999999999994, 1.1150000000000002);
    the short one (42.35, 1.115) sends every training value the same way and reads as
    people write numbers, in the text, JSON and every export alike.
    """
    points, low, high = (np.asarray(a, dtype=np.float64) for a in (points, low, high))
    with np.errstate(over="ignore", invalid="ignore"):
        gap = high - low
        # near ±1.8e308 the gap itself overflows: halve first there
        tolerance = np.where(np.isfinite(gap), gap / 100, (high / 2 - low / 2) / 50)
        out = points.copy()
        chosen = np.zeros(points.shape, dtype=bool)
        for digits in range(16):
            short = np.round(points, digits)
            above = (short > low) | (with_low & (short == low))
            below = (short < high) | (with_high & (short == high))
            fits = ~chosen & above & below & np.isfinite(short) & (np.abs(short - points) <= tolerance)
            out = np.where(fits, short, out)
            chosen |= fits
    return out


def _midpoint(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        gap = high - low
        return np.where(np.isfinite(gap), low + gap / 2, low / 2 + high / 2)


def cut_between(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """A readable cut strictly between each pair of neighbouring values (low < high)."""
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    mid = _midpoint(low, high)
    return readable(np.where(mid > low, mid, high), low, high, with_high=True)


def cut_between_one(low: float, high: float) -> float:
    """:func:`cut_between` for one pair, in plain floats: the same value bit for bit (NumPy
    rounds ``x`` to ``d`` decimals as ``rint(x * 10**d) / 10**d``; so does this), at a
    hundredth of the cost where a search makes cuts one at a time."""
    gap = high - low
    finite_gap = math.isfinite(gap)
    mid = low + gap / 2 if finite_gap else low / 2 + high / 2
    point = mid if mid > low else high
    tolerance = gap / 100 if finite_gap else (high / 2 - low / 2) / 50
    scale = 1.0
    for _ in range(16):
        scaled = point * scale
        if math.isfinite(scaled):
            # round() on a float: to the nearest even, as rint; the sign kept, as rint keeps -0.0
            short = math.copysign(float(round(scaled)), scaled) / scale
            if low < short <= high and math.isfinite(short) and abs(short - point) <= tolerance:
                return short
        scale *= 10.0
    return point


def _readable_positions(edges: tuple[float, ...], x: np.ndarray) -> tuple[float, ...]:
    """Equal-width / equal-frequency cuts made readable without moving any training value
    across one: each stays within its neighbouring values (values <= cut go below it)."""
    if not edges:
        return edges
    points = np.array(edges)
    ordered = np.unique(x)
    at = np.searchsorted(ordered, points, side="right")
    low = ordered[np.maximum(at - 1, 0)]
    high = ordered[np.minimum(at, ordered.size - 1)]
    return tuple(float(c) for c in readable(points, low, high, with_low=True))


WEKA_MIN_BUCKET = 6


def min_bucket_for(rows: float) -> int:
    """The default minimum bucket on ``rows`` training rows: Weka's 6 (Holte's SMALL, chosen on
    tables of a few hundred rows) while it is larger, then √rows / 5. With 6 on a long table
    every run of six rows of one class is an interval: on planted rules with 10 % label noise
    OneR had 272 rules at 10,000 rows and 1,238 at 100,000, and fell in accuracy from 1,000 to
    10,000 rows; with √rows / 5, 27 and 8 rules, and it rises with the rows."""
    return max(WEKA_MIN_BUCKET, round(math.sqrt(rows) / 5))


def compute_cuts(
    column: str,
    values: np.ndarray,
    method: str,
    *,
    bins: int = 5,
    y: np.ndarray | None = None,
    n_classes: int = 0,
    weights: np.ndarray | None = None,
    counted: ValueCounts | None = None,
) -> Cuts:
    """Learn cut points for one numeric column.

    ``values`` may hold NaN for missing entries; they are ignored. ``y`` holds class
    codes ``0..n_classes-1`` aligned with ``values`` (needed by supervised methods).
    ``weights`` count each row that many times (the cuts of the table with each row
    written out ``k`` times, for whole ``k``). ``counted``: the present values' distinct
    values and class counts (:func:`value_counts`), where the caller has them already.

    Examples
    --------
    >>> compute_cuts("x", np.array([1.0, 2.0, 3.0, 4.0]), "equal-width", bins=2).edges
    (2.5,)
    """
    if method not in METHODS:
        raise ParamError(f"unknown discretisation method '{method}' (choose from {', '.join(METHODS)})")
    if bins < 1:
        raise ParamError(f"`bins` must be at least 1, got {bins}")
    present = ~np.isnan(values)
    x = values[present]
    w = None if weights is None else weights[present]
    if x.size == 0:
        return Cuts(column, (), True, None, None, method)
    low, high = float(x.min()), float(x.max())
    if method in SUPERVISED:
        if y is None:
            raise ParamError(f"method '{method}' needs a target column (`target`)")
        if method == "mdlp":
            edges = _mdlp_edges(x, y[present], n_classes, w)
            return Cuts(column, edges, True, low, high, method)
        values, counts = counted or value_counts(distinct_values(x), y[present], n_classes, w)
        edges = _min_bucket_edges(values, counts, bins, w is None)
        return Cuts(column, edges, False, low, high, method)
    if method == "equal-width":
        edges = tuple(low + (high - low) * k / bins for k in range(1, bins)) if high > low else ()
    else:
        levels = [k / bins for k in range(1, bins)]
        if bins <= 1:
            quantiles = np.array([])
        elif w is None:
            quantiles = np.quantile(x, levels)
        else:
            quantiles = np.array([weighted_quantile(x, w, q) for q in levels])
        edges = tuple(float(q) for q in np.unique(quantiles) if low <= q < high)
    edges = tuple(sorted(set(_readable_positions(tuple(float(e) for e in edges), x))))
    return Cuts(column, edges, True, low, high, method)


def _class_entropy(counts: np.ndarray) -> np.ndarray:
    """Entropy (bits) of each row of a count matrix."""
    totals = counts.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(totals > 0, counts / np.maximum(totals, 1), 0.0)
        logs = np.where(p > 0, np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return -(p * logs).sum(axis=-1)


def _mdlp_edges(x: np.ndarray, y: np.ndarray, n_classes: int, w: np.ndarray | None = None) -> tuple[float, ...]:
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order]
    onehot = np.zeros((xs.size, max(n_classes, int(ys.max()) + 1)), dtype=np.int64 if w is None else np.float64)
    onehot[np.arange(xs.size), ys] = 1 if w is None else w[order]
    cum = np.vstack([np.zeros((1, onehot.shape[1]), dtype=onehot.dtype), np.cumsum(onehot, axis=0)])
    edges: list[float] = []
    stack = [(0, xs.size)]
    while stack:
        start, stop = stack.pop()
        cut = _mdlp_best_cut(xs, cum, start, stop)
        if cut is None:
            continue
        edges.append(cut_between_one(float(xs[cut - 1]), float(xs[cut])))
        stack.append((start, cut))
        stack.append((cut, stop))
    return tuple(sorted(float(e) for e in edges))


def _mdlp_best_cut(xs: np.ndarray, cum: np.ndarray, start: int, stop: int) -> int | None:
    """Index ``i`` splitting ``[start, i)`` / ``[i, stop)`` if it passes the MDL test
    (``n``: the rows, counted by weight)."""
    total = cum[stop] - cum[start]
    n = total.sum()
    if stop - start < 2 or n < 2:
        return None
    candidates = np.nonzero(xs[start + 1 : stop] != xs[start : stop - 1])[0] + start + 1
    if candidates.size == 0:
        return None
    left = cum[candidates] - cum[start]
    right = total - left
    n_left = left.sum(axis=1)
    n_right = n - n_left
    ent_left = _class_entropy(left)
    ent_right = _class_entropy(right)
    weighted = (n_left * ent_left + n_right * ent_right) / n
    best = int(np.argmin(weighted))
    ent_all = float(_class_entropy(total[None, :])[0])
    gain = ent_all - float(weighted[best])
    k = int((total > 0).sum())
    k1 = int((left[best] > 0).sum())
    k2 = int((right[best] > 0).sum())
    delta = math.log2(3**k - 2) - (k * ent_all - k1 * float(ent_left[best]) - k2 * float(ent_right[best]))
    threshold = (math.log2(n - 1) + delta) / n
    return int(candidates[best]) if gain > threshold else None


def value_counts(distinct: Distinct, y: np.ndarray, n_classes: int, w: np.ndarray | None) -> ValueCounts:
    """The distinct values in order, and each one's rows of each class (counted by ``w``)."""
    values, inverse = distinct
    # bincount adds in row order, as a loop would
    cell = inverse * n_classes + y
    return values, np.bincount(cell, weights=w, minlength=values.size * n_classes).reshape(values.size, n_classes)


def _min_bucket_edges(values: np.ndarray, counts: np.ndarray, min_bucket: int, whole: bool) -> tuple[float, ...]:
    """Weka OneR's interval construction (``weka.classifiers.rules.OneR.newNumericRule``).

    Weka walks the distinct values in order and merges the next value's bucket into the
    current interval when both predict the same class (first maximum) or the interval's
    majority count is below ``min_bucket``; a second pass merges neighbours with the same
    majority class. The walk is reproduced exactly, but in jumps instead of steps:

    * while the interval is small it absorbs every next bucket, so the point where it
      becomes big is a search over per-class cumulative counts;
    * once big with majority ``c``, adding buckets whose own majority is ``c`` keeps it big
      with majority ``c``, so a whole run of such buckets is absorbed at once;
    * the next bucket then has another majority: the interval closes there.

    Where an interval would end is found for every starting bucket at once, in NumPy; the
    walk then only follows those ends from the first bucket.
    """
    m, n_classes = counts.shape
    # per class the running sums: prefix[k, i] is class k's count in the buckets before bucket i
    prefix = np.zeros((n_classes, m + 1), dtype=counts.dtype)
    for k in range(n_classes):
        np.cumsum(counts[:, k], out=prefix[k, 1:])
    majority = counts.argmax(axis=1)
    # run_end[i]: first bucket after i whose majority differs from bucket i's
    change = np.flatnonzero(majority[1:] != majority[:-1]) + 1
    run_end = np.repeat(np.append(change, m), np.diff(np.concatenate(([0], change, [m]))))
    # Where an interval starting at each bucket would end, for every bucket at once: the
    # first point where some class reaches min_bucket (a bucket already that big ends at
    # the next one), then past the run of buckets with the interval's majority.
    end = np.full(m, m, dtype=np.int64)
    for k in range(n_classes):
        np.minimum(end, _reach(prefix[k], counts[:, k], min_bucket, whole), out=end)
    # the interval's largest class count and its first maximum, class by class
    top = prefix[0, end] - prefix[0, :-1]
    top_class = np.zeros(m, dtype=np.int64)
    for k in range(1, n_classes):
        count = prefix[k, end] - prefix[k, :-1]
        larger = count > top
        top = np.where(larger, count, top)
        top_class[larger] = k
    within = end < m
    extend = within & (top >= min_bucket)
    extend[within] &= majority[end[within]] == top_class[within]
    following = np.where(extend, run_end[np.minimum(end, m - 1)], end).tolist()
    # the intervals are the chain of ends from the first bucket
    starts = []
    start = 0
    while start < m:
        starts.append(start)
        start = following[start]
    bounds = np.array([*starts, m])
    interval_class = (prefix[:, bounds[1:]] - prefix[:, bounds[:-1]]).argmax(axis=0)
    keep = np.flatnonzero(interval_class[1:] != interval_class[:-1]) + 1
    cut_after = bounds[keep] - 1
    return tuple(float(c) for c in cut_between(values[cut_after], values[cut_after + 1]))


def _reach(prefix: np.ndarray, counts: np.ndarray, min_bucket: int, whole: bool) -> np.ndarray:
    """For each bucket i, the first j with ``prefix[j] >= prefix[i] + min_bucket`` (one
    class's running count; ``prefix.size`` where there is none)."""
    m = counts.size
    if not whole:  # weighted counts: a binary search per bucket
        return np.searchsorted(prefix, prefix[:-1] + min_bucket, side="left")
    # whole counts: the class's rows in bucket order; the (prefix[i] + min_bucket)-th of
    # them lies in bucket b, so j = b + 1: a gather instead of 2 × log2(m) random reads
    bucket_of_row = np.repeat(np.arange(m), counts)
    wanted = prefix[:-1] + (min_bucket - 1)
    found = wanted < bucket_of_row.size
    reach = np.full(m, m + 1, dtype=np.int64)
    reach[found] = bucket_of_row[wanted[found]] + 1
    return reach


def bin_index_expr(cuts: Cuts) -> pl.Expr:
    """Expression giving each row's interval number (0-based; null stays null)."""
    x = numeric_expr(cuts.column)
    if not cuts.edges:
        return pl.when(x.is_not_null()).then(pl.lit(0, dtype=pl.UInt32))
    above = [(x > e) if cuts.right_closed else (x >= e) for e in cuts.edges]
    index = pl.sum_horizontal([a.cast(pl.UInt32) for a in above]).cast(pl.UInt32)
    return pl.when(x.is_not_null()).then(index).alias(cuts.column)


def format_number(value: float) -> str:
    """Render a cut for labels: integers without a decimal point, else 6 significant digits."""
    if math.isfinite(value) and value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


def interval_labels(cuts: Cuts) -> list[str]:
    """Labels in interval notation, e.g. ``[22,3152]``, ``(3152,4548]``.

    The outer bounds show the training minimum and maximum; new values beyond
    them still fall into the first and last interval.
    """
    low = format_number(cuts.low) if cuts.low is not None else "-inf"
    high = format_number(cuts.high) if cuts.high is not None else "inf"
    points = [low, *(format_number(e) for e in cuts.edges), high]
    labels = []
    last = len(points) - 2
    for i in range(len(points) - 1):
        if cuts.right_closed:
            opening = "[" if i == 0 else "("
            labels.append(f"{opening}{points[i]},{points[i + 1]}]")
        else:
            closing = "]" if i == last else ")"
            labels.append(f"[{points[i]},{points[i + 1]}{closing}")
    return labels


def label_expr(cuts: Cuts) -> pl.Expr:
    """Expression replacing a numeric column by its interval label (a string)."""
    mapping = dict(enumerate(interval_labels(cuts)))
    return bin_index_expr(cuts).replace_strict(mapping, return_dtype=pl.String).alias(cuts.column)


def learn_cuts(
    df: pl.DataFrame,
    columns: list[str],
    method: str,
    *,
    bins: int,
    target: str | None,
) -> list[Cuts]:
    """Cut points for each named numeric column of ``df`` (supervised methods use ``target``)."""
    y, n_classes = None, 0
    if method in SUPERVISED:
        if target is None:
            raise ParamError(f"method '{method}' needs a target column (`target`)")
        labels = plain_column(df, target)
        keep = labels.is_not_null()
        df = df.filter(keep)
        codes = plain_column(df, target).cast(pl.String).rank("dense").cast(pl.Int64) - 1
        y, n_classes = codes.to_numpy(), int(codes.max() or 0) + 1
    out = []
    for name in columns:
        values = df.select(numeric_expr(name)).to_series().to_numpy().astype(np.float64)
        out.append(compute_cuts(name, values, method, bins=bins, y=y, n_classes=n_classes))
    return out


def interval_codes(cuts: Cuts, x: np.ndarray, distinct: Distinct | None = None) -> np.ndarray:
    """Each value's interval number; missing values get one more number. ``distinct``: the
    present values' :func:`~rulecli.stats.distinct_values`, where the caller has them: then
    only the distinct values are searched (a million values among 70 edges: 57 ms; their
    distinct values' numbers gathered: 12 ms)."""
    side = "left" if cuts.right_closed else "right"
    edges = np.asarray(cuts.edges)
    if distinct is None:
        codes = np.searchsorted(edges, x, side=side)
        codes[np.isnan(x)] = len(cuts.edges) + 1
        return codes
    values, inverse = distinct
    codes = np.full(x.size, len(cuts.edges) + 1, dtype=np.int64)
    codes[~np.isnan(x)] = np.searchsorted(edges, values, side=side)[inverse]
    return codes


def interval_counts(cuts: Cuts, values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each interval's rows of each class: the ``counts`` of the distinct ``values`` (in
    order) that fall in it, without a number per row."""
    side = "left" if cuts.right_closed else "right"
    interval = np.searchsorted(np.asarray(cuts.edges), values, side=side)
    # the values are in order, so each interval's values are a run: sums are differences of running sums
    ends = np.searchsorted(interval, np.arange(len(cuts.edges) + 1), side="right")
    running = np.zeros((values.size + 1, counts.shape[1]), dtype=counts.dtype)
    np.cumsum(counts, axis=0, out=running[1:])
    return np.diff(running[np.concatenate(([0], ends))], axis=0)
