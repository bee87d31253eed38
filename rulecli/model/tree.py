"""Trees and forests: node arrays, the same tree as rules, and vectorised traversal.

A tree is plain arrays indexed by node (root 0, nodes numbered depth-first, left child
first). A split node sends a row left when ``x < threshold`` (numeric) or when its level
is in ``left_levels`` (categorical); missing values, and levels the node never saw, go
the way ``missing_left`` says. A numeric threshold of +inf splits present values (left,
whatever their size) from missing ones (right). A leaf's ``value`` holds its training class weights
(classification) or its mean (regression).

A tree is also a set of rules, one per leaf: :func:`leaf_rules`
turns each root-to-leaf path into a conjunction, merging repeated tests on one column
into one interval or one level set; the branch that takes missing values carries
``or missing``. Exactly one leaf rule matches any row, so a single tree predicts through
the rule compiler. A forest predicts by walking every tree over NumPy batches — a loop
over depth, not rows — and averaging leaf distributions (or values).
"""

from __future__ import annotations

import itertools
import math
import sys
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from rulecli.model.core import (
    Closed,
    Committee,
    Condition,
    DecisionList,
    Model,
    ModelInfo,
    Op,
    Rule,
    RuleRegression,
    RuleStats,
    dated,
    schema_units,
)
from rulecli.schema import Kind, Schema, Unit


@dataclass(frozen=True, eq=False)
class TreeNodes:
    feature: np.ndarray  # int32 index into the model's features; -1 at leaves
    threshold: np.ndarray  # float64; NaN unless a numeric split
    left_levels: tuple[tuple[str, ...], ...]  # categorical split: levels sent left
    right_levels: tuple[tuple[str, ...], ...]
    missing_left: np.ndarray  # bool
    left: np.ndarray  # int32; -1 at leaves
    right: np.ndarray
    value: np.ndarray  # (n_nodes, K) class weights; (n_nodes, 1) mean for regression
    n_samples: np.ndarray  # float64 (weighted: bootstrap draws count)
    impurity: np.ndarray
    improvement: np.ndarray  # F_r = G_r |I_r| / |I_1| at split nodes; 0 at leaves

    @property
    def n_nodes(self) -> int:
        return int(self.feature.size)

    @property
    def leaves(self) -> np.ndarray:
        return np.flatnonzero(self.feature < 0)

    def depth(self) -> int:
        return len(levels(self.feature, self.left, self.right)) - 1


def levels(feature: np.ndarray, left: np.ndarray, right: np.ndarray) -> list[np.ndarray]:
    """A tree's nodes level by level (``feature`` < 0 at leaves), each split's children
    side by side: breadth-first."""
    out, frontier = [], np.zeros(1, dtype=np.int64)
    while frontier.size:
        out.append(frontier)
        inner = frontier[feature[frontier] >= 0]
        frontier = np.column_stack([left[inner], right[inner]]).ravel().astype(np.int64)
    return out


@dataclass(frozen=True)
class Tree:
    target: str
    classes: tuple[str, ...]  # empty for a regression tree
    features: tuple[str, ...]
    nodes: TreeNodes
    info: ModelInfo = field(default_factory=ModelInfo)

    kind = "tree"

    @property
    def regression(self) -> bool:
        return not self.classes


@dataclass(frozen=True)
class Forest:
    target: str
    classes: tuple[str, ...]
    features: tuple[str, ...]
    trees: tuple[TreeNodes, ...]
    info: ModelInfo = field(default_factory=ModelInfo)

    kind = "forest"

    @property
    def regression(self) -> bool:
        return not self.classes


TreeModel = Tree | Forest
Predictor = Model | RuleRegression | Committee | TreeModel  # any model rulecli learns


def predicts_number(model: Predictor) -> bool:
    """Whether the model predicts a number (a regression tree or forest, rules with formulas)."""
    return isinstance(model, RuleRegression | Committee) or (isinstance(model, Tree | Forest) and model.regression)


def feature_kinds(model: TreeModel) -> dict[str, bool]:
    """Each feature the model splits on, with True where it is numeric (as its first split
    in tree and node order says)."""
    trees = (model.nodes,) if isinstance(model, Tree) else model.trees
    feature = np.concatenate([t.feature for t in trees]).astype(np.int64)
    threshold = np.concatenate([t.threshold for t in trees])
    splits = np.flatnonzero(feature >= 0)
    first = np.full(len(model.features), feature.size)
    np.minimum.at(first, feature[splits], splits)
    return {model.features[j]: not np.isnan(threshold[n]) for j, n in enumerate(first.tolist()) if n < feature.size}


