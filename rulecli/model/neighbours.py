"""The correction of rules' predictions by the nearest stored training rows (Quinlan 1993,
"Combining instance-based and model-based learning", as Cubist applies it to its rules):
distances, the ``k`` nearest stored rows and their weighted mean residual.

Every export computes the same distance in the same order of additions (a column's value
term, then its missing term, column by column), so that ties and near-ties fall alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import polars as pl

from rulecli.model.core import NeighbourColumn, Neighbours

OFFSET = 0.5  # a neighbour's weight is 1 / (distance + OFFSET), as Cubist weighs them
MISSING, UNSEEN = -1, -2  # a text value's code when missing, or never stored
# distances computed at once (query rows × stored rows): 2 MiB of doubles stay in cache
# (32 MiB at once took 1.6 times as long)
CELLS = 1 << 18
Arrays = list[tuple[np.ndarray, np.ndarray | None]]  # per column: values, and a number's missing flags


def _numeric(column: NeighbourColumn, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A number as the distance reads it: within the column's range, missing as its fill;
    and 1 where missing."""
    missing = np.isnan(values)
    return np.clip(np.where(missing, column.fill, values), column.low, column.high), missing.astype(np.float64)


def stored_arrays(nb: Neighbours) -> Arrays:
    """Per column, the stored rows as the distance reads them, as :func:`query_arrays`
    reads any rows (a number's value and missing flag; a text's code, ``MISSING`` where
    missing, and None). Made once per model read or prediction, not per batch."""
    columns = {
        c.name: pl.Series(values, dtype=pl.Float64 if c.numeric else pl.String)
        for c, values in zip(nb.columns, nb.values, strict=True)
    }
    return query_arrays(nb, columns)


def levels_of(values: Sequence[float | str | None]) -> dict[str | float, int]:
    """A text column's stored values in order of first appearance, numbered from 0: the
    codes its distance compares."""
    return {v: i for i, v in enumerate(dict.fromkeys(v for v in values if v is not None))}


def fresh_prefix(prefix: str, taken: Iterable[str]) -> str:
    """``prefix``, lengthened until no column of the model starts with it: the names an
    export gives the stored rows' columns must not hide a column the distance reads."""
    taken = list(taken)
    while any(name.startswith(prefix) for name in taken):
        prefix += "_"
    return prefix


def query_arrays(nb: Neighbours, columns: Mapping[str, pl.Series]) -> Arrays:
    """Per column, the rows to predict as the distance reads them (see :func:`stored_arrays`);
    a text value never stored is ``UNSEEN``, which equals nothing."""
    out: list[tuple[np.ndarray, np.ndarray | None]] = []
    for column, values in zip(nb.columns, nb.values, strict=True):
        series = columns[column.name]
        if column.numeric:
            out.append(_numeric(column, series.cast(pl.Float64).fill_null(np.nan).to_numpy()))
        else:
            levels = levels_of(values)
            text = series.cast(pl.String)
            codes = text.replace_strict(list(levels), list(levels.values()), default=UNSEEN, return_dtype=pl.Int64)
            out.append((np.where(text.is_null().to_numpy(), MISSING, codes.to_numpy()), None))
    return out


def corrected(nb: Neighbours, base: np.ndarray, query: Arrays, stored: Arrays) -> np.ndarray:
    """``base`` (the rules' predictions) plus each row's weighted mean residual of its ``k``
    nearest stored rows (``stored``: :func:`stored_arrays`), kept within the bounds."""
    residuals = np.asarray(nb.residuals)
    out = np.empty(base.size)
    step = max(1, CELLS // max(residuals.size, 1))
    for start in range(0, base.size, step):
        part = slice(start, min(start + step, base.size))
        distance = _distances(nb.columns, [(v[part], m if m is None else m[part]) for v, m in query], stored)
        out[part] = base[part] + _mean_residual(distance, residuals, nb.k)
    return np.clip(out, *nb.bounds)


def left_out_corrections(nb: Neighbours, rows: np.ndarray) -> np.ndarray:
    """Each of the stored ``rows``' correction by its k nearest other stored rows (itself
    left out): what the correction would add to a row it has not seen."""
    stored = stored_arrays(nb)
    distance = _distances(nb.columns, [(v[rows], m if m is None else m[rows]) for v, m in stored], stored)
    distance[np.arange(rows.size), rows] = np.inf
    return _mean_residual(distance, np.asarray(nb.residuals), min(nb.k, len(nb.residuals) - 1))


def _distances(columns: Sequence[NeighbourColumn], query: Arrays, stored: Arrays) -> np.ndarray:
    """(query rows × stored rows) distances, added column by column in the columns' order
    (each term made in one buffer, in place: temporaries tripled the time)."""
    shape = (query[0][0].size if query else 0, stored[0][0].size if stored else 0)
    total, term = np.zeros(shape), np.empty(shape)
    for column, (q, q_missing), (s, s_missing) in zip(columns, query, stored, strict=True):
        if q_missing is None:
            np.not_equal(q[:, None], s[None, :], out=term)
        else:
            np.subtract(q[:, None], s[None, :], out=term)
            np.abs(term, out=term)
        term *= column.weight
        total += term
        # (where neither side misses a value the flags' term is 0, and adding 0 changes nothing)
        if q_missing is not None and (q_missing.any() or s_missing.any()):  # type: ignore[union-attr]
            np.subtract(q_missing[:, None], s_missing[None, :], out=term)  # type: ignore[index]
            total += np.abs(term, out=term)
    return total


def _mean_residual(distance: np.ndarray, residuals: np.ndarray, k: int) -> np.ndarray:
    """Per row, the mean residual of its k nearest stored rows weighted by 1 / (d + 0.5):
    those nearer than the k-th distance, then those at it in stored order."""
    n = distance.shape[0]
    nearest = np.argpartition(distance, k - 1, axis=1)[:, :k]
    kth = np.take_along_axis(distance, nearest, axis=1).max(axis=1)
    # a row with more stored rows at its k-th distance than fit: those stored first (a
    # stable sort keeps equal distances in stored order)
    tied = np.flatnonzero((distance <= kth[:, None]).sum(axis=1) > k)
    if tied.size:
        nearest[tied] = np.argsort(distance[tied], axis=1, kind="stable")[:, :k]
    near = np.take_along_axis(distance, nearest, axis=1)
    order = np.lexsort((nearest, near), axis=1)  # summed nearest first, as the exports sum them
    nearest, near = np.take_along_axis(nearest, order, axis=1), np.take_along_axis(near, order, axis=1)
    weight = 1.0 / (near + OFFSET)
    return (weight * residuals[nearest]).sum(axis=1) / weight.sum(axis=1) if n else np.empty(0)
