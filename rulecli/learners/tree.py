"""CART classification and regression trees (Breiman, Friedman, Olshen & Stone 1984).

The growth itself — impurity, split index G, best-first order by F_r, the limits — is in
:mod:`rulecli.search.grow`; this module prepares the data, turns the grown nodes into a
:class:`~rulecli.model.tree.Tree` and optionally prunes it by minimal cost-complexity.

``--min-samples-split`` has scikit-learn's meaning (a node needs at least that many rows
to be split); a stopping rule S_min — stop when every leaf has at most S_min rows — is
``--min-samples-split S_min+1``.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rulecli import budget
from rulecli.counting.binned import Binned
from rulecli.dataset import Dataset
from rulecli.display import counted
from rulecli.engines import EngineTable, is_engine_table
from rulecli.errors import ParamError
from rulecli.learners import Learner, Progress
from rulecli.model.core import ModelInfo
from rulecli.model.tree import Columns, Tree, TreeNodes, leaves_of, level_index, levels, node_walker
from rulecli.params import Params, monotone_param, param, seed_param
from rulecli.schema import Kind
from rulecli.search.engine_grow import EngineGrower
from rulecli.search.grow import CRITERIA, Grower, GrownTree, GrowParams
from rulecli.search.monotone import monotone_signs, monotone_tree
from rulecli.search.tuning import TREE_CV_ROWS, one_se_choice, one_se_least_squares, pruning_splits
from rulecli.stats import is_whole

TREE = "Tree growth"
MAX_ALPHAS = 40  # pruning strengths a tree's cross-validation tries at most
GROWN_ROWS = 20  # √rows over this: the rows a long table's regression tree keeps in a leaf before its pruning
LONG_SEQUENCE = 20_001  # nodes of a grown regression tree from which the alphas come from its links


@dataclass(frozen=True, kw_only=True)
class TreeGrowth(Params):
    """The growth limits a tree and a forest's trees share."""

    criterion: str | None = param(
        None,
        "Classes: gini (default), entropy or misclassification; a number: mse.",
        choices=CRITERIA,
        panel=TREE,
    )
    max_depth: int | None = param(None, "Split no deeper.", ge=0, panel=TREE)
    max_leaf_nodes: int | None = param(None, "Stop at this many leaves (split best first).", ge=2, panel=TREE)
    min_samples_split: float = param(2.0, "A node needs this many rows to be split.", ge=2, panel=TREE)
    min_samples_leaf: float = param(1.0, "Each child keeps at least this many rows.", ge=1, panel=TREE)
    min_impurity_decrease: float = param(0.0, "Split only where the weighted gain F_r reaches this.", ge=0, panel=TREE)
    max_bins: int = param(
        255, "Numeric features with more distinct values are cut at this many quantiles.", ge=2, le=65535, panel=TREE
    )
    monotone: str | None = monotone_param()

    def criterion_for(self, ds: Dataset) -> str:
        if self.criterion is None:
            return "mse" if ds.regression else "gini"
        if ds.regression and self.criterion != "mse":
            raise ParamError(
                f"{self.criterion} needs classes, but '{ds.target}' is numeric "
                "(use mse, or `target_bins` K / `categorical` to make classes)",
                param="criterion",
            )
        if not ds.regression and self.criterion == "mse":
            raise ParamError(f"mse needs a numeric target, but '{ds.target}' has classes", param="criterion")
        return self.criterion

    def grow_params(
        self, ds: Dataset | EngineTable, max_features: int | None = None, budgeted: bool = False
    ) -> GrowParams:
        return GrowParams(
            monotone=monotone_signs(self.monotone, ds),
            budgeted=budgeted,
            criterion=self.criterion_for(ds),
            max_depth=self.max_depth,
            max_leaf_nodes=self.max_leaf_nodes,
            min_samples_split=self.min_samples_split,
            min_samples_leaf=self.min_samples_leaf,
            min_impurity_decrease=self.min_impurity_decrease,
            max_features=max_features,
        )


@dataclass(frozen=True, kw_only=True)
class TreeParams(TreeGrowth):
    ccp_alpha: float | None = param(
        None,
        "Minimal cost-complexity pruning strength (0: none; default: chosen by 3-fold cross-validation).",
        ge=0,
        panel=TREE,
    )
    seed: int = seed_param()


