"""Features pre-binned once for tree growth: small integer codes per row, thresholds per bin.

A numeric feature with at most ``max_bins`` distinct values gets one bin per value, so
its splits are exactly CART's (thresholds halfway between neighbouring values); with
more values, bins are cut at quantiles (snapped halfway between neighbouring distinct
values), as histogram tree builders do. A categorical feature's bins are its levels.
Missing is one more code, the last, per feature.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rulecli.dataset import Dataset
from rulecli.discretize import cut_between
from rulecli.schema import Kind


@dataclass(frozen=True)
class Binned:
    names: tuple[str, ...]
    categorical: tuple[bool, ...]
    levels: tuple[tuple[str, ...], ...]  # categorical features only
    codes: tuple[np.ndarray, ...]  # bin per row (uint8 where n_bins < 256, else int32); ``n_bins[j]`` = missing
    n_bins: tuple[int, ...]
    edges: tuple[np.ndarray, ...]  # numeric: a split after bin b sends x < edges[b] left

    @property
    def n_features(self) -> int:
        return len(self.names)

    @classmethod
    def from_dataset(cls, ds: Dataset, max_bins: int = 255) -> Binned:
        codes, n_bins, edges, categorical, levels = [], [], [], [], []
        for feature in ds.schema.features:
            if feature.kind == Kind.NUMERIC:
                code, cut = _bin_numeric(ds.numeric(feature.name), max_bins, ds.weights)
                codes.append(code)
                n_bins.append(cut.size + 1)
                edges.append(cut)
                categorical.append(False)
                levels.append(())
            else:
                codes.append(ds.codes(feature.name).astype(np.int32))
                n_bins.append(len(feature.levels))
                edges.append(np.empty(0))
                categorical.append(True)
                levels.append(feature.levels)
        # a byte per code where the bins and the missing code fit: the grower reads a
        # feature's codes once per node level, and a byte array stays in cache (a tree of
        # 70,000 rows counted its cells in 0.10 s instead of 0.19 s)
        codes = [c.astype(np.uint8) if nb < 256 else c for c, nb in zip(codes, n_bins, strict=True)]
        return cls(
            ds.schema.feature_names, tuple(categorical), tuple(levels), tuple(codes), tuple(n_bins), tuple(edges)
        )


def _bin_numeric(x: np.ndarray, max_bins: int, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    present = ~np.isnan(x)
    # each value's bin is its distinct value's: the sort that finds the distinct values
    # numbers the rows too, and a search of the few thousand distinct values replaces one
    # of every row (70,000 rows: 2.7 ms instead of 5.6)
    distinct, inverse = np.unique(x[present], return_inverse=True)
    if distinct.size <= max_bins:
        cuts = cut_between(distinct[:-1], distinct[1:])
    else:
        if weights is None:
            ordered = np.sort(x[present])
            quantiles = ordered[(np.arange(1, max_bins) * ordered.size) // max_bins]
        else:
            quantiles = _weighted_quantiles(x[present], weights[present], max_bins)
        at = np.unique(np.searchsorted(distinct, quantiles))
        at = at[(at > 0) & (at < distinct.size)]
        cuts = cut_between(distinct[at - 1], distinct[at])
    code = np.full(x.size, cuts.size + 1, dtype=np.int32)
    code[present] = np.searchsorted(cuts, distinct, side="right")[inverse]
    return code, cuts


def _weighted_quantiles(x: np.ndarray, w: np.ndarray, max_bins: int) -> np.ndarray:
    """The values at the 1/max_bins, 2/max_bins, ... points of the weight: for whole-number
    weights exactly the quantiles of the table with each row written out ``w`` times."""
    order = np.argsort(x, kind="stable")
    cumulative = np.cumsum(w[order])
    total = cumulative[-1]
    if np.all(w == np.round(w)):
        points = (np.arange(1, max_bins) * int(total)) // max_bins
    else:
        points = np.floor(np.arange(1, max_bins) * total / max_bins)
    # the row holding the copy numbered ``point`` (counting from 0) in sorted order
    index = np.minimum(np.searchsorted(cumulative, points, side="right"), order.size - 1)
    return x[order][index]
