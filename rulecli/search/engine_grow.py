"""A tree grown from the counts an engine returns, not rows in memory (:class:`EngineGrower`)."""

from __future__ import annotations

import numpy as np

from rulecli.counting.binned import Binned
from rulecli.engines import Bins, Frontier, Split, TreeHistograms
from rulecli.search.grow import PURE, Best, Grower, GrownTree, GrowParams, node_weight, stats_of


class EngineGrower(Grower):
    """A tree grown from an engine's counts instead of rows in memory: each batch of pending
    nodes is one :meth:`~rulecli.engines.EngineTable.histograms` pass over the table (the
    partial tree routes every row to its node), and the split choice is :class:`Grower`'s
    own, on the same cells (a number's cells: rows, Σy and Σy²). Of two siblings only the
    smaller is counted: the other's cells are its parent's less the sibling's (histogram
    subtraction, as LightGBM does), so a pass aggregates at most half the rows below the
    root. A split's children's sums are sums of the cells that go each way. Given the same
    bins and whole-number counts the tree equals the one :class:`Grower` grows in memory (a
    number's sums, added in the engine's order, may differ in their last bits); with
    ``bag``, rows count as their draws in that bootstrap, as a forest's trees weigh them."""

    def __init__(
        self,
        table: TreeHistograms,
        bins: Bins,
        params: GrowParams,
        rng: np.random.Generator | None = None,
        bag: tuple[int, int] | None = None,
    ) -> None:
        names = table.schema.feature_names
        self.table, self.bins, self.bag = table, bins, bag
        self.data = Binned(names, bins.categorical, bins.levels, (), bins.n_bins, bins.edges)
        self.params = params
        self.regression = params.regression
        self.rng = rng
        # a number's cells sum it less the table's mean, as memory sums it less the rows' mean
        self.centre = table.centre if self.regression else 0.0
        self.n_channels = 3 if self.regression else len(table.schema.target.classes)
        self.tree = GrownTree()
        self.fresh = (0, np.zeros((0, 0)))
        self.node_rows = {}
        self.split_bin = {}
        self.root_weight = 1.0
        self.pure_tolerance = PURE
        self.signs = None if params.monotone is None else np.array(params.monotone, dtype=np.int64)
        self.parent: dict[int, int] = {}
        self.batch_cells: dict[int, list[np.ndarray]] = {}  # batch node -> (n_bins + 1, k) per feature
        self.split_cells: dict[int, list[np.ndarray]] = {}  # split node -> its cells, until its children have theirs

    def _root(self) -> tuple[np.ndarray, np.ndarray]:
        sums = self.table.root_sums(self.bins, self.bag)
        return np.empty(0, dtype=np.int64), sums.astype(np.float64)[None, :]

    def leaf_frontier(self, order: list[int]) -> Frontier:
        """The grown tree with each leaf's slot its place in ``order`` (the model's node order)."""
        return self._frontier(order)

    def _frontier(self, counted: list[int]) -> Frontier:
        t = self.tree
        slot = {node: i for i, node in enumerate(counted)}
        parts: list[Split | int] = []
        for n in range(len(t.feature)):
            if t.left[n] >= 0:
                parts.append(
                    Split(
                        t.feature[n],
                        self.split_bin.get(n, -1),
                        t.left_codes[n],
                        t.right_codes[n],
                        t.missing_left[n],
                        t.left[n],
                        t.right[n],
                    )
                )
            else:
                parts.append(slot.get(n, -1))
        return Frontier(tuple(parts), len(counted))

    def _plan(self, nodes: list[int]) -> tuple[list[int], dict[int, int]]:
        """The nodes to count (the smaller of each pair of siblings, tie: the left) and the
        batch nodes to derive, each with the sibling it is derived from."""
        t = self.tree
        counted: list[int] = []
        derived: dict[int, int] = {}
        for n in nodes:
            p = self.parent.get(n)
            if p is None or p not in self.split_cells:
                counted.append(n)
                continue
            left, right = t.left[p], t.right[p]
            weight = node_weight(np.stack([t.stats[left], t.stats[right]]), self.regression)
            smaller = right if weight[1] < weight[0] else left
            if n == smaller:
                counted.append(n)
            else:
                derived[n] = smaller
        counted += sorted(set(derived.values()) - set(counted))
        return counted, derived

    def _best_splits(self, nodes: list[int]) -> Best:
        t = self.tree
        p = len(nodes)
        k = self.n_channels
        node_stats = stats_of(t, nodes)
        node_impurity = np.array([t.impurity[n] for n in nodes])
        allowed = self._feature_choice(nodes)
        best = Best.none(p)
        counted, derived = self._plan(nodes)
        histograms = self.table.histograms(self.bins, self._frontier(counted), self.bag)
        cells: dict[int, list[np.ndarray]] = {n: [] for n in counted}
        for j, h in enumerate(histograms):
            dense = np.zeros((len(counted), self.data.n_bins[j] + 1, k))
            dense[h.slot, h.code, h.cls] = h.rows  # each (slot, bin, class) cell comes once
            for i, n in enumerate(counted):
                cells[n].append(dense[i])
        for n, sibling in derived.items():
            parent = self.split_cells[self.parent[n]]
            cells[n] = [whole - part for whole, part in zip(parent, cells[sibling], strict=True)]
            if self.regression:
                # a bin without rows has no sum: a difference of sums leaves a rounding in it
                for cell in cells[n]:
                    cell[cell[:, 0] <= 0] = 0.0
        for n in nodes:
            self.split_cells.pop(self.parent.get(n, -1), None)
        for j in range(self.data.n_features):
            nb = self.data.n_bins[j]
            dense = np.stack([cells[n][j] for n in nodes])
            if allowed is not None:
                if not allowed[:, j].any():
                    continue
                dense = np.where(allowed[:, j, None, None], dense, 0.0)
            missing_sums = dense[:, nb, :]
            present = dense[:, :nb, :].reshape(p * nb, k)
            keys = np.flatnonzero(node_weight(present, self.regression) > 0)
            self._cell_splits(j, keys, present[keys], missing_sums, node_stats, node_impurity, best)
        self.batch_cells = {n: cells[n] for n in nodes}
        return best

    def _count(self, nodes: list[int], heap: list[tuple[float, int]]) -> None:
        super()._count(nodes, heap)
        t = self.tree
        if self.params.max_leaf_nodes is None:
            # grown level by level, a batch is the whole of its level: the cells of the
            # splits above it are spent (kept, the splits whose children were leaves held
            # 1.7 GB by the middle of a million-row regression tree)
            self.split_cells = {}
        for node, cells in self.batch_cells.items():
            if t.feature[node] >= 0:
                self.split_cells[node] = cells
        self.batch_cells = {}

    def _split(self, nodes: list[int]) -> list[int]:
        t = self.tree
        stats = []
        for n in nodes:
            j = t.feature[n]
            cells = self.split_cells[n][j]
            nb = self.data.n_bins[j]
            goes_left = np.full(nb + 1, t.missing_left[n])
            if self.data.categorical[j]:
                goes_left[list(t.left_codes[n])] = True
                goes_left[list(t.right_codes[n])] = False
            else:
                goes_left[:nb] = np.arange(nb) <= self.split_bin[n]
            stats += [cells[goes_left].sum(axis=0), cells[~goes_left].sum(axis=0)]
        depths = [t.depth[n] + 1 for n in nodes for _ in (0, 1)]
        empty = np.empty(0, dtype=np.int64)
        first = self._new_nodes([empty] * (2 * len(nodes)), np.stack(stats), depths)
        for i, n in enumerate(nodes):
            t.left[n], t.right[n] = first + 2 * i, first + 2 * i + 1
            self.parent[first + 2 * i] = self.parent[first + 2 * i + 1] = n
        return list(range(first, first + 2 * len(nodes)))