def model_order(grown: GrownTree) -> list[int]:
    """The grown nodes in the model's order: depth-first, left subtree first.

    Level by level, not node by node (a forest has a million nodes): each subtree's size
    from the deepest level up, then each node's place from the root down (a left child
    right after its parent, a right child after the left subtree)."""
    feature, left, right = (np.array(x, dtype=np.int64) for x in (grown.feature, grown.left, grown.right))
    splits = [nodes[feature[nodes] >= 0] for nodes in levels(feature, left, right)]
    size = np.ones(left.size, dtype=np.int64)
    for nodes in reversed(splits):
        size[nodes] += size[left[nodes]] + size[right[nodes]]
    place = np.zeros(left.size, dtype=np.int64)
    for nodes in splits:
        place[left[nodes]] = place[nodes] + 1
        place[right[nodes]] = place[nodes] + 1 + size[left[nodes]]
    order = np.empty(left.size, dtype=np.int64)
    order[place] = np.arange(left.size)
    return order.tolist()


def tree_nodes(
    grown: GrownTree, data: Binned, regression: bool, centre: float, monotone: tuple[int, ...] | None = None
) -> TreeNodes:
    """The grown nodes renumbered depth-first (left subtree first), as model arrays, their
    values kept in the order of the ``monotone`` constraints."""
    order = np.array(model_order(grown), dtype=np.int64)
    new_id = np.empty(order.size, dtype=np.int64)
    new_id[order] = np.arange(order.size)
    feature = np.array(grown.feature, dtype=np.int32)[order]
    place = new_id.tolist()

    def level_names(codes: list[tuple[int, ...]]) -> tuple[tuple[str, ...], ...]:
        # only a categorical split has codes: a forest's million other nodes skip the lookup
        names: list[tuple[str, ...]] = [()] * len(codes)
        for o in itertools.compress(range(len(codes)), codes):
            # picked in one call: a generator over a split of many levels took 0.34 of a
            # 100-tree forest's 4 CPU seconds on a table of 5 text columns (lending-club)
            picked = operator.itemgetter(*codes[o])(data.levels[grown.feature[o]])
            names[place[o]] = picked if len(codes[o]) > 1 else (picked,)
        return tuple(names)

    def children(ids: list[int] | np.ndarray) -> np.ndarray:
        old = np.array(ids, dtype=np.int64)[order]
        return np.where(old >= 0, new_id[np.maximum(old, 0)], -1).astype(np.int32)

    stats = np.array(grown.stats)[order]  # np.stack checks each of a forest's million rows
    if regression:
        weight = stats[:, 0]
        value = (stats[:, 1] / np.where(weight > 0, weight, 1.0) + centre)[:, None]
    else:
        weight = stats.sum(axis=1)
        value = stats
    nodes = TreeNodes(
        feature=feature,
        threshold=np.array(grown.threshold, dtype=np.float64)[order],
        left_levels=level_names(grown.left_codes),
        right_levels=level_names(grown.right_codes),
        missing_left=np.array(grown.missing_left, dtype=bool)[order],
        left=children(grown.left),
        right=children(grown.right),
        value=value,
        n_samples=weight.astype(np.float64),
        impurity=np.array(grown.impurity, dtype=np.float64)[order],
        improvement=np.array(grown.improvement, dtype=np.float64)[order],
    )
    return nodes if monotone is None else monotone_tree(nodes, monotone, regression)


def _subtree_ends(nodes: TreeNodes) -> np.ndarray:
    """Depth-first numbering puts node t's subtree at [t, end[t])."""
    end = np.arange(1, nodes.n_nodes + 1)
    for node in range(nodes.n_nodes - 1, -1, -1):
        if nodes.feature[node] >= 0:
            end[node] = end[nodes.right[node]]
    return end


def prune(nodes: TreeNodes, alpha: float) -> TreeNodes:
    """Minimal cost-complexity pruning (Breiman et al. 1984, ch. 3): repeatedly collapse the
    weakest link, the node whose g(t) = (R(t) − R(T_t)) / (|leaves(T_t)| − 1) is smallest,
    while g(t) <= alpha. R(t) is the node's impurity times its share of the rows."""
    if alpha <= 0 or nodes.n_nodes == 1:
        return nodes
    return PruningSequence(nodes, until=alpha).at(alpha)