# ----------------------------------------------------------------------------- rules


@dataclass
class _Span:
    """What a path so far says about one column."""

    numeric: bool
    low: float | None = None
    high: float | None = None
    include: set[str] | None = None
    exclude: set[str] = field(default_factory=set)
    allow_missing: bool = True

    def condition(self, column: str) -> Condition:
        if self.numeric:
            if self.low == math.inf:  # the missing side of a present-vs-missing split
                return Condition(column, Op.MISSING)
            high = None if self.high == math.inf else self.high
            if self.low is None and high is None:
                return Condition(column, Op.PRESENT)
            if self.low is not None and high is not None:
                return Condition(column, Op.INTERVAL, (self.low, high), Closed.LEFT, self.allow_missing)
            if high is not None:
                return Condition(column, Op.LT, high, or_missing=self.allow_missing)
            assert self.low is not None
            return Condition(column, Op.GE, self.low, or_missing=self.allow_missing)
        if self.include is not None:
            return Condition(column, Op.IN, tuple(sorted(self.include - self.exclude)))
        return Condition(column, Op.NOT_IN, tuple(sorted(self.exclude)), or_missing=self.allow_missing)


def _follow(span: _Span, nodes: TreeNodes, node: int, to_left: bool) -> None:
    missing_here = bool(nodes.missing_left[node]) == to_left
    span.allow_missing = span.allow_missing and missing_here
    if span.numeric:
        threshold = float(nodes.threshold[node])
        if to_left:
            span.high = threshold if span.high is None else min(span.high, threshold)
        else:
            span.low = threshold if span.low is None else max(span.low, threshold)
        return
    mine = nodes.left_levels[node] if to_left else nodes.right_levels[node]
    other = nodes.right_levels[node] if to_left else nodes.left_levels[node]
    if missing_here:
        span.exclude |= set(other)
    else:
        span.include = set(mine) if span.include is None else span.include & set(mine)


def single_test(
    nodes: TreeNodes, node: int, column: str, *, to_left: bool, units: Mapping[str, Unit] | None = None
) -> Condition:
    """The test a row passes to go from ``node`` to its left (or right) child (its bounds
    moments where ``units`` says the column holds dates)."""
    span = _Span(numeric=not np.isnan(nodes.threshold[node]))
    _follow(span, nodes, node, to_left)
    return dated(span.condition(column), units or {})


def leaf_rules(
    nodes: TreeNodes, features: tuple[str, ...], units: Mapping[str, Unit] | None = None
) -> list[tuple[int, tuple[Condition, ...]]]:
    """Each leaf (depth-first order) with the conditions of its path (bounds on the date
    columns of ``units`` as moments)."""
    out: list[tuple[int, tuple[Condition, ...]]] = []
    stack: list[tuple[int, dict[int, _Span]]] = [(0, {})]
    while stack:
        node, spans = stack.pop()
        j = int(nodes.feature[node])
        if j < 0:
            out.append((node, tuple(dated(span.condition(features[f]), units or {}) for f, span in spans.items())))
            continue
        for to_left in (False, True):  # push right first so the left subtree comes out first
            child = int(nodes.left[node] if to_left else nodes.right[node])
            copied = {
                f: _Span(
                    s.numeric,
                    s.low,
                    s.high,
                    None if s.include is None else set(s.include),
                    set(s.exclude),
                    s.allow_missing,
                )
                for f, s in spans.items()
            }
            span = copied.setdefault(j, _Span(numeric=not np.isnan(nodes.threshold[node])))
            _follow(span, nodes, node, to_left)
            stack.append((child, copied))
    return out


def _class_counts(value: np.ndarray) -> tuple[int, ...]:
    return tuple(round(v) for v in value.tolist())


def decision_list(tree: Tree) -> DecisionList:
    """A classification tree as its leaf rules; the root's majority is the (unused) default."""
    assert not tree.regression
    nodes = tree.nodes
    rules = []
    for leaf, conditions in leaf_rules(nodes, tree.features, schema_units(tree.info.schema)):
        counts = _class_counts(nodes.value[leaf])
        k = int(np.argmax(nodes.value[leaf]))
        rules.append(Rule(conditions, tree.classes[k], RuleStats(sum(counts), counts[k], counts)))
    root = _class_counts(nodes.value[0])
    k = int(np.argmax(nodes.value[0]))
    default = Rule((), tree.classes[k], RuleStats(0, 0, tuple(0 for _ in root)))
    return DecisionList(tree.target, tree.classes, tuple(rules), default, tree.info)


