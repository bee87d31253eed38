"""CART growth on binned features, batched: every pending node's best split in one pass.

The procedure is CART's (Breiman, Friedman, Olshen & Stone 1984): node impurity I (entropy, Gini,
misclassification rate, or the mean squared error for a numeric target); for a split
``x_j < θ`` the split index ``G = I(node) − P_L·I(left) − P_R·I(right)``; each node's
best (j, θ) maximises G; the leaf with the largest ``F_r = G_r·|I_r|/|I_1|`` is split
next (best-first), until a limit stops growth.

Speed comes from never looping over rows or thresholds in Python. A *batch* is a set of
nodes whose best splits are still unknown; for each feature, one ``bincount`` over the
batch's rows counts every (node, bin, class) cell, a cumulative sum turns the cells into
the left/right class counts of every threshold of every node, and G is evaluated for all
of them as arrays (nodes whose rows spread thinly over many bins are counted sparsely,
through the distinct (node, bin) keys). A batch of a million (row, feature) cells or
more is counted, and its nodes' rows dealt to their children, by compiled loops instead
(:mod:`rulecli.counting.kernel`), which add the same numbers in the same order. The order
of growth matters only when ``max_leaf_nodes`` stops it: then leaves are split strictly
in F order, and a new batch is counted only when an uncounted child might beat the best
counted leaf (F is at most ``I(node)·|I_r|/|I_1|``). Without that limit every splittable
node of a level is split and the whole next level is one batch. Either way the tree
equals one grown node by node, the largest F first.

Rows with a missing value of the split feature go to the child where the cut gains more
(G computed with them on each side, as scikit-learn >= 1.3 does); on a tie, to the child
that receives more of the node's other rows. Categorical
features split into two sets of levels: levels are ordered by their share of the
second class (two classes) or their mean target (regression), which finds the best
split (Breiman et al. 1984, §9.4); with more classes each class's share is tried as the
order and the best split of the K orders is kept (a heuristic, not exhaustive).
Levels absent at a node travel with the missing values.

Counts are weighted: a forest's bootstrap sample is a weight per row (how often it was
drawn), so |I_r| counts draws, as a bootstrap sample holds a row once per draw.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np

from rulecli import budget
from rulecli.counting import encoded
from rulecli.counting.binned import Binned
from rulecli.stats import run_starts

CRITERIA = ("gini", "entropy", "misclassification", "mse")
PURE = 1e-12
WHOLE_SUMS = 2.0**26  # total weight below which every class sum, and its square, is exact


@dataclass(frozen=True, kw_only=True)
class GrowParams:
    """Growth limits, already checked where the user gave them (``rulecli.learners.tree``)."""

    criterion: str = "gini"
    max_depth: int | None = None
    max_leaf_nodes: int | None = None
    min_samples_split: float = 2.0
    min_samples_leaf: float = 1.0
    min_impurity_decrease: float = 0.0
    max_features: int | None = None  # random features per node (forests); None = all
    # stop growing once the time budget is spent, the leaves so far the tree (a tree learner's
    # own tree; a forest stops between whole trees)
    budgeted: bool = False
    # per feature, in the data's order: +1 the prediction (the second class's share, or the
    # mean) may only rise as the feature rises, -1 only fall, 0 free; None: no constraints
    monotone: tuple[int, ...] | None = None

    @property
    def regression(self) -> bool:
        return self.criterion == "mse"


@dataclass
class GrownTree:
    """Nodes in creation order (root 0); see :class:`rulecli.model.tree.TreeNodes`. Lists
    while growing; a forest's trees, dealt back from the forest's nodes, hold arrays."""

    feature: list[int] | np.ndarray = field(default_factory=list)
    threshold: list[float] | np.ndarray = field(default_factory=list)
    left_codes: list[tuple[int, ...]] = field(default_factory=list)
    right_codes: list[tuple[int, ...]] = field(default_factory=list)
    missing_left: list[bool] | np.ndarray = field(default_factory=list)
    left: list[int] | np.ndarray = field(default_factory=list)
    right: list[int] | np.ndarray = field(default_factory=list)
    depth: list[int] | np.ndarray = field(default_factory=list)
    # class weights, or (w, Σwy, Σwy²), a row per node
    stats: list[np.ndarray] | np.ndarray = field(default_factory=list)
    impurity: list[float] | np.ndarray = field(default_factory=list)
    improvement: list[float] | np.ndarray = field(default_factory=list)  # F_r


# ------------------------------------------------------------------------- impurity


_ONES = [np.ones(k) for k in range(65)]


def _ones(k: int) -> np.ndarray:
    return _ONES[k] if k < len(_ONES) else np.ones(k)


def node_weight(sums: np.ndarray, regression: bool) -> np.ndarray:
    if regression:
        return sums[..., 0]
    # a matrix-vector product: NumPy's sum over a short last axis is several times slower
    return sums @ _ones(sums.shape[-1])


def impurity(sums: np.ndarray, criterion: str, weight: np.ndarray | None = None) -> np.ndarray:
    """Impurity of each row of ``sums`` (class weights, or (w, Σwy, Σwy²) for mse);
    ``weight`` is the rows' total weight when the caller has it already."""
    regression = criterion == "mse"
    w = node_weight(sums, regression) if weight is None else weight
    positive = w > 0
    safe = np.where(positive, w, 1.0)
    ones = _ones(sums.shape[-1])
    if regression:
        mean = sums[..., 1] / safe
        out = np.maximum(sums[..., 2] / safe - mean * mean, 0.0)
    elif criterion == "gini":
        out = 1.0 - ((sums * sums) @ ones) / (safe * safe)
    elif criterion == "entropy":
        # -Σ p log2 p = log2 w − (Σ c log2 c) / w
        with np.errstate(divide="ignore", invalid="ignore"):
            c_log_c = np.where(sums > 0, sums * np.log2(np.where(sums > 0, sums, 1.0)), 0.0)
        out = np.log2(safe) - (c_log_c @ ones) / safe
    else:
        out = 1.0 - sums.max(axis=-1) / safe
    return np.where(positive, np.maximum(out, 0.0), 0.0)