class PruningSequence:
    """The whole weakest-link sequence of a tree, run once: ``path[k]`` is the g(t) of the
    k-th collapse, and each node's step — when it becomes a leaf, or an ancestor's collapse
    removes it. Pruning at any alpha is then a comparison of steps, not a new sequence."""

    def __init__(self, nodes: TreeNodes, until: float = math.inf) -> None:
        """The sequence up to the first weakest link above ``until`` (all of it by default):
        :meth:`at` holds for alphas up to ``until``."""
        path, collapsed_at = _weakest_links(nodes, until)
        # a node is removed at the earliest collapse among its strict ancestors (set level
        # by level from the root)
        removed_at = np.full(nodes.n_nodes, len(path), dtype=np.int64)
        for level in levels(nodes.feature, nodes.left, nodes.right):
            split = level[nodes.feature[level] >= 0]
            below = np.minimum(removed_at[split], collapsed_at[split])
            removed_at[nodes.left[split]] = removed_at[nodes.right[split]] = below
        self.nodes, self.path = nodes, tuple(path)
        self.collapsed_at = collapsed_at  # step at which the node collapses (len(path): never)
        self.removed_at = removed_at  # step at which an ancestor's collapse removes it

    def at(self, alpha: float) -> TreeNodes:
        """The tree pruned at ``alpha``: the collapses of the sequence's prefix whose g(t)
        stay within ``alpha``."""
        steps = 0
        while steps < len(self.path) and self.path[steps] <= alpha + 1e-15:
            steps += 1
        if steps == 0:
            return self.nodes
        removed = self.removed_at < steps
        return without(self.nodes, removed, (self.collapsed_at < steps) & ~removed)


class LevelPruner:
    """Minimal cost-complexity pruning at any alpha, level by level from the leaves up: a
    split collapses where g(t) = (R(t) − R(T_t)) / (|leaves(T_t)| − 1), its subtree already
    pruned below, is at most alpha. The smallest subtree that minimises R + alpha |leaves|
    (Breiman et al. 1984, ch. 3.3): the tree the weakest-link sequence reaches at alpha,
    without running the sequence (whose loop over collapses costs seconds on a tree of a
    hundred thousand leaves), a few array passes per alpha."""

    def __init__(self, nodes: TreeNodes) -> None:
        self.nodes = nodes
        self.cost = nodes.impurity * nodes.n_samples / nodes.n_samples[0]
        self.levels = [level[nodes.feature[level] >= 0] for level in levels(nodes.feature, nodes.left, nodes.right)]

    def _collapsed(self, alpha: float) -> tuple[np.ndarray, int]:
        """The splits that collapse at ``alpha`` (some below others), and the leaves left."""
        nodes = self.nodes
        subtree_cost, leaves = self.cost.copy(), np.ones(nodes.n_nodes, dtype=np.int64)
        collapsed = np.zeros(nodes.n_nodes, dtype=bool)
        for inner in reversed(self.levels):
            below = subtree_cost[nodes.left[inner]] + subtree_cost[nodes.right[inner]]
            count = leaves[nodes.left[inner]] + leaves[nodes.right[inner]]
            g = (self.cost[inner] - below) / (count - 1)
            fold = g <= alpha + 1e-15
            collapsed[inner] = fold
            subtree_cost[inner] = np.where(fold, self.cost[inner], below)
            leaves[inner] = np.where(fold, 1, count)
        return collapsed, int(leaves[0])

    def links(self) -> tuple[float, ...]:
        """Every split's g(t) in the grown tree, in order: the weakest-link sequence's values
        before any collapse moves them, for choosing among a few dozen alphas where running
        the sequence itself (a loop over its collapses) would take seconds."""
        inner = np.flatnonzero(self.nodes.feature >= 0)
        subtree_cost = self.cost.copy()
        leaves = np.ones(self.nodes.n_nodes, dtype=np.int64)
        for level in reversed(self.levels):
            subtree_cost[level] = subtree_cost[self.nodes.left[level]] + subtree_cost[self.nodes.right[level]]
            leaves[level] = leaves[self.nodes.left[level]] + leaves[self.nodes.right[level]]
        return tuple(np.unique((self.cost[inner] - subtree_cost[inner]) / (leaves[inner] - 1)).tolist())

    def pruned(self, alpha: float) -> TreeNodes:
        """The tree pruned at ``alpha``, built."""
        collapsed, _ = self._collapsed(alpha)
        removed = np.zeros(self.nodes.n_nodes, dtype=bool)
        for inner in self.levels:  # top down: below a collapse, every node goes
            gone = removed[inner] | collapsed[inner]
            removed[self.nodes.left[inner]] = removed[self.nodes.right[inner]] = gone
        return without(self.nodes, removed, collapsed & ~removed)

    def leaf_at(self, alpha: float) -> tuple[np.ndarray, int]:
        """Each node's leaf in the tree pruned at ``alpha`` (the highest collapsed split
        above or at it; itself where none is), and that tree's number of leaves: a row
        reaches the leaf its full tree's leaf maps to, so the pruned tree is never built."""
        nodes = self.nodes
        collapsed, n_leaves = self._collapsed(alpha)
        leaf = np.arange(nodes.n_nodes)
        for inner in self.levels:  # top down: below a collapse, a node ends where its parent does
            stop = collapsed[inner] | (leaf[inner] != inner)
            leaf[nodes.left[inner]] = np.where(stop, leaf[inner], nodes.left[inner])
            leaf[nodes.right[inner]] = np.where(stop, leaf[inner], nodes.right[inner])
        return leaf, n_leaves