# ------------------------------------------------------------------------- traversal


@dataclass(frozen=True)
class Columns:
    """A batch of rows as arrays: numeric features as float64 (NaN missing), categorical
    features as level codes in the training schema's order (-1 missing or unseen)."""

    numeric: np.ndarray  # (n_features, n_rows) float64; unused rows of categorical features
    codes: np.ndarray  # (n_features, n_rows) int32; unused rows of numeric features
    n_rows: int


def level_index(schema: Schema | None, features: tuple[str, ...]) -> list[dict[str, int]]:
    """Per feature: categorical level -> code (empty for numeric features)."""
    if schema is None:
        return [{} for _ in features]
    out = []
    for name in features:
        feature = schema.feature(name)
        out.append({level: i for i, level in enumerate(feature.levels)} if feature.kind == Kind.CATEGORICAL else {})
    return out


@dataclass(frozen=True)
class _Walker:
    feature: np.ndarray
    threshold: np.ndarray
    missing_left: np.ndarray
    left: np.ndarray
    right: np.ndarray
    categorical: np.ndarray  # bool per node
    slot: np.ndarray  # row of ``directions`` per categorical node
    directions: np.ndarray  # (n_cat_nodes, max_levels + 1) int8: 1 left, 0 right, 2 as missing
    depth: int
    present_split: bool  # some node splits present from missing values (threshold +inf)


def node_walker(nodes: TreeNodes, codes_of: list[dict[str, int]], rows: np.ndarray | None = None) -> _Walker:
    """``rows``: the batch row of each model feature, when a batch holds only the used ones."""
    n = nodes.n_nodes
    sizes = np.fromiter(map(len, nodes.left_levels), np.int64, n) + np.fromiter(
        map(len, nodes.right_levels), np.int64, n
    )
    categorical = sizes > 0
    cat_nodes = np.flatnonzero(categorical)
    width = max((len(lv) for lv in codes_of), default=0) + 1
    directions = np.full((max(cat_nodes.size, 1), width), 2, dtype=np.int8)
    slot = np.zeros(n, dtype=np.int64)
    for s, node in enumerate(cat_nodes):
        slot[node] = s
        index = codes_of[int(nodes.feature[node])]
        for level in nodes.left_levels[node]:
            if level in index:
                directions[s, index[level]] = 1
        for level in nodes.right_levels[node]:
            if level in index:
                directions[s, index[level]] = 0
    feature = nodes.feature.astype(np.int64)
    if rows is not None:
        feature = np.where(feature >= 0, rows[np.maximum(feature, 0)], -1)
    return _Walker(
        feature,
        nodes.threshold,
        nodes.missing_left.astype(bool),
        nodes.left.astype(np.int64),
        nodes.right.astype(np.int64),
        categorical,
        slot,
        directions,
        nodes.depth(),
        bool(np.isposinf(nodes.threshold).any()),
    )


@dataclass(frozen=True)
class Packed:
    """All of a model's trees in one set of node arrays, the input of the compiled walk
    (:mod:`rulecli.model.tree_walk`, which reads two cells per feature: see its ``fill``).

    Each tree is renumbered breadth-first so that siblings sit side by side: node n's
    children are ``pair`` (left) and ``pair + 1`` (right). A numeric node reads the
    cell of its feature that puts missing values on its missing side and goes left when
    it is below ``test``; a categorical node looks its level up in row ``test`` of
    ``directions`` (1: left), where missing and unseen levels already go the node's
    missing way. A leaf is its own left child and its test always sends rows left (a
    cell that is never NaN, threshold +inf). Where ``plain``, splits on level sets were
    made threshold tests on the levels' codes, with nodes added (see
    :func:`rulecli.model.tree_walk.pack_plain`): the trees are then graphs, whose nodes
    may share a pair of children, and no node is categorical.

    ``meta`` holds a node's pair, cell and kind in one word (bits 0-31, 32-62 and the
    sign), so that a step of the walk reads two arrays, not four (1M rows through 100
    trees of depth 8: 1.46 s -> 1.23 s).
    """

    roots: np.ndarray
    depths: np.ndarray
    listed_from: np.ndarray  # the level from which the walk lists the rows still moving
    plain: bool  # no categorical node: splits on level sets were made numeric tests
    meta: np.ndarray  # int64: pair | cell << 32, negative at categorical nodes
    test: np.ndarray  # float64: the threshold, or the row of ``directions``
    directions: np.ndarray
    categorical: np.ndarray  # the batch rows of categorical features
    shares: np.ndarray  # leaf_shares of every node


