"""A forest's trees grown together: one batch of pending nodes across every tree, so a
level costs one pass per feature for the whole forest (:class:`ForestGrower`)."""

from __future__ import annotations

import numpy as np

from rulecli.counting.binned import Binned
from rulecli.search.grow import (
    PURE,
    Best,
    Grower,
    GrownTree,
    GrowParams,
    draw_features,
    node_weight,
)
from rulecli.stats import run_starts


class ForestGrower(Grower):
    """Several trees grown together, level by level: tree t's bootstrap copy of row r is an
    *instance* of its own, every tree's pending nodes are one batch, so a level costs one
    pass per feature for all the trees (a small table's forest was per-level Python
    overhead, tree after tree). Each tree draws its features from its own generator, in its
    own node order, and each tree equals the one :class:`Grower` grows alone: class counts
    are integer sums; a regression tree's sums are made in the order growing it alone
    makes them (its own centre, its nodes side by side in a batch, running sums that start
    afresh at each tree). Growth without a leaf limit only (every splittable node of a
    level is split)."""

    def __init__(
        self,
        data: Binned,
        y: np.ndarray,
        n_classes: int,
        params: GrowParams,
        weights: list[np.ndarray],
        rngs: list[np.random.Generator],
    ) -> None:
        assert params.max_leaf_nodes is None
        rows = [np.flatnonzero(w > 0) for w in weights]
        self.row_of = np.concatenate(rows)
        sizes = [r.size for r in rows]
        self.bounds = np.concatenate([[0], np.cumsum(sizes)])
        instance_weights = np.concatenate([w[r] for w, r in zip(weights, rows, strict=True)])
        super().__init__(data, y[self.row_of], n_classes, params, instance_weights, None)
        self.centres = [0.0] * len(rows)
        if self.regression:
            # each tree's centre as growing it alone computes it, over every row's weight
            self.centres = [float(np.average(y, weights=w)) if w.sum() > 0 else 0.0 for w in weights]
            yc = y[self.row_of].astype(np.float64) - np.repeat(self.centres, sizes)
            self.channels = np.stack([instance_weights, instance_weights * yc, instance_weights * yc * yc], axis=1)
        self.rngs = rngs
        self.node_tree: list[int] = []
        self.tree_root_weight = np.ones(len(rows))
        self.tree_tolerance = np.full(len(rows), PURE)
        self.batch_tree = np.zeros(0, dtype=np.int64)

    def _data_rows(self, rows: np.ndarray) -> np.ndarray:
        return self.row_of[rows]

    def _tolerance(self, nodes: list[int]) -> np.ndarray:
        return self.tree_tolerance[np.array([self.node_tree[n] for n in nodes], dtype=np.int64)]

    def _root_weights(self, nodes: list[int]) -> np.ndarray:
        return self.tree_root_weight[np.array([self.node_tree[n] for n in nodes], dtype=np.int64)]

    def _feature_choice(self, nodes: list[int]) -> np.ndarray | None:
        m = self.params.max_features
        d = self.data.n_features
        if m is None or m >= d:
            return None
        tree = np.array([self.node_tree[n] for n in nodes], dtype=np.int64)
        allowed = np.zeros((len(nodes), d), dtype=bool)
        for t in np.unique(tree).tolist():
            at = np.flatnonzero(tree == t)
            allowed[at] = draw_features(self.rngs[t], at.size, d, m)
        return allowed

    def _split(self, nodes: list[int]) -> list[int]:
        if self.regression:  # each tree's nodes side by side, in the order growing it alone takes them
            nodes = sorted(nodes, key=self.node_tree.__getitem__)
        children = super()._split(nodes)
        self.node_tree.extend(self.node_tree[n] for n in nodes for _ in (0, 1))
        return children

    def _best_splits(self, nodes: list[int]) -> Best:
        self.batch_tree = np.array([self.node_tree[n] for n in nodes], dtype=np.int64)
        return super()._best_splits(nodes)

    def _left_sums(
        self, cell_node: np.ndarray, cell_sums: np.ndarray, starts: np.ndarray, segment: np.ndarray
    ) -> np.ndarray:
        if not self.regression:  # integer counts: any running sum is exact
            return super()._left_sums(cell_node, cell_sums, starts, segment)
        # one running sum per tree, as growing it alone makes: trees as rows of a padded
        # block (the trees' cells are contiguous, their nodes side by side in the batch)
        tree = self.batch_tree[cell_node]
        first = run_starts(tree)
        tree_start = np.flatnonzero(first)
        row = np.cumsum(first) - 1
        column = np.arange(tree.size) - tree_start[row]
        block = np.zeros((*cell_sums.shape[:-2], tree_start.size, int(column.max()) + 1, cell_sums.shape[-1]))
        block[..., row, column, :] = cell_sums
        cum = np.cumsum(block, axis=-2)[..., row, column, :]
        # a tree's first node starts from nothing
        opens_tree = first[starts]
        base = np.where((~opens_tree)[:, None], cum[..., np.maximum(starts - 1, 0), :], 0.0)
        return cum - base[..., segment, :]

    def grow_all(self) -> list[GrownTree]:
        roots = []
        for t in range(len(self.rngs)):
            rows = np.arange(self.bounds[t], self.bounds[t + 1])
            stats = self._sums(rows, np.zeros(rows.size, dtype=np.int64), 1)
            root = self._new_nodes([rows], stats, [0])
            self.node_tree.append(t)
            self.tree_root_weight[t] = float(node_weight(stats, self.regression)[0])
            self.tree_tolerance[t] = PURE * max(1.0, self.tree.impurity[root])
            roots.append(root)
        pending = roots
        heap: list[tuple[float, int]] = []
        while True:
            if pending:
                self._count(pending, heap)
            if not heap:
                break
            # every node counted is split: in the heap's order, which sorting gives at once
            chosen = [node for _, node in sorted(heap)]
            heap.clear()
            pending = self._split(chosen)
        self.node_rows.clear()
        return self._per_tree()

    def _per_tree(self) -> list[GrownTree]:
        """The forest's nodes dealt back to their trees, renumbered in creation order."""
        g = self.tree
        tree = np.array(self.node_tree, dtype=np.int64)
        # each tree's nodes in creation order, grouped once (not a mask over all per tree)
        grouped = np.argsort(tree, kind="stable")
        sizes = np.bincount(tree, minlength=len(self.rngs))
        firsts = np.cumsum(sizes) - sizes
        # a node's number within its tree; children follow their parent into its tree
        local = np.empty(tree.size, dtype=np.int64)
        local[grouped] = np.arange(tree.size) - np.repeat(firsts, sizes)
        left, right = np.array(g.left), np.array(g.right)
        left = np.where(left >= 0, local[np.maximum(left, 0)], -1)
        right = np.where(right >= 0, local[np.maximum(right, 0)], -1)
        columns = {
            name: np.array(getattr(g, name))
            for name in ("feature", "threshold", "missing_left", "depth", "impurity", "improvement")
        }
        stats = np.array(g.stats)
        out = []
        for t in range(len(self.rngs)):
            mine = grouped[firsts[t] : firsts[t] + sizes[t]]
            listed = mine.tolist()
            # each tree's numbers stay arrays (tree_nodes makes arrays of them again)
            out.append(
                GrownTree(
                    left_codes=[g.left_codes[node] for node in listed],
                    right_codes=[g.right_codes[node] for node in listed],
                    left=left[mine],
                    right=right[mine],
                    stats=stats[mine],
                    **{name: values[mine] for name, values in columns.items()},
                )
            )
        return out