def _weakest_links(nodes: TreeNodes, until: float) -> tuple[list[float], np.ndarray]:
    """The weakest links' g(t), collapse by collapse while g(t) <= ``until``, and the step at
    which each node collapsed (``len(path)`` for nodes that never did themselves)."""
    n = nodes.n_nodes
    cost = nodes.impurity * nodes.n_samples / nodes.n_samples[0]
    parent = np.full(n, -1, dtype=np.int64)
    inner = np.flatnonzero(nodes.feature >= 0)
    parent[nodes.left[inner]] = inner
    parent[nodes.right[inner]] = inner
    subtree_cost, leaves = _subtree_sums(nodes, cost)
    end = _subtree_ends(nodes)
    # g(t) of every live split, kept up to date: a collapse changes only its ancestors'
    g = np.full(n, np.inf)
    g[inner] = (cost[inner] - subtree_cost[inner]) / (leaves[inner] - 1)
    up_of = parent.tolist()
    step_of = np.full(n, -1, dtype=np.int64)
    path: list[float] = []
    while inner.size:
        weakest = float(g.min())
        if weakest == np.inf or weakest > until + 1e-15:
            break
        step = len(path)
        path.append(weakest)
        for node in np.flatnonzero(g <= weakest + 1e-15 * max(1.0, abs(weakest))).tolist():
            if g[node] == np.inf:  # removed by an earlier collapse of this step
                continue
            delta_cost = cost[node] - subtree_cost[node]
            delta_leaves = leaves[node] - 1
            g[node : end[node]] = np.inf
            step_of[node] = step
            subtree_cost[node] = cost[node]
            leaves[node] = 1
            chain = []
            up = up_of[node]
            while up >= 0:
                chain.append(up)
                up = up_of[up]
            if chain:
                ups = np.array(chain)
                subtree_cost[ups] += delta_cost
                leaves[ups] -= delta_leaves
                g[ups] = (cost[ups] - subtree_cost[ups]) / (leaves[ups] - 1)
    return path, np.where(step_of >= 0, step_of, len(path))