# ------------------------------------------------------------------------- the grower


@dataclass
class Best:
    """Per batch node: the best split found so far."""

    gain: np.ndarray  # G, -inf where none
    feature: np.ndarray
    bin: np.ndarray  # numeric: last bin sent left
    missing_left: np.ndarray
    apart: np.ndarray  # the split of present from missing values
    # batch node -> the levels sent left and right by the last categorical feature to win
    # it (stale where a numeric feature won after it: read only where ``feature`` is categorical)
    left_codes: dict[int, tuple[int, ...]]
    right_codes: dict[int, tuple[int, ...]]

    def numeric(self) -> tuple[np.ndarray, ...]:
        """What a numeric split records, in the compiled kernels' order."""
        return self.gain, self.feature, self.bin, self.missing_left, self.apart

    @classmethod
    def none(cls, p: int) -> Best:
        """No split found yet for any of ``p`` nodes."""
        return cls(
            gain=np.full(p, -np.inf),
            feature=np.full(p, -1, dtype=np.int64),
            bin=np.zeros(p, dtype=np.int64),
            missing_left=np.zeros(p, dtype=bool),
            apart=np.zeros(p, dtype=bool),
            left_codes={},
            right_codes={},
        )


class Grower:
    """Grows one tree on binned data; ``weights`` are per-row counts (bootstrap draws)."""

    whole_sums = False  # every class sum a whole number the compiled scan may add in any order

    def __init__(
        self,
        data: Binned,
        y: np.ndarray,
        n_classes: int,
        params: GrowParams,
        weights: np.ndarray | None = None,
        rng: np.random.Generator | None = None,
    ) -> None:
        self.data = data
        self.params = params
        self.regression = params.regression
        self.rng = rng
        w = np.ones(y.size) if weights is None else weights.astype(np.float64)
        # every row counts once: class counts are a plain bincount (the same numbers,
        # without adding a weight per row)
        self.unit = weights is None
        if self.regression:
            centre = float(np.average(y, weights=w)) if w.sum() > 0 else 0.0
            self.centre = centre
            yc = y.astype(np.float64) - centre
            self.channels = np.stack([w, w * yc, w * yc * yc], axis=1)
            self.n_channels = 3
        else:
            self.centre = 0.0
            self.y = y.astype(np.int64)
            self.w = w
            self.n_channels = n_classes
        self.rows_in_play = np.flatnonzero(w > 0)
        # whole-number class sums below 2**53 (squares included) are the same double in any
        # order of addition, so the compiled scan may add them its own way (see _compiled_cuts)
        self.whole_sums = not self.regression and bool(np.all(w == np.floor(w))) and float(w.sum()) < WHOLE_SUMS
        self.tree = GrownTree()
        # the nodes made last (first id, their channel sums): the next count reads their
        # sums from here, not from a row per node (see _node_stats)
        self.fresh: tuple[int, np.ndarray] = (0, np.zeros((0, 0)))
        self.node_rows: dict[int, np.ndarray] = {}
        self.split_bin: dict[int, int] = {}  # numeric splits: the last bin sent left
        self.root_weight = 1.0
        self.pure_tolerance = PURE
        self.signs = None if params.monotone is None else np.array(params.monotone, dtype=np.int64)

    # -- node bookkeeping

    def _sums(self, rows: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
        """Channel sums per group of ``rows`` (class weights, or w/Σwy/Σwy²)."""
        if self.regression:
            return np.stack(
                [np.bincount(group, weights=self.channels[rows, c], minlength=n_groups) for c in range(3)], axis=1
            )
        k = self.n_channels
        if self.unit:
            flat = np.bincount(group * k + self.y[rows], minlength=n_groups * k).astype(np.float64)
        else:
            flat = np.bincount(group * k + self.y[rows], weights=self.w[rows], minlength=n_groups * k)
        return flat.reshape(n_groups, k)

    def _new_nodes(self, pieces: list[np.ndarray], stats: np.ndarray, depths: list[int]) -> int:
        """Append nodes (rows, channel sums, depth each); returns the first new id."""
        t = self.tree
        first = len(t.feature)
        k = len(pieces)
        t.feature.extend([-1] * k)
        t.threshold.extend([float("nan")] * k)
        t.left_codes.extend([()] * k)
        t.right_codes.extend([()] * k)
        t.missing_left.extend([False] * k)
        t.left.extend([-1] * k)
        t.right.extend([-1] * k)
        t.depth.extend(depths)
        t.stats.extend(list(stats))
        self.fresh = (first, stats)
        t.impurity.extend(impurity(stats, self.params.criterion).tolist())
        t.improvement.extend([0.0] * k)
        for i, rows in enumerate(pieces):
            self.node_rows[first + i] = rows
        return first

    def _node_stats(self, nodes: list[int]) -> np.ndarray:
        """The nodes' channel sums, a row each: taken from the sums the nodes were made with
        where they are all among the last made (a level's children are), which spares a
        row per node (a forest's level has thousands)."""
        first, fresh = self.fresh
        at = np.asarray(nodes, dtype=np.int64) - first
        if at.size and at.min() >= 0 and at.max() < fresh.shape[0]:
            return fresh[at]
        return stats_of(self.tree, nodes)

    def _splittable(self, nodes: list[int]) -> list[int]:
        p = self.params
        t = self.tree
        w = node_weight(self._node_stats(nodes), self.regression)
        ok = (w >= p.min_samples_split) & (w >= 2 * p.min_samples_leaf)
        ok &= np.array([t.impurity[n] for n in nodes]) > self._tolerance(nodes)
        if p.max_depth is not None:
            ok &= np.array([t.depth[n] for n in nodes]) < p.max_depth
        return [n for n, keep in zip(nodes, ok.tolist(), strict=True) if keep]

    # -- growth

    def _root(self) -> tuple[np.ndarray, np.ndarray]:
        """The root's rows and channel sums."""
        rows = self.rows_in_play
        return rows, self._sums(rows, np.zeros(rows.size, dtype=np.int64), 1)

    def grow(self) -> GrownTree:
        rows, root_stats = self._root()
        self.root_weight = float(node_weight(root_stats, self.regression)[0])
        root = self._new_nodes([rows], root_stats, [0])
        self.pure_tolerance = PURE * max(1.0, self.tree.impurity[root])
        limit = self.params.max_leaf_nodes
        pending = [root]
        heap: list[tuple[float, int]] = []
        n_leaves = 1
        while True:
            if pending:
                self._count(pending, heap)
                pending = []
            if not heap or (limit is not None and n_leaves >= limit):
                break
            if self.params.budgeted and budget.ran_out(f"tree: growth stopped at {n_leaves:,} leaves"):
                break
            if limit is None:
                chosen = [heapq.heappop(heap)[1] for _ in range(len(heap))]
            else:
                chosen = [heapq.heappop(heap)[1]]
            pending.extend(self._split(chosen))
            n_leaves += len(chosen)
            if limit is None:
                continue
            # pop on while no uncounted child could beat the best counted leaf
            while heap and n_leaves < limit and -heap[0][0] >= self._bound(pending):
                pending.extend(self._split([heapq.heappop(heap)[1]]))
                n_leaves += 1
        self.node_rows.clear()
        self._unsplit_leaves()
        return self.tree

    def _unsplit_leaves(self) -> None:
        """Forget the best split of leaves the limit left unsplit."""
        t = self.tree
        for node in range(len(t.feature)):
            if t.left[node] < 0:
                t.feature[node] = -1
                t.threshold[node] = float("nan")
                t.left_codes[node] = t.right_codes[node] = ()
                t.missing_left[node] = False
                t.improvement[node] = 0.0

    def _bound(self, nodes: list[int]) -> float:
        """An upper bound of F over nodes whose best split is not counted yet."""
        t = self.tree
        return max(
            (t.impurity[n] * float(node_weight(t.stats[n], self.regression)) / self.root_weight for n in nodes),
            default=-np.inf,
        )

    def _count(self, nodes: list[int], heap: list[tuple[float, int]]) -> None:
        """Find the best split of each node; push those worth splitting on the heap by F."""
        candidates = self._splittable(nodes)
        if not candidates:
            return
        best = self._best_splits(candidates)
        t = self.tree
        weight = node_weight(self._node_stats(candidates), self.regression)
        finite = np.isfinite(best.gain)
        f_all = np.where(finite, best.gain, 0.0) * weight / self._root_weights(candidates)
        worth = finite & (f_all + 1e-15 >= self.params.min_impurity_decrease)
        threshold_at = {}
        for j in np.unique(best.feature[worth]).tolist():
            if not self.data.categorical[j]:
                threshold_at[j] = self.data.edges[j]
        for i in np.flatnonzero(worth).tolist():
            node = candidates[i]
            f_r = float(f_all[i])
            j = int(best.feature[i])
            t.feature[node] = j
            t.missing_left[node] = bool(best.missing_left[i])
            t.improvement[node] = f_r
            if self.data.categorical[j]:
                t.left_codes[node] = best.left_codes[i]
                t.right_codes[node] = best.right_codes[i]
            elif best.apart[i]:
                # every present value goes left: x < +inf, missing values right
                self.split_bin[node] = self.data.n_bins[j] - 1
                t.threshold[node] = float("inf")
            else:
                self.split_bin[node] = int(best.bin[i])
                t.threshold[node] = float(threshold_at[j][int(best.bin[i])])
            heapq.heappush(heap, (-f_r, node))

    def _split(self, nodes: list[int]) -> list[int]:
        """Make the two children of each node whose split is decided; returns them."""
        t = self.tree
        sizes = [self.node_rows[n].size for n in nodes]
        rows = np.concatenate([self.node_rows.pop(n) for n in nodes])
        kernel = None if self.regression else encoded.compiled_kernel(rows.size * self.data.n_features)
        if kernel is not None:
            pieces, stats = self._compiled_children(kernel, nodes, sizes, rows)
        else:
            pieces, stats = self._children(nodes, sizes, rows)
        depths = [t.depth[n] + 1 for n in nodes for _ in (0, 1)]
        first = self._new_nodes(pieces, stats, depths)
        for i, n in enumerate(nodes):
            t.left[n], t.right[n] = first + 2 * i, first + 2 * i + 1
        return list(range(first, first + 2 * len(nodes)))

    # -- monotone constraints: a split on a constrained feature must order its children's
    # values the constraint's way (their values are then kept in order by
    # rulecli.search.monotone.monotone_tree)

    def _value(self, sums: np.ndarray) -> np.ndarray:
        """The second class's share, or the mean (centred), of channel sums."""
        w = node_weight(sums, self.regression)
        return np.divide(sums[..., 1], w, out=np.zeros_like(w, dtype=np.float64), where=w > 0)

    def _directions(self, nodes: list[int], j: int, on_j: np.ndarray) -> np.ndarray:
        """Per node of ``on_j`` (positions in ``nodes``) splitting on categorical feature
        ``j``, per level code: 1 = left, 0 = right, 2 = as missing (missing, or absent at the
        node)."""
        t = self.tree
        table = np.full((on_j.size, self.data.n_bins[j] + 1), 2, dtype=np.int8)
        for s, i in enumerate(on_j.tolist()):
            table[s, list(t.left_codes[nodes[i]])] = 1
            table[s, list(t.right_codes[nodes[i]])] = 0
        return table

    def _children(self, nodes: list[int], sizes: list[int], rows: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
        """Each node's rows dealt to its two children, and the children's channel sums."""
        t = self.tree
        local = np.repeat(np.arange(len(nodes)), sizes)
        feature = np.array([t.feature[n] for n in nodes])
        missing_left = np.array([t.missing_left[n] for n in nodes])
        row_feature = feature[local]
        goes_left = np.empty(rows.size, dtype=bool)
        for j in np.unique(feature).tolist():
            at = np.flatnonzero(row_feature == j)
            code = self._codes(j, rows[at])
            node = local[at]
            nb = self.data.n_bins[j]
            on_j = np.flatnonzero(feature == j)
            if self.data.categorical[j]:
                slot = np.zeros(len(nodes), dtype=np.int64)
                slot[on_j] = np.arange(on_j.size)
                direction = self._directions(nodes, j, on_j)[slot[node], code]
            else:
                last_left = np.zeros(len(nodes), dtype=np.int64)
                last_left[on_j] = [self.split_bin[nodes[i]] for i in on_j.tolist()]
                direction = np.where(code == nb, 2, code <= last_left[node]).astype(np.int8)
            goes_left[at] = np.where(direction == 2, missing_left[node], direction == 1)
        child = 2 * local + (~goes_left)
        counts = np.bincount(child, minlength=2 * len(nodes))
        bounds = np.concatenate(([0], np.cumsum(counts)))
        return cut_at(rows[np.argsort(child, kind="stable")], bounds), self._sums(rows, child, 2 * len(nodes))

    def _compiled_children(
        self, kernel: ModuleType, nodes: list[int], sizes: list[int], rows: np.ndarray
    ) -> tuple[list[np.ndarray], np.ndarray]:
        """:meth:`_children` by the compiled kernel: each node's rows are a range of
        ``rows``, so a feature's directions are set range by range and the rows dealt to
        the children in one pass, without a sort."""
        t = self.tree
        starts = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        feature = np.array([t.feature[n] for n in nodes])
        missing_left = np.array([t.missing_left[n] for n in nodes])
        data_rows = self._data_rows(rows)
        goes_left = np.empty(rows.size, dtype=bool)
        for j in np.unique(feature).tolist():
            on_j = np.flatnonzero(feature == j)
            if self.data.categorical[j]:
                table, last_left = self._directions(nodes, j, on_j), np.zeros(0, dtype=np.int64)
            else:
                table = np.zeros((0, 0), dtype=np.int8)
                last_left = np.array([self.split_bin[nodes[i]] for i in on_j.tolist()], dtype=np.int64)
            kernel.directions(
                self.data.codes[j],
                data_rows,
                starts,
                on_j,
                self.data.categorical[j],
                table,
                last_left,
                missing_left,
                self.data.n_bins[j],
                goes_left,
            )
        labels = self.y[rows]
        weights = labels if self.unit else self.w[rows]  # unused when unit
        dealt, bounds, stats = kernel.deal(rows, goes_left, starts, labels, weights, self.unit, self.n_channels)
        return cut_at(dealt, bounds), stats

    # -- the batched split search

    def _feature_choice(self, nodes: list[int]) -> np.ndarray | None:
        """Which features each node may split on (forests draw m at random per node)."""
        m = self.params.max_features
        d = self.data.n_features
        if m is None or m >= d:
            return None
        assert self.rng is not None
        return draw_features(self.rng, len(nodes), d, m)

    # -- what a forest grown together (ForestGrower) answers per tree

    def _data_rows(self, rows: np.ndarray) -> np.ndarray:
        return rows

    def _codes(self, j: int, rows: np.ndarray) -> np.ndarray:
        return self.data.codes[j][self._data_rows(rows)]

    def _tolerance(self, nodes: list[int]) -> float | np.ndarray:
        return self.pure_tolerance

    def _root_weights(self, nodes: list[int]) -> float | np.ndarray:
        return self.root_weight

    def _best_splits(self, nodes: list[int]) -> Best:
        t = self.tree
        p = len(nodes)
        rows = np.concatenate([self.node_rows[n] for n in nodes])
        local = np.repeat(np.arange(p, dtype=np.int64), [self.node_rows[n].size for n in nodes])
        node_stats = self._node_stats(nodes)
        node_impurity = np.array([t.impurity[n] for n in nodes])
        allowed = self._feature_choice(nodes)
        best = Best.none(p)
        kernel = None if self.regression else encoded.compiled_kernel(rows.size * self.data.n_features)
        if kernel is not None:
            self._compiled_splits(kernel, nodes, rows, allowed, node_stats, node_impurity, best)
            return best
        for j in range(self.data.n_features):
            if allowed is not None:
                take = allowed[local, j]
                if not take.any():
                    continue
                self._feature_splits(j, rows[take], local[take], p, node_stats, node_impurity, best)
            else:
                self._feature_splits(j, rows, local, p, node_stats, node_impurity, best)
        return best

    def _compiled_splits(
        self,
        kernel: ModuleType,
        nodes: list[int],
        rows: np.ndarray,
        allowed: np.ndarray | None,
        node_stats: np.ndarray,
        node_impurity: np.ndarray,
        best: Best,
    ) -> None:
        """:meth:`_feature_splits` of every feature, its cells counted by the compiled
        kernel: the batch's rows, labels and weights are gathered once, not per feature."""
        starts = np.concatenate(([0], np.cumsum([self.node_rows[n].size for n in nodes]))).astype(np.int64)
        data_rows = self._data_rows(rows)
        labels = self.y[rows]
        weights = labels if self.unit else self.w[rows]  # unused when unit
        everywhere = np.ones(len(nodes), dtype=bool)
        # where the compiled scan of the cuts applies, a numeric feature's count, cuts and
        # winners are one compiled call
        fused = self._gini_compiles(self.n_channels)
        if fused:
            node_stats = np.ascontiguousarray(node_stats, dtype=np.float64)
            node_impurity = np.ascontiguousarray(node_impurity, dtype=np.float64)
        msl = float(self.params.min_samples_leaf)
        for j in range(self.data.n_features):
            take = everywhere if allowed is None else allowed[:, j]
            if not take.any():
                continue
            # what the count (kernel.cells) reads, which the fused call reads first too
            counted = (self.data.codes[j], data_rows, labels, weights, self.unit, starts, take)
            counted += (self.data.n_bins[j], self.n_channels)
            if fused and not self.data.categorical[j] and (self.signs is None or not self.signs[j]):
                kernel.numeric_splits(*counted, node_stats, node_impurity, msl, j, *best.numeric())
                continue
            keys, cell_sums, missing_sums = kernel.cells(*counted)
            self._cell_splits(j, keys, cell_sums, missing_sums, node_stats, node_impurity, best)

    def _feature_splits(
        self,
        j: int,
        rows: np.ndarray,
        local: np.ndarray,
        p: int,
        node_stats: np.ndarray,
        node_impurity: np.ndarray,
        best: Best,
    ) -> None:
        nb = self.data.n_bins[j]
        code = self._codes(j, rows).astype(np.int64)
        if p * nb <= max(4 * rows.size, 4096):
            # one count of every (node, bin) cell, the missing values' bin (nb) included
            sums = self._sums(rows, local * (nb + 1) + code, p * (nb + 1)).reshape(p, nb + 1, -1)
            missing_sums = sums[:, nb]
            cell_sums = sums[:, :nb].reshape(p * nb, -1)
            filled = node_weight(cell_sums, self.regression) > 0
            keys = np.flatnonzero(filled)
            cell_sums = cell_sums[filled]
            self._cell_splits(j, keys, cell_sums, missing_sums, node_stats, node_impurity, best)
            return
        # more cells than rows: count only the cells that hold some
        missing = code == nb
        missing_sums = self._sums(rows[missing], local[missing], p)
        present = ~missing
        keys, inverse = np.unique(local[present] * nb + code[present], return_inverse=True)
        cell_sums = self._sums(rows[present], inverse.ravel(), keys.size)
        self._cell_splits(j, keys, cell_sums, missing_sums, node_stats, node_impurity, best)

    def _cell_splits(
        self,
        j: int,
        keys: np.ndarray,
        cell_sums: np.ndarray,
        missing_sums: np.ndarray,
        node_stats: np.ndarray,
        node_impurity: np.ndarray,
        best: Best,
    ) -> None:
        """Feature ``j``'s best split per node from its cells: ``keys`` (node * n_bins + bin,
        ascending) of the non-empty present cells, their channel sums, and each node's sums
        over its missing values."""
        if keys.size == 0:
            return
        nb = self.data.n_bins[j]
        cell_node = keys // nb
        cell_bin = keys % nb
        if not self.data.categorical[j]:
            self._scan(
                j, cell_node, cell_bin[None], cell_sums[None], missing_sums, node_stats, node_impurity, best, None
            )
            return
        # each order's cells by node, then share, then level: the cells come by node and
        # level already, so a stable sort by node and share keeps ties in level order (per
        # order two keys: 2-3x faster than one sort of four keys over all orders at once)
        order = np.stack([np.lexsort((share, cell_node)) for share in self._level_orders(cell_sums)])
        # nodes come first in every order, so the node of each position is the same in all
        self._scan(
            j, cell_node[order[0]], cell_bin[order], cell_sums[order], missing_sums, node_stats, node_impurity, best, j
        )

    def _level_orders(self, cell_sums: np.ndarray) -> list[np.ndarray]:
        """The orders of a node's levels in which a prefix/suffix cut is tried."""
        w = node_weight(cell_sums, self.regression)
        if self.regression:
            return [cell_sums[:, 1] / w]
        k = cell_sums.shape[1]
        if k == 2:
            return [cell_sums[:, 1] / w]
        return [cell_sums[:, c] / w for c in range(k)]

    def _scan(
        self,
        j: int,
        cell_node: np.ndarray,
        cell_bin: np.ndarray,
        cell_sums: np.ndarray,
        missing_sums: np.ndarray,
        node_stats: np.ndarray,
        node_impurity: np.ndarray,
        best: Best,
        categorical: int | None,
    ) -> None:
        """Evaluate the cut after every cell of every node: ``cell_bin`` (cells) and
        ``cell_sums`` (cells, channels) in one order, or stacked (orders, cells) and
        (orders, cells, channels) for several; cells are sorted by node, the same nodes at
        the same positions in every order."""
        sign = 0 if self.signs is None or categorical is not None else int(self.signs[j])
        cuts = self._cut_gains(cell_node, cell_sums, missing_sums, node_stats, node_impurity, sign)
        if cuts is not None:
            _record_winners(best, j, cuts, cell_node, cell_bin, node_stats.shape[0], categorical)

    def _left_sums(
        self, cell_node: np.ndarray, cell_sums: np.ndarray, starts: np.ndarray, segment: np.ndarray
    ) -> np.ndarray:
        """Per cell: the sums of its node's cells up to it, from one running sum over the
        batch (along each order: the additions each order alone would make)."""
        cum = np.cumsum(cell_sums, axis=-2)
        base = np.where(starts[:, None] > 0, cum[..., np.maximum(starts - 1, 0), :], 0.0)
        return cum - base[..., segment, :]

    def _gini_compiles(self, n_classes: int) -> bool:
        """Whether the compiled Gini scan gives NumPy's gains to the bit for ``n_classes``
        class sums per cell. NumPy adds a node's class sums in BLAS's order, which the
        compiled loop does not reproduce, except for two classes (a sum of two doubles is
        the same in either order) or whole-number sums (exact in any order); weighted rows
        of more classes, entropy (Numba's log2 is not NumPy's) and regression keep the
        NumPy form."""
        if self.regression or self.params.criterion != "gini":
            return False
        return n_classes == 2 or self.whole_sums

    def _compiled_cuts(
        self,
        cell_node: np.ndarray,
        cell_sums: np.ndarray,
        missing_sums: np.ndarray,
        node_stats: np.ndarray,
        node_impurity: np.ndarray,
        sign: int,
        starts: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The cuts of Gini without a monotone constraint from the compiled scan, once the
        kernels are loaded and :meth:`_gini_compiles`; None otherwise."""
        if sign or not self._gini_compiles(cell_sums.shape[-1]):
            return None
        kernel = encoded.compiled_kernel(0)  # loaded by a large batch's counts
        if kernel is None:
            return None
        return kernel.gini_cuts(
            np.ascontiguousarray(cell_node, dtype=np.int64),
            np.ascontiguousarray(cell_sums, dtype=np.float64),
            np.ascontiguousarray(starts, dtype=np.int64),
            np.ascontiguousarray(node_stats, dtype=np.float64),
            np.ascontiguousarray(missing_sums, dtype=np.float64),
            np.ascontiguousarray(node_impurity, dtype=np.float64),
            float(self.params.min_samples_leaf),
            bool(node_weight(missing_sums, False).any()),
        )

    def _cut_gains(
        self,
        cell_node: np.ndarray,
        cell_sums: np.ndarray,
        missing_sums: np.ndarray,
        node_stats: np.ndarray,
        node_impurity: np.ndarray,
        sign: int = 0,
    ) -> _Cuts | None:
        """The gain of the cut after each cell of each order (-inf where a child would be too
        small), with the side missing values take; None when no cut is allowed. The cut
        after a node's last cell is the split of present from missing values (a feature
        whose only level is present or missing, as in market-basket data, or a number
        missing for a reason, is of use only so; scikit-learn >= 1.3 weighs this split too)."""
        criterion = self.params.criterion
        first = run_starts(cell_node)
        starts = np.flatnonzero(first)
        segment = np.cumsum(first) - 1
        compiled = self._compiled_cuts(cell_node, cell_sums, missing_sums, node_stats, node_impurity, sign, starts)
        if compiled is not None:
            gain, miss_left, apart = compiled
            return _Cuts(gain, miss_left, apart, starts, segment) if np.isfinite(gain).any() else None
        left = self._left_sums(cell_node, cell_sums, starts, segment)
        present_total = node_stats - missing_sums
        right = present_total[cell_node] - left
        # after a node's last cell nothing present is right of the cut; a running sum of
        # fractional weights leaves a rounding there (up to 8e-13 on a 1,386-row table),
        # which made that cut a split of its own past the last threshold (an IndexError)
        right[..., np.append(starts[1:], cell_node.size) - 1, :] = 0.0
        wl = node_weight(left, self.regression)
        wr = node_weight(right, self.regression)
        missing_weight = node_weight(missing_sums, self.regression)
        apart = (wl > 0) & (wr <= 0) & (missing_weight[cell_node] > 0)
        valid = ((wl > 0) & (wr > 0)) | apart
        larger_left = (wl >= wr) & ~apart
        msl = self.params.min_samples_leaf
        node_i = node_impurity[cell_node]

        def gains(lsum: np.ndarray, rsum: np.ndarray, lw: np.ndarray, rw: np.ndarray) -> np.ndarray:
            total = lw + rw
            g = node_i - (lw / total) * impurity(lsum, criterion, lw) - (rw / total) * impurity(rsum, criterion, rw)
            ok = valid & (lw >= msl) & (rw >= msl)
            if sign:  # the low values' child may not beat the high values' the wrong way
                ok &= apart | (sign * (self._value(rsum) - self._value(lsum)) >= -1e-12)
            return np.where(ok, g, -np.inf)

        if not missing_weight.any():
            gain, miss_left = gains(left, right, wl, wr), larger_left
        else:
            # missing rows go to the side where the cut gains more (scikit-learn >= 1.3 tries
            # both); on a tie, or where the node has none, to the side with more rows
            miss, extra = missing_sums[cell_node], missing_weight[cell_node]
            to_left = np.where(apart, -np.inf, gains(left + miss, right, wl + extra, wr))
            to_right = gains(left, right + miss, wl, wr + extra)
            miss_left = (to_left > to_right) | ((to_left == to_right) & larger_left)
            gain = np.where(miss_left, to_left, to_right)
        if not np.isfinite(gain).any():
            return None
        return _Cuts(gain, miss_left, apart, starts, segment)


def stats_of(tree: GrownTree, nodes: list[int]) -> np.ndarray:
    """The nodes' channel sums, a row each (``np.array`` of the rows: ``np.stack``'s checks
    cost more than the copy over a level of thousands of nodes)."""
    return np.array([tree.stats[n] for n in nodes])


def cut_at(values: np.ndarray, bounds: np.ndarray) -> list[np.ndarray]:
    """``values`` cut at ``bounds`` (from 0 to its length): the views ``np.split`` gives,
    without its two axis swaps per piece (a forest's level deals rows to thousands of nodes)."""
    edges = bounds.tolist()
    return [values[a:b] for a, b in itertools.pairwise(edges)]


def draw_features(rng: np.random.Generator, n_nodes: int, d: int, m: int) -> np.ndarray:
    order = np.argsort(rng.random((n_nodes, d)), axis=1)[:, :m]
    allowed = np.zeros((n_nodes, d), dtype=bool)
    np.put_along_axis(allowed, order, True, axis=1)
    return allowed


@dataclass(frozen=True)
class _Cuts:
    """Per cell: the gain of cutting after it and whether missing values go left; the cells'
    node segments (first cell of each, segment of each cell)."""

    gain: np.ndarray
    miss_left: np.ndarray
    apart: np.ndarray
    starts: np.ndarray
    segment: np.ndarray


def _record_winners(
    best: Best,
    j: int,
    cuts: _Cuts,
    cell_node: np.ndarray,
    cell_bin: np.ndarray,
    n_nodes: int,
    categorical: int | None,
) -> None:
    """Keep, per node, feature ``j``'s best cut where it beats the best found so far, the
    orders (rows of ``cuts`` and ``cell_bin`` when stacked) tried one after another."""
    gain, miss_left, apart = np.atleast_2d(cuts.gain, cuts.miss_left, cuts.apart)
    cell_bin = np.atleast_2d(cell_bin)
    kernel = encoded.compiled_kernel(0)
    if kernel is None:
        won_order, won_cell = _winners(best, j, gain, miss_left, apart, cell_bin, cuts, cell_node, n_nodes)
    else:
        won_order, won_cell = kernel.record_winners(
            np.ascontiguousarray(gain, dtype=np.float64),
            np.ascontiguousarray(miss_left),
            np.ascontiguousarray(apart),
            np.ascontiguousarray(cell_bin, dtype=np.int64),
            np.ascontiguousarray(cuts.starts, dtype=np.int64),
            np.ascontiguousarray(cell_node, dtype=np.int64),
            j,
            *best.numeric(),
        )
    if categorical is None:  # a node's level sets are read only where a categorical feature won
        return
    starts, segment, n = cuts.starts, cuts.segment, cell_node.size
    for node in np.flatnonzero(won_order >= 0).tolist():
        c, cell = int(won_order[node]), int(won_cell[node])
        seg = segment[cell]
        start = starts[seg]
        end = starts[seg + 1] if seg + 1 < starts.size else n
        best.left_codes[node] = tuple(sorted(cell_bin[c, start : cell + 1].tolist()))
        best.right_codes[node] = tuple(sorted(cell_bin[c, cell + 1 : end].tolist()))


def _winners(
    best: Best,
    j: int,
    gain: np.ndarray,
    miss_left: np.ndarray,
    apart: np.ndarray,
    cell_bin: np.ndarray,
    cuts: _Cuts,
    cell_node: np.ndarray,
    n_nodes: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The NumPy form of ``kernel.record_winners`` (small batches, before the kernels are
    loaded): updates ``best``; returns per node the order and cell that won, -1 if none."""
    starts, segment = cuts.starts, cuts.segment
    n = cell_node.size
    seg_max = np.maximum.reduceat(gain, starts, axis=1)
    seg_node = cell_node[starts]
    # the first cell reaching its node's maximum: the lowest threshold among ties
    hit = (gain == seg_max[:, segment]) & np.isfinite(gain)
    winner = np.minimum.reduceat(np.where(hit, np.arange(n), n), starts, axis=1)
    won_order = np.full(n_nodes, -1, dtype=np.int64)
    won_cell = np.zeros(n_nodes, dtype=np.int64)
    for c in range(gain.shape[0]):
        found = winner[c] < n
        nodes, cells = seg_node[found], winner[c][found]
        so_far = best.gain[nodes]
        known = np.isfinite(so_far)
        margin = 1e-12 * np.maximum(1.0, np.abs(np.where(known, so_far, 0.0)))
        better = ~known | (seg_max[c][found] > np.where(known, so_far, 0.0) + margin)
        nodes_won, cells_won = nodes[better], cells[better]
        best.gain[nodes_won] = gain[c, cells_won]
        best.feature[nodes_won] = j
        best.bin[nodes_won] = cell_bin[c, cells_won]
        best.missing_left[nodes_won] = miss_left[c, cells_won]
        best.apart[nodes_won] = apart[c, cells_won]
        won_order[nodes_won] = c
        won_cell[nodes_won] = cells_won
    return won_order, won_cell
