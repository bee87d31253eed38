"""Random forests (Breiman 2001): bagged CART trees with m random features per node.

Each tree grows on a bootstrap sample, kept as a draw count per row, and chooses each
split among ``m`` features drawn afresh at the node (default ⌊√d⌋ for classes, ⌊d/3⌋ for
a numeric target, as Breiman suggests). The forest predicts the average of the trees'
leaf class shares (or leaf means).

The estimates of Breiman (2001) and of Hastie, Tibshirani & Friedman, *The Elements of
Statistical Learning* (2009, §10.13 and §15.3), computed here:

* OOB error: each training row is predicted by the trees whose bootstrap missed it
  (A_k); the misclassified share (or the mean squared error) over the rows that have
  such trees (not over all n: a row in every bootstrap has no OOB prediction and is left
  out and counted).
* Importance D_j = (1/B) Σ_trees Σ F_r over the nodes split on j, F_r = G_r|I_r|/|I_1|.
  Optionally permutation importance: the rise of the OOB error when feature j is
  shuffled across rows.
* Partial dependence of class y0 on feature j:
  f(t) = Σ_i [log P(y0 | x_i with x_ij := t) − (1/|C|) Σ_y log P(y | x_i with x_ij := t)];
  probabilities are floored at 1e-3 before the log (an averaged leaf share of 0 would
  make it −∞). For a numeric target, the mean prediction at each t.

Every tree draws from its own seed (``SeedSequence(seed).spawn(B)``), so the forest is
the same for any number of worker processes. Breiman draws n rows with replacement; here
each row is drawn a Poisson(1) number of times, from a hash of its row number and the
tree's seed (:func:`bootstrap_draws`): the limit of that draw count as n grows, and
a bag every engine draws alike without writing it out, so a forest grown in DuckDB or
Spark is the one grown in memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rulecli import budget
from rulecli.counting import encoded
from rulecli.counting.binned import Binned
from rulecli.dataset import Dataset
from rulecli.display import counted
from rulecli.engines import EngineTable, Frontier, TreeHistograms, is_engine_table
from rulecli.errors import ParamError
from rulecli.learners import Learner, Progress
from rulecli.learners.tree import TreeGrowth, dataset_columns, grow_tree, model_order, tree_nodes
from rulecli.model.core import ModelInfo
from rulecli.model.tree import (
    Columns,
    Forest,
    TreeNodes,
    average_output,
    compiled_walk_pays,
    leaf_shares,
    leaves_of,
    walkers,
)
from rulecli.params import jobs_param, param, seed_param
from rulecli.schema import Kind
from rulecli.search.engine_grow import EngineGrower
from rulecli.search.forest_grow import ForestGrower
from rulecli.search.grow import GrowParams
from rulecli.search.workers import cores, worker_map
from rulecli.stats import POISSON_CUTS, bag_key, hash_seed, is_whole, poisson_draws

PD_FLOOR = 1e-3
# rows x trees x features below which the forest is grown in this process: 344 rows x 100
# trees x 6 features grew in 2.2 s alone and 2.5 s in two workers; 1,000 x 100 x 50 in 6.1 s
# alone and 5.5 s in two, 2,000 rows in 6.7 s and 5.0 s (each worker loads the compiled kernels)
SMALL_FOREST = 5_000_000
GROVE_INSTANCES = 4_000_000  # bootstrap rows of the trees grown together in one batch
MIN_GROVE = 500_000  # bootstrap rows of the smallest batch worth its per-level costs
BATCHES_PER_JOB = 8
BUDGET_BATCH = 10  # trees grown together at most under a time budget


@dataclass(frozen=True, kw_only=True)
class ForestParams(TreeGrowth):
    trees: int = param(100, "Number of bootstrap trees.", short="B", ge=1)
    max_features: str = param(
        "auto",
        "Features tried per node: auto (sqrt; third for a number), sqrt, third, all, a count or a share.",
        short="m",
    )
    jobs: int | None = jobs_param()
    importance: str = param(
        "impurity",
        "impurity (always saved) or permutation (OOB rows, also saved).",
        choices=("impurity", "permutation"),
        record=False,
    )
    seed: int = seed_param()

    def check(self) -> None:
        self.features_per_node(1, regression=False)

    def record(self) -> dict[str, object]:
        # forests never prune; the key stays so that model files read as they always have
        return super().record() | {"ccp_alpha": 0.0}

    def features_per_node(self, d: int, regression: bool) -> int:
        text = self.max_features.strip().lower()
        if text == "auto":
            text = "third" if regression else "sqrt"
        if text == "sqrt":
            return max(1, math.isqrt(d))
        if text == "third":
            return max(1, d // 3)
        if text == "all":
            return d
        try:
            value = float(text)
        except ValueError:
            raise ParamError(
                f"must be auto, sqrt, third, all, a count or a fraction, got '{self.max_features}'",
                param="max_features",
            ) from None
        if value.is_integer() and value >= 1:
            return min(d, int(value))
        if 0 < value < 1:
            return max(1, int(value * d))
        raise ParamError(
            f"must be a count >= 1 or a fraction in (0, 1), got '{self.max_features}'", param="max_features"
        )


def bootstrap_draws(seed: np.random.SeedSequence, rng: np.random.Generator, ds: Dataset) -> np.ndarray:
    """How often the bootstrap drew each unit: each row, or, with whole-number weights, each
    of the copies the weights stand for (a row of weight k is k units, next to each other).
    A unit's draws are Poisson(1), from a hash of its number and the tree's seed: the same
    bag on every engine, with as many draws as units on average (the seed draws exactly n
    rows with replacement; Poisson(1) is the limit of that count as n grows). With
    fractional weights, ``rng`` draws each row in proportion to its weight, as many times as
    the weights sum to."""
    if ds.weights is None or is_whole(ds.weights):
        return _unit_draws(ds.n_rows if ds.weights is None else int(ds.weights.sum()), bag_key(seed))
    cumulative = np.cumsum(ds.weights)
    draws = max(1, round(float(cumulative[-1])))
    picked = np.searchsorted(cumulative, rng.random(draws) * cumulative[-1], side="right")
    return np.bincount(np.minimum(picked, ds.n_rows - 1), minlength=ds.n_rows).astype(np.float64)


def _unit_draws(units: int, key: tuple[int, int]) -> np.ndarray:
    """:func:`poisson_draws` of units ``0..units-1``, compiled where the kernels are loaded."""
    kernel = encoded.compiled_kernel(0)
    if kernel is None:
        return poisson_draws(np.arange(units), key).astype(np.float64)
    salt, multiplier = key
    return kernel.poisson_draws(units, hash_seed(salt), multiplier, np.array(POISSON_CUTS, dtype=np.int64))


def _row_weights(draws: np.ndarray, ds: Dataset) -> np.ndarray:
    """The draws of each row (its units' :func:`bootstrap_draws` summed): the weights its
    tree grows with."""
    if ds.weights is None or not is_whole(ds.weights):
        return draws
    starts = np.concatenate(([0], np.cumsum(ds.weights.astype(np.int64))[:-1]))
    return np.add.reduceat(draws, starts)


def oob_data(ds: Dataset) -> Dataset:
    """The rows the out-of-bag estimates are made on: the units :func:`bootstrap_draws` draws."""
    return ds.as_copies("forest") if ds.weights is not None and is_whole(ds.weights) else ds


# Worker processes receive the training data once (pool initializer), then only seeds.
_SHARED: dict[str, object] = {}

# a grown tree, and the units its bootstrap did not draw (bits, as ``np.packbits`` packs them)
Grown = tuple[TreeNodes, np.ndarray]


def _init_worker(data: Binned, ds: Dataset, grow: GrowParams) -> None:
    _SHARED.update(data=data, ds=ds, grow=grow)


def _grow_one(seed: np.random.SeedSequence) -> Grown:
    data, ds, grow = _SHARED["data"], _SHARED["ds"], _SHARED["grow"]
    assert isinstance(data, Binned) and isinstance(ds, Dataset) and isinstance(grow, GrowParams)
    rng = np.random.default_rng(seed)
    draws = bootstrap_draws(seed, rng, ds)
    return grow_tree(data, ds, grow, _row_weights(draws, ds), rng), np.packbits(draws == 0)


def _chunks(
    seeds: list[np.random.SeedSequence], n_rows: int, grow: GrowParams, jobs: int, long: bool
) -> list[list[np.random.SeedSequence]]:
    """The trees in batches of equal sizes, grown together. A batch is as large as memory
    allows (``GROVE_INSTANCES`` bootstrap rows), but a ``long`` forest comes in at least
    ``BATCHES_PER_JOB`` batches per worker, so that progress moves and no worker waits
    long for another (100 trees on 100,000 rows grew in 38-40 s instead of 41-43 s,
    against batches of 50), though none of fewer than ``MIN_GROVE`` rows: a batch's cost
    is mostly per level and feature, whatever its trees, and 100 trees on 5,000 rows took
    17.0 s in batches of 7 trees against 9.0 s in two. Under a time budget batches are of a
    few trees; with several workers, their number is a multiple of the workers'."""
    if grow.max_leaf_nodes is not None:  # best-first growth: one tree at a time
        return [[seed] for seed in seeds]
    n = max(n_rows, 1)
    size = max(1, GROVE_INSTANCES // n)
    if long:
        size = min(size, max(-(-len(seeds) // (BATCHES_PER_JOB * jobs)), -(-MIN_GROVE // n)))
    if budget.active():  # batches of a few trees, to stop between them when the time is up
        size = min(size, BUDGET_BATCH)
    batches = -(-len(seeds) // size)
    batches = -(-batches // jobs) * jobs
    size = -(-len(seeds) // batches)
    return [seeds[i : i + size] for i in range(0, len(seeds), size)]


def _grow_chunk(seeds: list[np.random.SeedSequence]) -> list[Grown]:
    """A batch of trees, grown together where growth has no leaf limit; each tree is the
    one its seed grows alone."""
    data, ds, grow = _SHARED["data"], _SHARED["ds"], _SHARED["grow"]
    assert isinstance(data, Binned) and isinstance(ds, Dataset) and isinstance(grow, GrowParams)
    if grow.max_leaf_nodes is not None:
        return [_grow_one(seed) for seed in seeds]
    return _grow_together(data, ds, grow, seeds)


def _grow_together(data: Binned, ds: Dataset, grow: GrowParams, seeds: list[np.random.SeedSequence]) -> list[Grown]:
    """The trees of ``seeds`` grown together (:class:`ForestGrower`): each the tree :func:`_grow_one` grows."""
    rngs = [np.random.default_rng(seed) for seed in seeds]
    draws = [bootstrap_draws(seed, rng, ds) for seed, rng in zip(seeds, rngs, strict=True)]
    grower = ForestGrower(data, ds.y, len(ds.classes), grow, [_row_weights(d, ds) for d in draws], rngs)
    grown = grower.grow_all()
    return [
        (tree_nodes(tree, data, ds.regression, c, grow.monotone), np.packbits(d == 0))
        for tree, c, d in zip(grown, grower.centres, draws, strict=True)
    ]


@dataclass(frozen=True)
class OutOfBag:
    """Per training row: the summed leaf outputs of the trees that did not draw it."""

    sums: np.ndarray  # (n, K) or (n, 1)
    counts: np.ndarray  # trees per row

    def prediction(self) -> np.ndarray:
        return self.sums / np.maximum(self.counts, 1)[:, None]

    def error(self, ds: Dataset) -> float:
        """Mean OOB error (squared error for numbers), rows weighted by their weights."""
        has = self.counts > 0
        if not has.any():
            return float("nan")
        out = self.prediction()[has]
        weights = None if ds.weights is None else ds.weights[has]
        if ds.regression:
            return float(np.average((ds.y[has] - out[:, 0]) ** 2, weights=weights))
        return float(np.average(out.argmax(axis=1) != ds.y[has], weights=weights))


def out_of_bag(forest: Forest, ds: Dataset, batch: Columns, missed: np.ndarray) -> OutOfBag:
    """OOB sums over the rows of ``ds`` (the units :func:`bootstrap_draws` draws), ``missed``
    (trees, units) marking the units each tree's bootstrap did not draw: each row's leaf
    outputs added in tree order over those trees, by the compiled walk where it pays (the
    same sums, to the bit) or tree by tree."""
    prepared = walkers(forest)
    counts = missed.sum(axis=0)
    if compiled_walk_pays(ds.n_rows * len(missed)):
        from rulecli.model import tree_walk

        return OutOfBag(tree_walk.summed(prepared.packed, batch.numeric, batch.codes, missed), counts)
    sums = np.zeros((ds.n_rows, forest.trees[0].value.shape[1]))
    for shares, w, row_missed in zip(prepared.outputs, prepared.trees, missed, strict=True):
        rows = np.flatnonzero(row_missed)
        sub = Columns(batch.numeric[:, rows], batch.codes[:, rows], rows.size)
        sums[rows] += shares[leaves_of(w, sub)]
    return OutOfBag(sums, counts)


def impurity_importance(forest: Forest) -> dict[str, float]:
    """D_j = (1/B) Σ F_r over nodes split on j (Hastie et al. 2009, §10.13.1), per feature."""
    totals = np.zeros(len(forest.features))
    for nodes in forest.trees:
        inner = nodes.feature >= 0
        np.add.at(totals, nodes.feature[inner], nodes.improvement[inner])
    return {name: float(v) for name, v in zip(forest.features, totals / len(forest.trees), strict=True)}


def permutation_importance(
    forest: Forest,
    ds: Dataset,
    batch: Columns,
    missed: np.ndarray,
    base: float,
    seed: int,
) -> dict[str, float]:
    """Rise of the OOB error when one feature's values are shuffled across rows."""
    rng = np.random.default_rng([seed, 1])
    out = {}
    for j, name in enumerate(forest.features):
        order = rng.permutation(ds.n_rows)
        numeric, codes = batch.numeric.copy(), batch.codes.copy()
        numeric[j], codes[j] = numeric[j][order], codes[j][order]
        shuffled = out_of_bag(forest, ds, Columns(numeric, codes, batch.n_rows), missed).error(ds)
        out[name] = shuffled - base
    return out


def fit_forest(ds: Dataset | EngineTable, params: ForestParams, *, progress: Progress | None = None) -> Forest:
    seeds = np.random.SeedSequence(params.seed).spawn(params.trees)
    if is_engine_table(ds):
        return _engine_forest(ds, params, seeds, progress)
    data = Binned.from_dataset(ds, params.max_bins)
    m = params.features_per_node(data.n_features, ds.regression)
    grow = params.grow_params(ds, max_features=m)
    grown: list[Grown] = []
    # starting worker processes costs more than growing a small forest in this one
    jobs = params.jobs or cores()
    long = ds.n_rows * params.trees * data.n_features >= SMALL_FOREST
    if jobs == 1 or not long:
        _init_worker(data, ds, grow)
        for chunk in _chunks(seeds, ds.n_rows, grow, 1, long):
            grown.extend(_grow_chunk(chunk))
            if progress is not None:
                progress(len(grown))
            if len(grown) < len(seeds) and budget.ran_out(_cut(len(grown), len(seeds))):
                break
        _SHARED.clear()
    else:
        from rulecli.counting import kernel  # the workers' batches are counted by it

        kernel.start()
        with worker_map(
            _grow_chunk, _chunks(seeds, ds.n_rows, grow, jobs, long), jobs, _init_worker, (data, ds, grow)
        ) as chunks:
            for chunk in chunks:
                grown.extend(chunk)
                if progress is not None:
                    progress(len(grown))
                if len(grown) < len(seeds) and budget.ran_out(_cut(len(grown), len(seeds))):
                    break  # leaving the block stops the workers
    trees = tuple(tree for tree, _ in grown)
    draft = Forest(ds.target, ds.classes, ds.schema.feature_names, trees, ModelInfo(schema=ds.schema))
    units = oob_data(ds)
    batch = dataset_columns(units)
    # the units each tree's bootstrap left out, as its worker drew them: drawn again here,
    # they took 0.21 of 2.9 s (cProfile; 100 trees of depth 8 on 70,000 rows, 2 workers)
    missed = np.unpackbits(np.stack([bits for _, bits in grown]), axis=1, count=units.n_rows).view(np.bool_)
    oob = out_of_bag(draft, units, batch, missed)
    oob_error = oob.error(units)
    extra: dict[str, object] = {}
    if params.importance == "permutation":
        extra["permutation_importance"] = permutation_importance(draft, units, batch, missed, oob_error, params.seed)
    return _forest(ds, params, trees, m, oob_error, int((oob.counts > 0).sum()), extra)


def _cut(grown: int, trees: int) -> str:
    return f"forest: {grown} of {trees} trees grown"


def _engine_forest(
    table: TreeHistograms, params: ForestParams, seeds: list[np.random.SeedSequence], progress: Progress | None
) -> Forest:
    """The forest grown from the engine's counts: each tree a :class:`EngineGrower` whose
    rows count as their draws in the tree's hashed bootstrap, so that it is the tree grown in
    memory from the same seed; the OOB error is one more pass."""
    if params.importance == "permutation":
        raise ParamError(
            f"shuffles the rows in memory; with `engine={table.engine}`, impurity importance is saved",
            param="importance",
        )
    bins = table.bins(params.max_bins)
    m = params.features_per_node(len(bins.n_bins), table.regression)
    grow = params.grow_params(table, max_features=m)
    trees: list[TreeNodes] = []
    scored: list[tuple[tuple[int, int], Frontier, np.ndarray]] = []
    for k, seed in enumerate(seeds):
        if k and budget.ran_out(_cut(k, len(seeds))):
            break
        bag = bag_key(seed)
        grower = EngineGrower(table, bins, grow, np.random.default_rng(seed), bag)
        grown = grower.grow()
        nodes = tree_nodes(grown, grower.data, table.regression, grower.centre, grow.monotone)
        trees.append(nodes)
        scored.append((bag, grower.leaf_frontier(model_order(grown)), leaf_shares(nodes)))
        if progress is not None:
            progress(len(trees))
    has, wrong = table.out_of_bag(bins, scored)
    return _forest(table, params, tuple(trees), m, wrong / has if has else math.nan, has, {})


def _forest(
    ds: Dataset | EngineTable,
    params: ForestParams,
    trees: tuple[TreeNodes, ...],
    m: int,
    oob_error: float,
    oob_rows: int,
    extra: dict[str, object],
) -> Forest:
    draft = Forest(ds.target, ds.classes, ds.schema.feature_names, trees, ModelInfo(schema=ds.schema))
    training: dict[str, object] = {
        "rows": ds.n_rows,
        "trees": len(trees),
        "max_features": m,
        "oob_" + ("mse" if ds.regression else "error"): None if math.isnan(oob_error) else oob_error,
        "oob_rows": oob_rows,
        "importance": impurity_importance(draft),
        "leaves": int(sum(t.leaves.size for t in trees)),
        **extra,
    }
    info = ModelInfo(
        algorithm="random-forest",
        params=params.record(),
        schema=ds.schema,
        training=training,
    )
    return Forest(ds.target, ds.classes, ds.schema.feature_names, trees, info)


def partial_dependence(
    forest: Forest, ds: Dataset, feature: str, class_index: int | None, grid_points: int = 20
) -> tuple[list[float | str], list[float]]:
    """f^{y0,j}(t) (Hastie et al. 2009, eq. 10.52; the mean prediction, regression) over a grid of t."""
    if feature not in forest.features:
        raise ParamError(f"'{feature}' is not a feature of the forest", param="partial_dependence")
    j = forest.features.index(feature)
    kind = ds.schema.feature(feature)
    batch = dataset_columns(ds)
    prepared = walkers(forest)
    grid: list[float | str]
    if kind.kind == Kind.NUMERIC:
        x = batch.numeric[j][~np.isnan(batch.numeric[j])]
        grid = sorted({float(v) for v in np.quantile(x, np.linspace(0.05, 0.95, grid_points))})
    else:
        grid = list(kind.levels)
    values = []
    for i, t in enumerate(grid):
        numeric, codes = batch.numeric.copy(), batch.codes.copy()
        if isinstance(t, str):
            codes[j] = i
        else:
            numeric[j] = t
        p = average_output(prepared, Columns(numeric, codes, batch.n_rows))
        if ds.regression:
            values.append(float(p[:, 0].mean()))
            continue
        assert class_index is not None
        logp = np.log(np.maximum(p, PD_FLOOR))
        values.append(float((logp[:, class_index] - logp.mean(axis=1)).sum()))
    return grid, values


def _summary(model: Forest) -> str:
    t = model.info.training
    return f"forest: {counted(t['trees'], 'tree')}, {counted(t['leaves'], 'leaf')}"


LEARNER = Learner(
    name="forest",
    params=ForestParams,
    fit=fit_forest,
    summary=_summary,
    help="Grow a random forest (Breiman 2001): bootstrap trees, m random features per node, OOB error, "
    "importances, partial dependence.",
    examples=(
        "rulecli forest sample_data/penguins.csv -y species --trees 200 -o forest.json",
        "rulecli forest sample_data/penguins.csv -y body_mass_g --trees 50 --importance permutation",
        "rulecli forest sample_data/penguins.csv -y species --partial-dependence bill_length_mm --class Gentoo",
    ),
    steps=lambda params: params.trees,
    unit="trees",
    numeric_target=True,
    engines=("memory", "duckdb", "spark"),
    number_engines=("memory", "duckdb", "spark"),
)