def _subtree_sums(nodes: TreeNodes, cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each node's subtree: the sum of its leaves' ``cost``, and its leaves."""
    subtree_cost = cost.copy()
    leaves = np.ones(nodes.n_nodes, dtype=np.int64)
    for level in reversed(levels(nodes.feature, nodes.left, nodes.right)):
        split = level[nodes.feature[level] >= 0]
        subtree_cost[split] = subtree_cost[nodes.left[split]] + subtree_cost[nodes.right[split]]
        leaves[split] = leaves[nodes.left[split]] + leaves[nodes.right[split]]
    return subtree_cost, leaves


def without(nodes: TreeNodes, removed: np.ndarray, collapsed: np.ndarray) -> TreeNodes:
    """The tree less its ``removed`` nodes, the ``collapsed`` ones turned into leaves."""
    n = nodes.n_nodes
    keep = np.flatnonzero(~removed)
    new_id = np.full(n, -1, dtype=np.int64)
    new_id[keep] = np.arange(keep.size)
    feature = np.where(collapsed[keep], -1, nodes.feature[keep]).astype(np.int32)
    split = feature >= 0

    def child(ids: np.ndarray) -> np.ndarray:
        return np.where(split, new_id[np.where(split, ids[keep], 0)], -1).astype(np.int32)

    return TreeNodes(
        feature=feature,
        threshold=np.where(split, nodes.threshold[keep], np.nan),
        left_levels=tuple(nodes.left_levels[k] if s else () for k, s in zip(keep, split, strict=True)),
        right_levels=tuple(nodes.right_levels[k] if s else () for k, s in zip(keep, split, strict=True)),
        missing_left=np.where(split, nodes.missing_left[keep], False),
        left=child(nodes.left),
        right=child(nodes.right),
        value=nodes.value[keep],
        n_samples=nodes.n_samples[keep],
        impurity=nodes.impurity[keep],
        improvement=np.where(split, nodes.improvement[keep], 0.0),
    )


def grow_tree(
    data: Binned,
    ds: Dataset,
    grow: GrowParams,
    weights: np.ndarray | None = None,
    rng: np.random.Generator | None = None,
    *,
    ordered: bool = True,
) -> TreeNodes:
    """A tree grown on ``data``; with ``ordered`` its values kept in the order of any
    monotone constraints (without, as grown: for pruning first)."""
    grower = Grower(data, ds.y, len(ds.classes), grow, weights, rng)
    return tree_nodes(grower.grow(), data, ds.regression, grower.centre, grow.monotone if ordered else None)


def dataset_columns(ds: Dataset) -> Columns:
    """A dataset's rows as traversal input (what ``predict`` builds from a table)."""
    d, n = len(ds.schema.features), ds.n_rows
    numeric = np.full((d, n), np.nan)
    codes = np.full((d, n), -1, dtype=np.int32)
    for j, feature in enumerate(ds.schema.features):
        if feature.kind == Kind.NUMERIC:
            numeric[j] = ds.numeric(feature.name)
        else:
            code = ds.codes(feature.name)
            codes[j] = np.where(code < len(feature.levels), code, -1)
    return Columns(numeric, codes, n)


def training_summary(nodes: TreeNodes) -> dict[str, object]:
    return {"nodes": nodes.n_nodes, "leaves": int(nodes.leaves.size), "depth": nodes.depth()}


def fit_tree(ds: Dataset | EngineTable, params: TreeParams, *, progress: Progress | None = None) -> Tree:
    alpha = params.ccp_alpha
    training: dict[str, object] = {"rows": ds.n_rows}
    growth = params
    if alpha is None and ds.regression and ds.n_rows > TREE_CV_ROWS:
        # a regression tree grows to a leaf per row or two, which its pruning then cuts back
        # to a leaf per few hundred rows: on a long table its leaves keep √n / 20 rows while
        # it grows (50 at a million rows, whose pruned tree kept 2,000 leaves of 500 rows),
        # not hundreds of thousands of leaves (150 s)
        least = max(params.min_samples_leaf, math.sqrt(ds.n_rows) / GROWN_ROWS)
        growth = dataclasses.replace(
            params, min_samples_leaf=least, min_samples_split=max(params.min_samples_split, 2 * least)
        )
        training["grown_leaf_rows_at_least"] = least
    grown = _grow(ds, growth, ordered=False)
    if alpha is None and ds.regression and grown.n_nodes > LONG_SEQUENCE:
        # a regression tree grows out to tens of thousands of leaves on a long table, where
        # the sequence's loop over collapses took 8 of 18 s (100,000 rows): the alphas come
        # from the grown tree's links, and the chosen tree is pruned level by level
        pruner = LevelPruner(grown)
        alpha, chosen_by = _tuned_alpha(ds, growth, pruner.links())
        nodes = grown if alpha <= 0 else pruner.pruned(alpha)
        training |= {"ccp_alpha": alpha} | ({"ccp_alpha_chosen_by": chosen_by} if chosen_by else {})
    elif alpha is None:
        # one weakest-link sequence gives the alphas to try and the chosen tree
        sequence = PruningSequence(grown) if grown.n_nodes > 1 else None
        alpha, chosen_by = (0.0, None) if sequence is None else _tuned_alpha(ds, growth, sequence.path)
        nodes = grown if sequence is None or alpha <= 0 else sequence.at(alpha)
        training |= {"ccp_alpha": alpha} | ({"ccp_alpha_chosen_by": chosen_by} if chosen_by else {})
    else:
        nodes = prune(grown, alpha)
    signs = monotone_signs(params.monotone, ds)
    if signs is not None:  # the pruned tree's values, in order (a collapse can break it)
        nodes = monotone_tree(nodes, signs, ds.regression)
    info = ModelInfo(
        algorithm="cart",
        params=dataclasses.replace(params, ccp_alpha=alpha).record() | {"criterion": params.criterion_for(ds)},
        schema=ds.schema,
        training=training | training_summary(nodes),
    )
    return Tree(ds.target, ds.classes, ds.schema.feature_names, nodes, info)


def _grow(ds: Dataset | EngineTable, params: TreeParams, *, ordered: bool = True) -> TreeNodes:
    grow = params.grow_params(ds, budgeted=True)
    if is_engine_table(ds):
        grower = EngineGrower(ds, ds.bins(params.max_bins), grow)
        return tree_nodes(grower.grow(), grower.data, ds.regression, grower.centre, grow.monotone if ordered else None)
    data = Binned.from_dataset(ds, params.max_bins)
    return grow_tree(data, ds, grow, ds.weights, ordered=ordered)


def _candidate_alphas(path: tuple[float, ...]) -> list[float]:
    """The alphas to score: between the full tree's weakest links, at most ``MAX_ALPHAS``."""
    # the subtree pruned at the k-th weakest link is the best for alphas in [g_k, g_k+1)
    middles = (math.sqrt(a * b) if a > 0 else b / 2 for a, b in itertools.pairwise(path))
    # a link that gains nothing (a split that moves no row to another class) can come out a
    # rounding below 0 (-4e-17): as an alpha it is 0, which keeps every split
    alphas = sorted({0.0, *(max(alpha, 0.0) for alpha in (*middles, path[-1]))})
    if len(alphas) > MAX_ALPHAS:
        # each is a pruning and a walk per fold. The strongest links, where the small trees
        # lie, are few and far apart: all of them are tried; the weak (tens of thousands on a
        # long table) at ranks from the strongest spaced geometrically, each candidate about
        # a third more leaves than the last. Spaced evenly along the path, the candidates
        # after the strongest jumped from 21 leaves to thousands, and a 1M-row table's tree
        # was pruned to 6 leaves where 100,000 rows kept 16
        top = MAX_ALPHAS // 4
        ranks = np.unique(np.geomspace(top + 1, len(alphas), MAX_ALPHAS - top).round().astype(np.int64))
        alphas = sorted({*alphas[-top:], *(alphas[-int(k)] for k in ranks)})
    return alphas


def _tuned_alpha(ds: Dataset | EngineTable, params: TreeParams, path: tuple[float, ...]) -> tuple[float, str | None]:
    """CART's own choice of the pruned tree (Breiman et al. 1984, ch. 3.4): alphas between the
    full tree's weakest links (geometric means of neighbours), each scored on held-out rows
    by trees grown and pruned without them, and the smallest tree within one standard error of
    the best; and how the held-out rows were drawn (None when nothing could be chosen: the
    tree is kept whole). The rows are the table's own, not a sample's: an alpha chosen on a
    few thousand rows prunes a long table's tree to a few leaves
    (:func:`rulecli.search.tuning.pruning_splits`; whole weights are copies, as the folds are drawn)."""
    if not path:
        return 0.0, None
    alphas = _candidate_alphas(path)
    whole = ds.weights is not None and is_whole(ds.weights)
    drawn = pruning_splits(ds.as_copies("tree") if whole else ds, params.seed)
    if drawn is None:
        return 0.0, None
    (splits, n), chosen_by = drawn
    scores: dict[float, tuple[float, float, int]] = {}
    done = 0
    for k, (train, test) in enumerate(splits):
        nodes = _grow(train, params)
        # a tree cut short by the time budget cannot score the alphas: the folds scored so
        # far choose, or none, and the tree stays as grown
        if budget.ran_out(f"tree: the pruning strength was chosen on {k} of {len(splits)} held-out parts"):
            break
        done = k + 1
        # each fold's tree is pruned at a few dozen alphas, not walked through its whole
        # sequence; the held-out rows are walked down it once, and each pruning maps their leaves
        pruner = LevelPruner(nodes)
        levels = level_index(train.schema, train.schema.feature_names)
        reached = leaves_of(node_walker(nodes, levels), dataset_columns(test))
        score = _fold_scorer(nodes, test)
        for alpha in alphas:
            if alpha >= path[-1]:
                # the whole tree's last link: this candidate is its root alone. A fold's tree
                # may keep a split a little stronger than that link, and scoring it here
                # credited the root with that split's accuracy (a 100,000-row table's tree
                # came out one leaf); CART scores the root at an infinite alpha
                leaf, n_leaves = np.zeros(test.n_rows, dtype=np.int64), 1
            elif alpha <= 0:  # the tree as grown, as the chosen alpha 0 keeps it
                leaf, n_leaves = reached, int(nodes.leaves.size)
            else:
                mapped, n_leaves = pruner.leaf_at(alpha)
                leaf = mapped[reached]
            figures = scores.get(alpha, (0.0, 0.0, 0))
            scores[alpha] = (*(a + b for a, b in zip(figures[:2], score(leaf), strict=True)), figures[2] + n_leaves)
    if not scores:
        return 0.0, None
    scored = n if done == len(splits) else sum(float(t.total_weight) for _, t in splits[:done])
    if ds.regression:
        chosen = one_se_least_squares({a: (s2, s4, k) for a, (s2, s4, k) in scores.items()}, scored)
    else:
        chosen = one_se_choice({a: (right, k) for a, (right, _, k) in scores.items()}, scored)
    assert isinstance(chosen, float)
    return chosen, chosen_by


def _fold_scorer(nodes: TreeNodes, test: Dataset) -> Callable[[np.ndarray], tuple[float, float]]:
    """What a pruning scores on a fold's held-out rows, from the leaf each row reaches: the
    rows it gets right and 0 (classes), or the sums of squared and fourth-power errors
    (numbers: the mean squared error and its standard error), each row counted by its weight."""
    weights = np.ones(test.n_rows) if test.weights is None else test.weights
    if test.regression:
        means = nodes.value[:, 0]

        def squares(leaf: np.ndarray) -> tuple[float, float]:
            squared = (test.y - means[leaf]) ** 2
            return float(weights @ squared), float(weights @ squared**2)

        return squares
    predicts = nodes.value.argmax(axis=1)

    def right(leaf: np.ndarray) -> tuple[float, float]:
        return float(weights[predicts[leaf] == test.y].sum()), 0.0

    return right


def _summary(model: Tree) -> str:
    t = model.info.training
    return f"tree: {counted(t['leaves'], 'leaf')}, depth {t['depth']}"


LEARNER = Learner(
    name="tree",
    params=TreeParams,
    fit=fit_tree,
    summary=_summary,
    help="Grow a CART tree (classification, or regression for a numeric target); shown as a tree and saved as "
    "one rule per leaf.",
    examples=(
        "rulecli tree sample_data/penguins.csv -y species --max-depth 3 -o penguins.tree.json",
        "rulecli tree sample_data/penguins.csv -y body_mass_g --max-depth 4 --ccp-alpha 1000",
    ),
    numeric_target=True,
    engines=("memory", "duckdb", "spark"),
    number_engines=("memory", "duckdb", "spark"),
)