# The trees packed last (held weakly), with the batch layout and level codes they were
# packed for: a forest grown here packs its trees for its out-of-bag error, and scoring
# it right after (``forest --test``), or its permutation importances, packed them again
# (0.22-0.31 s for 100 fully grown trees). Forgotten when the first tree goes, so a
# process holds no forest's packed arrays (47 MB for those trees) past the forest.
_LAST_PACKED: list[tuple[list[weakref.ref[TreeNodes]], np.ndarray | None, list[dict[str, int]], Packed]] = []


def _forget_packed(_: weakref.ref[TreeNodes]) -> None:
    _LAST_PACKED.clear()


@dataclass(frozen=True)
class Walkers:
    """A model's trees prepared for walking: each on its own for the NumPy walk, or all
    packed together for the compiled one, whichever a batch asks for first."""

    nodes: tuple[TreeNodes, ...]
    codes_of: list[dict[str, int]]  # per model feature: level -> code
    rows: np.ndarray | None = None  # the batch row of each model feature, if not its index

    @property
    def n_trees(self) -> int:
        return len(self.nodes)

    @cached_property
    def trees(self) -> tuple[_Walker, ...]:
        return tuple(node_walker(nodes, self.codes_of, self.rows) for nodes in self.nodes)

    @cached_property
    def outputs(self) -> tuple[np.ndarray, ...]:
        """leaf_shares per tree."""
        return tuple(map(leaf_shares, self.nodes))

    @cached_property
    def packed(self) -> Packed:
        layout = None if self.rows is None or np.array_equal(self.rows, np.arange(len(self.codes_of))) else self.rows
        for trees, rows, codes_of, packed in _LAST_PACKED:
            same_trees = len(trees) == len(self.nodes) and all(t() is n for t, n in zip(trees, self.nodes, strict=True))
            if same_trees and np.array_equal(rows, layout) and codes_of == self.codes_of:
                return packed
        packed = self._pack()
        trees = [weakref.ref(self.nodes[0], _forget_packed), *map(weakref.ref, self.nodes[1:])]
        _LAST_PACKED[:] = [(trees, layout, self.codes_of, packed)]
        return packed

    def _pack(self) -> Packed:
        from rulecli.model import tree_walk  # only the compiled walk reads the packed trees

        # every tree at once, renumbered in one compiled pass: tree by tree in NumPy, a
        # forest of 100 fully grown trees (1.5M nodes) took 0.37 s to prepare
        nodes = self.nodes
        sizes = np.array([t.n_nodes for t in nodes], dtype=np.int64)
        offsets = np.concatenate(([0], np.cumsum(sizes)))
        model_feature = np.concatenate([t.feature for t in nodes]).astype(np.int64)
        feature = model_feature
        if self.rows is not None:
            feature = np.where(feature >= 0, self.rows[np.maximum(feature, 0)], -1)
        threshold = np.concatenate([t.threshold for t in nodes]).astype(np.float64)
        missing_left = np.concatenate([t.missing_left for t in nodes]).astype(np.int64)
        # a split on a level set has no threshold (serde refuses one with neither)
        categorical_node = (model_feature >= 0) & np.isnan(threshold)
        directions, slot = self._directions(categorical_node, offsets, model_feature, missing_left)
        left = np.concatenate([t.left for t in nodes]).astype(np.int64)
        right = np.concatenate([t.right for t in nodes]).astype(np.int64)
        weight = np.concatenate([t.n_samples for t in nodes]).astype(np.float64)
        # the nodes each tree's level splits would add as threshold tests, and the steps
        # each split would take: counted once, for the choice and for the packing
        added = tree_walk.added_nodes(offsets, categorical_node, slot, directions)
        steps = tree_walk.split_steps(categorical_node, slot, directions)
        plain = self._plain_pays(categorical_node, offsets, model_feature >= 0, weight, added, steps)
        if plain:
            order, roots, depths, listed_from, meta, test = tree_walk.pack_plain(
                feature,
                threshold,
                missing_left,
                left,
                right,
                offsets,
                categorical_node,
                slot,
                directions,
                weight,
                added,
                steps,
            )
        else:
            roots = offsets[:-1].copy()
            order, depths, listed_from, meta, test = tree_walk.pack(
                feature, threshold, missing_left, left, right, offsets, categorical_node, slot, weight
            )
        shares = leaf_shares_of(np.concatenate([t.value for t in nodes])[np.maximum(order, 0)])
        shares[order < 0] = 0.0  # added nodes are never a leaf
        return Packed(
            roots=roots,
            depths=depths,
            listed_from=listed_from,
            plain=bool(plain),
            meta=meta,
            test=test,
            directions=directions,
            categorical=np.unique(feature[categorical_node]),
            shares=shares,
        )

    @staticmethod
    def _plain_pays(
        categorical_node: np.ndarray,
        offsets: np.ndarray,
        split: np.ndarray,
        weight: np.ndarray,
        added: np.ndarray,
        steps: np.ndarray,
    ) -> bool:
        """Whether the walk pays for making splits on level sets threshold tests
        (:func:`rulecli.model.tree_walk.pack_plain`, which ``added`` nodes, and ``steps``
        per split, describe): a split on k runs of levels takes up to ceil(log2 k) steps,
        not one, and the rows at the others are sent on in a second pass, which took
        40 % of a walk with levels of 5. Where the extra steps came to 94 % of the steps
        (20 features of up to 40 levels), both walks took as long, and the larger trees
        longer to pack; where 4 % (levels of 5), the numeric tests walked 1.4 times as
        fast. So: extra steps under half, weighed by the training rows."""
        if not categorical_node.any():
            return True
        if added[-1] > 2 * offsets[-1]:
            return False
        rows = weight if (weight[offsets[:-1]] > 0).all() else np.ones(weight.size)
        return bool((rows * (steps - 1)).sum() < 0.5 * rows[split].sum())

    def _directions(
        self, categorical_node: np.ndarray, offsets: np.ndarray, feature: np.ndarray, missing_left: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The level table of every categorical node (1 left, 0 right, else the node's
        missing side), a row each in node order with at least one row per tree, and the
        row of each node."""
        cat_nodes = np.flatnonzero(categorical_node)
        cat_tree = np.searchsorted(offsets, cat_nodes, side="right") - 1
        per_tree = np.bincount(cat_tree, minlength=offsets.size - 1)
        rows_before = np.concatenate(([0], np.cumsum(np.maximum(per_tree, 1))))
        cats_before = np.concatenate(([0], np.cumsum(per_tree)))
        row = rows_before[cat_tree] + np.arange(cat_nodes.size) - cats_before[cat_tree]
        slot = np.zeros(categorical_node.size, dtype=np.int64)
        slot[cat_nodes] = row
        width = max((len(index) for index in self.codes_of), default=0) + 1
        directions = np.zeros((int(rows_before[-1]), width), dtype=np.int8)  # a tree's row when it has none
        directions[row] = missing_left[cat_nodes, None]
        # every level sent left, then every level sent right (a level on both sides goes
        # right), set in two assignments; a level the schema does not list: no row has it.
        # The levels of all nodes are flattened into one list and looked up feature by
        # feature by C's own loop (map over dict.get): a Python loop per node and level
        # took 0.052-0.065 s for 20 trees' 14,500 level splits, this 0.024-0.057 s
        features = feature[cat_nodes]
        for side, value in ((0, 1), (1, 0)):
            sets = self._level_sets(cat_tree, cat_nodes - offsets[cat_tree], side)
            sizes = np.fromiter(map(len, sets), dtype=np.int64, count=len(sets))
            levels = np.array(list(itertools.chain.from_iterable(sets)), dtype=object)
            places, of = np.repeat(row, sizes), np.repeat(features, sizes)
            codes = np.full(places.size, -1, dtype=np.int64)
            for f in np.unique(of).tolist():
                on = of == f
                lookup = self.codes_of[f].get
                codes[on] = np.fromiter(map(lookup, levels[on], itertools.repeat(-1)), dtype=np.int64)
            listed = codes >= 0
            directions[places[listed], codes[listed]] = value
        return directions, slot

    def _level_sets(self, tree_of: np.ndarray, local: np.ndarray, side: int) -> list[tuple[str, ...]]:
        """The levels that categorical nodes (tree, index in it) send left (side 0) or right."""
        sets: list[tuple[str, ...]] = []
        bounds = np.flatnonzero(np.diff(tree_of, prepend=-1, append=-1))  # cat nodes come tree by tree
        for lo, hi in itertools.pairwise(bounds.tolist()):
            tree = self.nodes[int(tree_of[lo])]
            levels = tree.left_levels if side == 0 else tree.right_levels
            sets.extend(map(levels.__getitem__, local[lo:hi].tolist()))
        return sets


def walkers(model: TreeModel, rows: np.ndarray | None = None) -> Walkers:
    """The model's trees prepared for :func:`leaves_of` or the compiled walk (categorical
    levels mapped to codes); with ``rows``, for batches that hold only some features
    (``rows[j]``: feature j's row)."""
    trees = (model.nodes,) if isinstance(model, Tree) else model.trees
    return Walkers(tuple(trees), level_index(model.info.schema, model.features), rows)


def leaves_of(w: _Walker, batch: Columns) -> np.ndarray:
    """The leaf each row reaches: a loop over depth, all rows at once.

    Numeric splits are one gather and one comparison per level; categorical splits (and
    missing values) are looked at only where a tree has them.
    """
    n = batch.n_rows
    at = np.zeros(n, dtype=np.int64)
    rows = np.arange(n)
    numeric = batch.numeric.ravel()
    codes = batch.codes.ravel()
    has_categorical = bool(w.categorical.any())
    for _ in range(w.depth):
        node = at[rows]
        feature = w.feature[node]
        inner = feature >= 0
        if not inner.all():
            rows, node, feature = rows[inner], node[inner], feature[inner]
            if not rows.size:
                break
        flat = feature * n + rows
        x = numeric[flat]
        goes_left = x < w.threshold[node]
        if w.present_split:  # x < +inf misses x = +inf, which is present
            goes_left |= np.isposinf(x) & np.isposinf(w.threshold[node])
        missing = np.isnan(x)
        if missing.any():
            goes_left |= missing & w.missing_left[node]
        if has_categorical:
            cat = np.flatnonzero(w.categorical[node])
            if cat.size:
                code = codes[flat[cat]]
                direction = w.directions[w.slot[node[cat]], np.where(code >= 0, code, w.directions.shape[1] - 1)]
                goes_left[cat] = np.where(direction == 2, w.missing_left[node[cat]], direction == 1)
        at[rows] = np.where(goes_left, w.left[node], w.right[node])
    return at


def leaf_shares(nodes: TreeNodes) -> np.ndarray:
    """Per node: class shares P(y | I_r) (classification) or the mean (regression)."""
    return leaf_shares_of(nodes.value)


def leaf_shares_of(value: np.ndarray) -> np.ndarray:
    """:func:`leaf_shares` of nodes' ``value`` rows."""
    if value.shape[1] == 1:
        return value
    # two classes: the one addition the sum makes, without the reduction's set-up
    total = value[:, :1] + value[:, 1:] if value.shape[1] == 2 else value.sum(axis=1, keepdims=True)
    return value / np.where(total > 0, total, 1.0)


# rows × trees of a batch from which the compiled walk pays for importing Numba (about
# 0.3 s) and loading its cached kernel: the NumPy walk takes about 1 s per million row-walks
MIN_WORK = 1 << 20


def compiled_walk_pays(row_walks: int) -> bool:
    """Whether the compiled walk pays for ``row_walks`` rows × trees: from ``MIN_WORK``, or
    at once where Numba is loaded already (a forest grown here, say)."""
    return row_walks >= MIN_WORK or "numba" in sys.modules


def average_output(prepared: Walkers, batch: Columns) -> np.ndarray:
    """Average over trees of leaf class shares (n_rows, K), or of leaf means (n_rows, 1)."""
    if compiled_walk_pays(batch.n_rows * prepared.n_trees):
        from rulecli.model import tree_walk  # Numba takes 0.3 s to import: only where it pays

        return tree_walk.summed(prepared.packed, batch.numeric, batch.codes) / prepared.n_trees
    out = np.zeros((batch.n_rows, prepared.outputs[0].shape[1]))
    for shares, w in zip(prepared.outputs, prepared.trees, strict=True):
        out += shares[leaves_of(w, batch)]
    return out / prepared.n_trees
