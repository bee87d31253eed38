"""CART trees and random forests: hand-checked splits, the seeds' F_r order against a
node-by-node reference, missing values, pruning, OOB error and importances recomputed."""

from __future__ import annotations

import dataclasses
import gc
import itertools
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rulecli.dataset import DataSpec, prepare_dataset
from rulecli.learners import forest as forest_module
from rulecli.learners import tree as tree_module
from rulecli.learners.forest import ForestParams, bootstrap_draws, fit_forest, partial_dependence
from rulecli.learners.tree import TreeParams, fit_tree, prune
from rulecli.model import tree as tree_model
from rulecli.model.compile import prediction_frame
from rulecli.model.serde import dumps, loads, nodes_json
from rulecli.model.text import parse_text
from rulecli.model.tree import Tree, TreeNodes, decision_list, leaf_rules


def _ds(columns: dict[str, list[object]], target: str = "y", numeric_target: bool = False):
    return prepare_dataset(pl.DataFrame(columns, strict=False), DataSpec(target=target, numeric_target=numeric_target))


def _predict(model, df: pl.DataFrame, *columns: str) -> pl.DataFrame:
    return prediction_frame(model, df.lazy(), proba="proba" in columns).collect()


# ----------------------------------------------------------------------------- splits


def test_hand_checked_gini_split_and_f_r():
    # x separates the classes at 3.5; z is noise. Gini(root) = 0.5, both children pure: G = 0.5
    ds = _ds({"x": [1.0, 2, 3, 4, 5, 6], "z": [1.0, 0, 1, 0, 1, 0], "y": list("aaabbb")})
    tree = fit_tree(ds, TreeParams(ccp_alpha=0.0))
    nodes = tree.nodes
    assert tree.features[nodes.feature[0]] == "x"
    assert nodes.threshold[0] == 3.5
    assert nodes.impurity[0] == pytest.approx(0.5)
    assert nodes.improvement[0] == pytest.approx(0.5)  # F_1 = G_1 |I_1| / |I_1|
    assert nodes.n_samples.tolist() == [6, 3, 3]
    assert nodes.value[1].tolist() == [3, 0] and nodes.value[2].tolist() == [0, 3]


def test_entropy_and_misclassification_gains_by_hand():
    # 8 rows: x < 2.5 keeps (a, a) on the left; right has 2 a and 4 b
    x = [1.0, 2, 3, 4, 5, 6, 7, 8]
    y = list("aaaabbbb")
    y[2], y[7] = "b", "a"  # right: a at 4 and 8 -> (a: 2, b: 4)
    ds = _ds({"x": x, "y": y})
    entropy = fit_tree(ds, TreeParams(ccp_alpha=0.0, criterion="entropy", max_depth=1)).nodes
    h = lambda *p: -sum(q * math.log2(q) for q in p if q)  # noqa: E731
    # the best entropy split of a a b a b b b a
    gains = {}
    for t in range(1, 8):
        left, right = y[:t], y[t:]
        gains[t] = (
            h(0.5, 0.5)
            - t / 8 * h(left.count("a") / t, left.count("b") / t)
            - (8 - t) / 8 * h(right.count("a") / (8 - t), right.count("b") / (8 - t))
        )
    best_t = max(gains, key=lambda t: (gains[t], -t))
    assert entropy.threshold[0] == pytest.approx(best_t + 0.5)
    assert entropy.improvement[0] == pytest.approx(gains[best_t])
    miscl = fit_tree(ds, TreeParams(ccp_alpha=0.0, criterion="misclassification", max_depth=1)).nodes
    assert miscl.impurity[0] == pytest.approx(0.5)
    left = miscl.value[1]
    right = miscl.value[2]
    expected = 0.5 - left.sum() / 8 * (1 - left.max() / left.sum()) - right.sum() / 8 * (1 - right.max() / right.sum())
    assert miscl.improvement[0] == pytest.approx(expected)


def test_regression_tree_leaf_means_and_mse_gain():
    ds = _ds({"x": [1.0, 2, 3, 10, 11, 12], "y": [1.0, 2, 3, 10, 11, 12]}, numeric_target=True)
    assert ds.regression
    tree = fit_tree(ds, TreeParams(ccp_alpha=0.0, max_depth=1))
    nodes = tree.nodes
    assert nodes.threshold[0] == 6.5
    assert nodes.value[:, 0].tolist() == pytest.approx([6.5, 2.0, 11.0])
    var_root = np.var([1, 2, 3, 10, 11, 12])
    assert nodes.impurity[0] == pytest.approx(var_root)
    assert nodes.improvement[0] == pytest.approx(var_root - 0.5 * (2 / 3) - 0.5 * (2 / 3))
    out = _predict(tree, pl.DataFrame({"x": [0.0, 7.0, None]}))
    assert out.get_column("prediction").to_list() == pytest.approx([2.0, 11.0, 2.0])  # missing: left (ties go left)


def test_missing_values_go_to_the_child_with_more_rows():
    # x < 2.5 holds 2 rows, x >= 2.5 holds 4: the missing row joins the right child
    ds = _ds({"x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, None], "y": ["a", "a", "b", "b", "b", "b", "b"]})
    nodes = fit_tree(ds, TreeParams(ccp_alpha=0.0, max_depth=1)).nodes
    assert nodes.threshold[0] == 2.5
    assert not nodes.missing_left[0]
    assert nodes.value[2].tolist() == [0, 5]  # the missing row is counted on the right
    rules = leaf_rules(nodes, ("x",))
    texts = [c[0] for _, c in rules]
    assert texts[1].or_missing and not texts[0].or_missing


def test_categorical_split_orders_levels_by_class_share():
    # levels p and r are mostly 'b', q and s mostly 'a': the best two-set split is {q, s} | {p, r}
    level = list("pppqqqrrrsss")
    y = ["b", "b", "a", "a", "a", "a", "b", "b", "b", "a", "a", "b"]
    tree = fit_tree(_ds({"c": level, "y": y}), TreeParams(ccp_alpha=0.0, max_depth=1))
    sides = {tree.nodes.left_levels[0], tree.nodes.right_levels[0]}
    assert sides == {("q", "s"), ("p", "r")}
    out = _predict(tree, pl.DataFrame({"c": ["q", "r", "never-seen", None]}))
    predictions = out.get_column("prediction").to_list()
    assert predictions[:2] == ["a", "b"]
    assert predictions[2] == predictions[3]  # unseen levels travel with missing values


# -------------------------------------------------------------------- best-first (F_r)


def _gini(counts: list[float]) -> float:
    n = sum(counts)
    return 1 - sum((c / n) ** 2 for c in counts) if n else 0.0


def _reference_best_first(x: np.ndarray, y: np.ndarray, k: int, max_leaves: int) -> list[tuple[int, ...]]:
    """The seeds' algorithm node by node: every leaf's best split by brute force; split the
    leaf with the largest F_r = G_r |I_r| / |I_1| (ties: the older leaf) until max_leaves."""
    n, d = x.shape

    def counts(rows):
        return [sum(1 for i in rows if y[i] == c) for c in range(k)]

    def best(rows):
        found = None
        if _gini(counts(rows)) == 0:
            return None
        for j in range(d):
            values = sorted({x[i, j] for i in rows})
            for low in values[:-1]:
                left = [i for i in rows if x[i, j] <= low]
                right = [i for i in rows if x[i, j] > low]
                g = (
                    _gini(counts(rows))
                    - len(left) / len(rows) * _gini(counts(left))
                    - len(right) / len(rows) * _gini(counts(right))
                )
                if found is None or g > found[0] + 1e-12:
                    found = (g, left, right)
        return found

    leaves = [(0, list(range(n)), best(list(range(n))))]
    next_id = 1
    while len(leaves) < max_leaves:
        splittable = [leaf for leaf in leaves if leaf[2] is not None]
        if not splittable:
            break
        chosen = max(splittable, key=lambda leaf: (leaf[2][0] * len(leaf[1]) / n, -leaf[0]))
        leaves.remove(chosen)
        _, left, right = chosen[2]
        leaves += [(next_id, left, best(left)), (next_id + 1, right, best(right))]
        next_id += 2
    return sorted(tuple(sorted(rows)) for _, rows, _ in leaves)


@pytest.mark.parametrize("seed", range(12))
def test_best_first_growth_matches_the_seeds_algorithm_node_by_node(seed: int):
    rng = np.random.default_rng(seed)
    n, d = 40, 3
    x = rng.normal(size=(n, d)).round(2)
    y = (x[:, 0] + 0.5 * x[:, 1] + rng.normal(0, 0.6, n) > 0).astype(int) + (x[:, 2] > 0.8)
    df = pl.DataFrame({f"x{j}": x[:, j] for j in range(d)} | {"y": [f"c{v}" for v in y]})
    ds = prepare_dataset(df, DataSpec(target="y"))
    codes = ds.y
    max_leaves = 2 + seed % 6
    expected = _reference_best_first(x, codes, len(ds.classes), max_leaves)
    tree = fit_tree(ds, TreeParams(ccp_alpha=0.0, max_leaf_nodes=max_leaves))
    leaf = prediction_frame(tree, df.lazy(), explain=True).collect().get_column("rule").to_list()
    groups: dict[str, set[int]] = {}
    for i, rule in enumerate(leaf):
        groups.setdefault(rule, set()).add(i)
    assert sorted(tuple(sorted(g)) for g in groups.values()) == expected


def test_growth_order_does_not_change_an_unlimited_tree():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(300, 4))
    y = np.where(x[:, 0] * x[:, 1] + rng.normal(0, 0.3, 300) > 0, "a", "b")
    ds = prepare_dataset(pl.DataFrame({f"x{j}": x[:, j] for j in range(4)} | {"y": y}), DataSpec(target="y"))
    full = fit_tree(ds, TreeParams(ccp_alpha=0.0))
    limited = fit_tree(ds, TreeParams(ccp_alpha=0.0, max_leaf_nodes=10_000))
    assert nodes_json([full.nodes]) == nodes_json([limited.nodes])
    assert full.nodes.leaves.size > 10


def test_limits_are_respected():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(500, 3))
    y = np.where(x[:, 0] + rng.normal(0, 1, 500) > 0, "a", "b")
    ds = prepare_dataset(pl.DataFrame({f"x{j}": x[:, j] for j in range(3)} | {"y": y}), DataSpec(target="y"))
    assert fit_tree(ds, TreeParams(ccp_alpha=0.0, max_depth=3)).nodes.depth() <= 3
    assert fit_tree(ds, TreeParams(ccp_alpha=0.0, max_leaf_nodes=7)).nodes.leaves.size == 7
    leaf_sizes = fit_tree(ds, TreeParams(ccp_alpha=0.0, min_samples_leaf=25)).nodes
    assert leaf_sizes.n_samples[leaf_sizes.leaves].min() >= 25
    split = fit_tree(ds, TreeParams(ccp_alpha=0.0, min_samples_split=60)).nodes
    inner = split.feature >= 0
    assert split.n_samples[inner].min() >= 60
    big_gain = fit_tree(ds, TreeParams(ccp_alpha=0.0, min_impurity_decrease=0.01)).nodes
    assert big_gain.improvement[big_gain.feature >= 0].min() >= 0.01


def test_cost_complexity_pruning_collapses_the_weakest_links():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(400, 2))
    y = np.where(x[:, 0] + rng.normal(0, 0.8, 400) > 0, "a", "b")
    ds = prepare_dataset(pl.DataFrame({"x0": x[:, 0], "x1": x[:, 1], "y": y}), DataSpec(target="y"))
    full = fit_tree(ds, TreeParams(ccp_alpha=0.0)).nodes
    sizes = [fit_tree(ds, TreeParams(ccp_alpha=a)).nodes.leaves.size for a in (0.0, 0.001, 0.005, 0.02, 1.0)]
    assert sizes[0] == full.leaves.size
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] == 1
    # a pruned tree is a valid tree: every training row reaches a leaf, the counts add up
    pruned = prune(full, 0.005)
    assert pruned.value[pruned.leaves].sum() == 400


def test_every_row_matches_exactly_one_leaf_rule():
    rng = np.random.default_rng(3)
    df = pl.DataFrame(
        {
            "x": np.where(rng.random(200) < 0.1, np.nan, rng.normal(size=200)),
            "c": rng.choice(["p", "q", "r", "s"], size=200),
            "y": rng.choice(["a", "b", "c"], size=200),
        }
    ).with_columns(pl.col("x").fill_nan(None))
    tree = fit_tree(prepare_dataset(df, DataSpec(target="y")), TreeParams(ccp_alpha=0.0, max_depth=6))
    listed = decision_list(tree)
    probe = pl.concat([df, pl.DataFrame({"x": [None, 0.0], "c": ["zzz", None], "y": ["a", "a"]})])
    from rulecli.model.compile import rule_expr

    matches = probe.select(pl.sum_horizontal([rule_expr(r).cast(pl.Int32) for r in listed.rules])).to_series()
    assert matches.to_list() == [1] * probe.height
    # the JSON and text forms predict alike
    text_model = parse_text("".join(line + "\n" for line in _rules_only(tree)))
    assert _predict(text_model, probe).equals(_predict(loads(dumps(tree)), probe))


def _rules_only(tree: Tree) -> list[str]:
    from rulecli.model.text import render_text

    return render_text(decision_list(tree)).splitlines()


# ----------------------------------------------------------------------------- forests


def _walk(nodes: TreeNodes, features: tuple[str, ...], row: dict[str, object]) -> int:
    """A plain-Python walk of one tree, independent of the NumPy walker."""
    node = 0
    while nodes.feature[node] >= 0:
        value = row[features[nodes.feature[node]]]
        if nodes.left_levels[node] or nodes.right_levels[node]:
            if value in nodes.left_levels[node]:
                left = True
            elif value in nodes.right_levels[node]:
                left = False
            else:
                left = bool(nodes.missing_left[node])
        elif value is None:
            left = bool(nodes.missing_left[node])
        else:
            left = value < nodes.threshold[node]
        node = int(nodes.left[node] if left else nodes.right[node])
    return node


@pytest.fixture(scope="module")
def small_forest():
    rng = np.random.default_rng(7)
    n = 120
    df = pl.DataFrame(
        {
            "x0": rng.normal(size=n).round(2),
            "x1": np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n).round(2)),
            "c": rng.choice(["p", "q", "r"], size=n),
        },
    ).with_columns(pl.col("x1").fill_nan(None))
    y = np.where(df["x0"].to_numpy() + (df["c"] == "p").to_numpy() + rng.normal(0, 0.5, n) > 0.3, "yes", "no")
    df = df.with_columns(pl.Series("y", y))
    ds = prepare_dataset(df, DataSpec(target="y"))
    params = ForestParams(trees=15, seed=11)
    return df, ds, params, fit_forest(ds, params)


def test_forest_oob_error_and_importance_recomputed_independently(small_forest):
    df, ds, params, forest = small_forest
    assert ds.weights is None
    rows = df.to_dicts()
    seeds = np.random.SeedSequence(params.seed).spawn(params.trees)
    sums = np.zeros((len(rows), 2))
    counts = np.zeros(len(rows))
    for nodes, seed in zip(forest.trees, seeds, strict=True):
        inbag = bootstrap_draws(seed, np.random.default_rng(seed), ds)  # no weights: each unit is a row
        assert nodes.n_samples[0] == inbag.sum()  # the root holds every draw of the bag
        for i, row in enumerate(rows):
            if inbag[i] == 0:
                leaf = _walk(nodes, forest.features, row)
                sums[i] += nodes.value[leaf] / nodes.value[leaf].sum()
                counts[i] += 1
    has = counts > 0
    predicted = sums[has].argmax(axis=1)
    expected = float(np.mean(predicted != ds.y[has]))
    assert forest.info.training["oob_error"] == pytest.approx(expected)
    # D_j from the node counts and impurities alone: F_r = (I_r − n_L/n_r I_L − n_R/n_r I_R) n_r / n_1
    importance = dict.fromkeys(forest.features, 0.0)
    for nodes in forest.trees:
        for r in np.flatnonzero(nodes.feature >= 0):
            left, right = nodes.left[r], nodes.right[r]
            g = (
                nodes.impurity[r]
                - nodes.n_samples[left] / nodes.n_samples[r] * nodes.impurity[left]
                - nodes.n_samples[right] / nodes.n_samples[r] * nodes.impurity[right]
            )
            importance[forest.features[nodes.feature[r]]] += g * nodes.n_samples[r] / nodes.n_samples[0]
    stored = forest.info.training["importance"]
    for name, value in importance.items():
        assert stored[name] == pytest.approx(value / params.trees, abs=1e-8)


def test_forest_predictions_average_the_trees(small_forest):
    df, _, _, forest = small_forest
    out = prediction_frame(forest, df.lazy(), proba=True).collect()
    for i, row in enumerate(df.head(30).to_dicts()):
        shares = np.zeros(2)
        for nodes in forest.trees:
            leaf = _walk(nodes, forest.features, row)
            shares += nodes.value[leaf] / nodes.value[leaf].sum()
        shares /= len(forest.trees)
        assert out.row(i, named=True)["proba_yes"] == pytest.approx(shares[1])
        assert out.row(i, named=True)["prediction"] == forest.classes[int(shares.argmax())]
    assert dumps(loads(dumps(forest))) == dumps(forest)
    reloaded = prediction_frame(loads(dumps(forest)), df.lazy(), proba=True).collect()
    assert reloaded.equals(out)


def test_forest_is_the_same_for_any_number_of_jobs(small_forest, monkeypatch):
    _, ds, params, forest = small_forest
    monkeypatch.setattr(forest_module, "SMALL_FOREST", 0)  # use worker processes even for this small forest
    assert dumps(fit_forest(ds, dataclasses.replace(params, jobs=2))) == dumps(forest)
    assert dumps(fit_forest(ds, dataclasses.replace(params, jobs=3))) == dumps(forest)
    assert dumps(fit_forest(ds, ForestParams(trees=15, seed=12))) != dumps(forest)


def test_partial_dependence_follows_the_seed_formula(small_forest):
    df, ds, _, forest = small_forest
    grid, values = partial_dependence(forest, ds, "c", forest.classes.index("yes"))
    assert grid == ["p", "q", "r"]
    rows = df.to_dicts()
    for level, value in zip(grid, values, strict=True):
        total = 0.0
        for row in rows:
            changed = row | {"c": level}
            p = np.zeros(2)
            for nodes in forest.trees:
                leaf = _walk(nodes, forest.features, changed)
                p += nodes.value[leaf] / nodes.value[leaf].sum()
            logp = np.log(np.maximum(p / len(forest.trees), 1e-3))
            total += logp[forest.classes.index("yes")] - logp.mean()
        assert value == pytest.approx(total)
    assert values[0] > values[1]  # level p pushes towards 'yes' in the generating rule


def test_regression_forest_oob_mse():
    rng = np.random.default_rng(4)
    x = rng.uniform(0, 10, 200)
    ds = _ds({"x": x, "noise": rng.normal(size=200), "y": 3 * x + rng.normal(0, 1, 200)}, numeric_target=True)
    forest = fit_forest(ds, ForestParams(trees=20, seed=1))
    assert forest.regression and forest.info.training["max_features"] == 1  # d/3 rounded down, at least 1
    assert 0 < forest.info.training["oob_mse"] < 10
    importance = forest.info.training["importance"]
    assert importance["x"] > importance["noise"]


@settings(max_examples=25, deadline=None)
@given(
    st.integers(20, 300),
    st.integers(1, 6),
    st.integers(2, 4),
    st.sampled_from(["gini", "entropy", "mse"]),
    st.integers(0, 2**32 - 1),
)
def test_trees_grown_together_equal_trees_grown_alone(n: int, d: int, k: int, criterion: str, seed: int):
    rng = np.random.default_rng(seed)
    columns = {}
    for j in range(d):
        if j % 2:
            columns[f"c{j}"] = [None if rng.random() < 0.1 else f"v{v}" for v in rng.integers(0, 4, n)]
        else:
            x = rng.normal(size=n).round(1)
            columns[f"x{j}"] = [None if rng.random() < 0.1 else float(v) for v in x]
    regression = criterion == "mse"
    # a number's sums are floats: equal trees need the same additions in the same order
    columns["y"] = (
        rng.normal(size=n) * 10.0 ** rng.integers(-3, 4) if regression else [f"k{v}" for v in rng.integers(0, k, n)]
    )
    spec = DataSpec(target="y", numeric_target=True, target_type="regression" if regression else "classification")
    ds = prepare_dataset(pl.DataFrame(columns), spec)
    assume((regression or len(ds.classes) > 1) and ds.schema.features)
    params = ForestParams(trees=4, criterion=criterion, seed=seed % 1000, jobs=1)
    data = forest_module.Binned.from_dataset(ds, params.max_bins)
    grow = params.grow_params(ds, max_features=params.features_per_node(data.n_features, ds.regression))
    seeds = np.random.SeedSequence(params.seed).spawn(params.trees)
    together = forest_module._grow_together(data, ds, grow, seeds)
    forest_module._init_worker(data, ds, grow)
    alone = [forest_module._grow_one(s) for s in seeds]
    forest_module._SHARED.clear()
    for (a, a_missed), (b, b_missed), s in zip(together, alone, seeds, strict=True):
        assert nodes_json([a]) == nodes_json([b])
        # the rows left out of the bag, as the out-of-bag error reads them
        left_out = np.packbits(forest_module.bootstrap_draws(s, np.random.default_rng(s), ds) == 0)
        assert np.array_equal(a_missed, left_out) and np.array_equal(b_missed, left_out)
        # to the last bit, not only as written to the model file
        for name in ("threshold", "value", "n_samples", "impurity", "improvement"):
            assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name


@settings(max_examples=20, deadline=None)
@given(st.integers(20, 400), st.booleans(), st.integers(0, 2**32 - 1))
def test_the_compiled_walk_adds_up_exactly_what_the_numpy_walk_does(n: int, regression: bool, seed: int):
    """Missing values both ways, the largest floats, ±inf (at prediction), a
    present-vs-missing column, categorical levels never seen in training, and more rows
    than one block of the kernel."""
    assume(_walks_agree(n, regression, seed) is not None)


@pytest.mark.parametrize("plain", [True, False])
def test_level_splits_walked_as_threshold_tests_or_in_a_second_pass_add_up_alike(plain, monkeypatch):
    """The walk makes splits on level sets threshold tests on the levels' codes where
    that adds few nodes, and else sends the rows at them on after each level: both as
    the NumPy walk does."""
    monkeypatch.setattr(tree_model.Walkers, "_plain_pays", staticmethod(lambda *_: plain))
    for seed in range(6):
        packed = _walks_agree(300, seed % 2 == 1, seed)
        assert packed is not None and packed.plain is plain


def _walks_agree(n: int, regression: bool, seed: int) -> tree_model.Packed | None:
    """Score a 7-tree forest by both walks, assert they agree, and return its packed
    trees (None where the rows hold one class)."""
    rng = np.random.default_rng(seed)
    extreme = np.array([1.7e308, -1.7e308, np.finfo(np.float64).max, 0.5])
    x0 = np.where(rng.random(n) < 0.1, rng.choice(extreme, n), rng.normal(size=n).round(2))
    columns = {
        "x0": np.where(rng.random(n) < 0.15, np.nan, x0),
        "flag": np.where(rng.random(n) < 0.5, np.nan, 1.0),
        "c": rng.choice(["p", "q", "r", "s"], size=n),
        # more levels than c, missing ones too: level tables of two widths in one forest
        "d": [None if gone else v for gone, v in zip(rng.random(n) < 0.1, rng.choice(list("abcdefg"), n), strict=True)],
    }
    score = np.clip(np.nan_to_num(columns["x0"]), -3, 3) + np.isnan(columns["flag"]) + (columns["c"] == "p")
    score = score + np.isin(np.array(columns["d"], dtype=object), ["a", "c", "e"])
    y = score + rng.normal(0, 0.5, n) if regression else np.where(score > 0.5, "yes", "no")
    df = pl.DataFrame(columns).with_columns(pl.col("x0", "flag").fill_nan(None), pl.Series("y", y))
    spec = DataSpec(target="y", numeric_target=True, target_type="regression" if regression else "classification")
    ds = prepare_dataset(df, spec)
    if not (ds.regression or len(ds.classes) > 1):
        return None
    forest = fit_forest(ds, ForestParams(trees=7, seed=seed % 1000, jobs=1))
    infinite = pl.Series(rng.choice([np.inf, -np.inf], n))
    scored = pl.concat(
        [
            df,
            df.with_columns(c=pl.lit("never seen"), d=pl.lit(None, pl.String)),
            df.with_columns(x0=infinite, flag=infinite.abs()),
        ]
        * 3
    )
    plans = {}
    # the walk chosen outright: by size it is the compiled one wherever Numba is loaded
    pays = tree_model.compiled_walk_pays
    for name, compiled in (("numpy", False), ("kernel", True)):
        tree_model.compiled_walk_pays = lambda _, compiled=compiled: compiled
        try:
            plans[name] = prediction_frame(forest, scored.lazy(), proba=not regression).collect()
        finally:
            tree_model.compiled_walk_pays = pays
    assert plans["kernel"].equals(plans["numpy"])
    return tree_model.walkers(forest).packed


def test_trees_packed_once_are_reused_only_for_the_same_trees_layout_and_levels(small_forest):
    """Scoring a forest right after its fit reuses the trees its out-of-bag error packed;
    other trees (equal, not the same), another batch layout or other level codes pack anew."""
    _, _, _, forest = small_forest
    first = tree_model.walkers(forest).packed
    assert tree_model.walkers(forest).packed is first
    # the batch rows of the model's features in their own order: the same layout
    assert tree_model.walkers(forest, np.arange(len(forest.features))).packed is first
    swapped = np.array([1, 0, 2])  # x0 and x1 in each other's batch rows
    other_layout = tree_model.walkers(forest, swapped).packed
    assert other_layout is not first and not np.array_equal(other_layout.meta, first.meta)
    copies = dataclasses.replace(forest, trees=tuple(dataclasses.replace(t) for t in forest.trees))
    assert tree_model.walkers(copies).packed is not first
    relevelled = tree_model.Walkers(forest.trees, [{}, {}, {"r": 0, "q": 1, "p": 2}])
    assert not np.array_equal(relevelled.packed.directions, tree_model.walkers(forest).packed.directions)
    # kept no longer than the trees: the copies' packing goes with them
    assert tree_model.walkers(copies).packed is tree_model._LAST_PACKED[0][3]
    del copies
    gc.collect()
    assert not tree_model._LAST_PACKED


def _noisy_split(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    x, z = rng.uniform(0, 1, n).round(3), rng.uniform(0, 1, n).round(3)
    y = np.where((x > 0.5) & (z > 0.3), "a", "b")
    return pl.DataFrame({"x": x, "z": z, "y": np.where(rng.random(n) < 0.2, np.where(y == "a", "b", "a"), y)})


def test_default_tree_is_pruned_by_cross_validation_and_generalises_better():
    train = prepare_dataset(_noisy_split(800, 1), DataSpec(target="y"))
    test = _noisy_split(4000, 2)
    pruned, full = fit_tree(train, TreeParams()), fit_tree(train, TreeParams(ccp_alpha=0.0))
    assert pruned.info.training["ccp_alpha_chosen_by"] == "3-fold cross-validation"
    assert pruned.info.params["ccp_alpha"] == pruned.info.training["ccp_alpha"] > 0
    assert pruned.nodes.leaves.size < 10 < full.nodes.leaves.size
    accuracy = {
        name: float((_predict(model, test)["prediction"] == test["y"]).mean())
        for name, model in (("pruned", pruned), ("full", full))
    }
    # the true rule (two splits) is what the pruned tree keeps; the full one fits the noise
    assert accuracy["pruned"] > accuracy["full"] + 0.05 and accuracy["pruned"] > 0.75, accuracy


def _steps(n: int, seed: int) -> pl.DataFrame:
    """A number that steps at x = 0.3 and 0.7, and noise; z is noise alone."""
    rng = np.random.default_rng(seed)
    x, z = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    return pl.DataFrame({"x": x, "z": z, "y": np.select([x < 0.3, x < 0.7], [0.0, 2.0], 5.0) + rng.normal(0, 1, n)})


def test_regression_trees_are_pruned_by_cross_validation_unless_told():
    ds = prepare_dataset(_steps(600, 3), DataSpec(target="y", numeric_target=True))
    pruned, full = fit_tree(ds, TreeParams(seed=1)), fit_tree(ds, TreeParams(ccp_alpha=0.0))
    assert pruned.info.training["ccp_alpha_chosen_by"] == "3-fold cross-validation"
    assert pruned.info.params["ccp_alpha"] == pruned.info.training["ccp_alpha"] > 0
    assert 3 <= pruned.nodes.leaves.size <= 6 < 300 < full.nodes.leaves.size
    test = _steps(3000, 4)
    errors = {
        name: float(((_predict(model, test)["prediction"] - test["y"]) ** 2).mean())
        for name, model in (("pruned", pruned), ("full", full))
    }
    # the steps are what the pruned tree keeps (noise of variance 1 is all it misses); the
    # full tree fits the noise and doubles the error
    assert errors["pruned"] < 1.1 < 1.6 < errors["full"], errors


def test_a_weakest_link_a_rounding_below_zero_is_no_negative_alpha():
    # misclassification gains nothing at the only split (27 'a' either side of it), which
    # the weakest-link sequence computed as -4e-17; the chosen alpha must still be >= 0
    df = pl.DataFrame({"f0": [None] * 27 + ["x", None, None], "cls": ["a"] * 28 + ["b", "b"]})
    ds = prepare_dataset(df, DataSpec())
    tree = fit_tree(ds, TreeParams(max_leaf_nodes=2, criterion="misclassification"))
    assert tree.info.params["ccp_alpha"] >= 0.0 and tree.info.training["ccp_alpha"] >= 0.0


@pytest.mark.parametrize(("seed", "n"), [(13, 5_000), (14, 20_000)])
def test_the_pruning_cross_validation_does_not_cut_a_real_rule_down_to_the_root(seed: int, n: int):
    """A class two features decide, with noise. Its whole tree's last link (the root split)
    was a little weaker than the folds' trees' root splits, which kept that split when the
    root's candidate was scored: the cross-validation credited the root with the split's
    accuracy and the tree came out one leaf. These tables did (found by search)."""
    rng = np.random.default_rng(seed)
    columns = {f"x{j}": rng.normal(size=n).round(3) for j in range(4)}
    score = columns["x0"] - 0.5 * columns["x1"] + rng.normal(0, 0.7, n)
    columns["class"] = np.where(score > 0.3, "pos", "neg")
    frame = pl.DataFrame(columns)
    model = fit_tree(prepare_dataset(frame, DataSpec(target="class")), TreeParams())
    assert model.info.training["leaves"] > 1
    predicted = prediction_frame(model, frame.lazy()).collect().get_column("prediction")
    accuracy = (predicted == frame.get_column("class")).mean()
    majority = frame.get_column("class").value_counts().get_column("count").max() / n
    assert accuracy > majority + 0.1


@settings(max_examples=12, deadline=None)  # 25 took 9 s of make test
@given(seed=st.integers(0, 10_000), criterion=st.sampled_from(["gini", "entropy", "misclassification"]))
def test_level_pruning_reaches_the_weakest_link_sequences_trees(seed: int, criterion: str):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 800))
    x = rng.normal(size=(n, 2)).round(2)
    y = np.where(x[:, 0] + rng.normal(0, 1, n) > 0, "a", np.where(rng.random(n) < 0.3, "c", "b"))
    ds = _ds({"x0": x[:, 0].tolist(), "x1": x[:, 1].tolist(), "c": rng.choice(["p", "q"], n).tolist(), "y": y.tolist()})
    nodes = fit_tree(ds, TreeParams(ccp_alpha=0.0, criterion=criterion)).nodes
    assume(nodes.n_nodes > 1)
    sequence, pruner = tree_module.PruningSequence(nodes), tree_module.LevelPruner(nodes)
    path = sequence.path
    inner = nodes.feature >= 0
    for alpha in sorted({0.0, *path, *((a + b) / 2 for a, b in itertools.pairwise(path))}):
        steps = next((k for k, g in enumerate(path) if g > alpha + 1e-15), len(path))
        removed = sequence.removed_at < steps
        leaf, n_leaves = pruner.leaf_at(alpha)
        mine_removed = leaf != np.arange(nodes.n_nodes)
        assert np.array_equal(mine_removed, removed), alpha
        collapsed = inner & ~removed & (leaf[np.where(inner, nodes.left, 0)] == np.arange(nodes.n_nodes))
        assert np.array_equal(collapsed, (sequence.collapsed_at < steps) & ~removed), alpha
        assert n_leaves == sequence.at(alpha).leaves.size, alpha


def test_forest_progress_moves_in_steps_of_a_few_trees(monkeypatch: pytest.MonkeyPatch):
    # one batch grew all 40 trees: the bar sat at 0 until the end (a forest this small
    # stays one batch: it is made to count as a long one of large batches here)
    monkeypatch.setattr(forest_module, "SMALL_FOREST", 0)
    monkeypatch.setattr(forest_module, "MIN_GROVE", 0)
    rng = np.random.default_rng(4)
    df = pl.DataFrame({"x": rng.normal(size=300), "z": rng.normal(size=300)})
    df = df.with_columns(y=pl.when(pl.col("x") > 0).then(pl.lit("a")).otherwise(pl.lit("b")))
    ds = prepare_dataset(df, DataSpec(target="y"))
    seen: list[int] = []
    fit_forest(ds, ForestParams(trees=40, jobs=1), progress=seen.append)
    assert seen[-1] == 40 and len(seen) >= 8 and max(np.diff([0, *seen])) <= 5, seen


@pytest.mark.parametrize("regression", [False, True])
def test_out_of_bag_sums_are_the_same_by_the_compiled_walk_and_by_numpy(small_forest, monkeypatch, regression):
    """A large forest's OOB error comes from the compiled walk, a small one's from NumPy:
    the model file holds the error, so both must add the same numbers in the same order."""
    df, ds, params, forest = small_forest
    if regression:
        ds = prepare_dataset(
            df.with_columns(pl.col("x0").alias("y")),
            DataSpec(target="y", numeric_target=True, target_type="regression"),
        )
        forest = fit_forest(ds, params)
    seeds = np.random.SeedSequence(params.seed).spawn(params.trees)
    batch = forest_module.dataset_columns(ds)
    missed = np.stack([forest_module.bootstrap_draws(s, np.random.default_rng(s), ds) == 0 for s in seeds])
    sums = []
    for compiled in (True, False):
        monkeypatch.setattr(forest_module, "compiled_walk_pays", lambda _, compiled=compiled: compiled)
        oob = forest_module.out_of_bag(forest, ds, batch, missed)
        sums.append((oob.sums.tobytes(), oob.counts.tolist()))
    assert sums[0] == sums[1]
    assert min(sums[0][1]) > 0 and max(sums[0][1]) < params.trees


def test_level_splits_are_made_threshold_tests_where_the_extra_steps_are_few():
    """A split on k runs of levels takes up to ceil(log2 k) steps as threshold tests:
    made so while the extra steps stay under half of all, weighed by training rows."""
    from rulecli.model import tree_walk

    def pays(categorical, slot, directions, offsets, split, weight):
        added = tree_walk.added_nodes(offsets, categorical, slot, directions)
        steps = tree_walk.split_steps(categorical, slot, directions)
        return tree_model.Walkers._plain_pays(categorical, offsets, split, weight, added, steps)

    offsets = np.array([0, 3])  # one tree: a split and two leaves
    split = np.array([True, False, False])
    weight = np.array([10.0, 6.0, 4.0])
    categorical = np.array([True, False, False])
    slot = np.zeros(3, dtype=np.int64)
    two_runs = np.array([[1, 1, 0, 0, 0]], dtype=np.int8)
    alternating = np.array([[1, 0] * 20], dtype=np.int8)  # 40 runs: 5 extra steps at that split
    assert pays(~split, slot, two_runs, offsets, split, weight)  # no categorical split
    assert pays(categorical, slot, two_runs, offsets, split, weight)
    assert not pays(categorical, slot, alternating, offsets, split, weight)
    # 6 runs (2 extra steps) at a split of 10 rows of 100: under half the steps; at the root, over
    six_runs = np.array([[1, 0, 1, 0, 1, 0]], dtype=np.int8)
    offsets = np.array([0, 5])
    split = np.array([True, True, False, False, False])
    weight = np.array([100.0, 10.0, 90.0, 6.0, 4.0])
    slot = np.zeros(5, dtype=np.int64)
    assert pays(np.array([False, True, False, False, False]), slot, six_runs, offsets, split, weight)
    assert not pays(np.array([True, False, False, False, False]), slot, six_runs, offsets, split, weight)


def test_a_long_regression_tree_is_pruned_level_by_level_to_the_sequence_s_tree():
    # past LONG_SEQUENCE nodes the alphas come from the grown tree's links and the tree is
    # pruned level by level: at any alpha, the same tree as the weakest-link sequence's
    from rulecli.counting.binned import Binned
    from rulecli.learners.tree import LevelPruner, PruningSequence, grow_tree

    ds = prepare_dataset(_steps(3000, 8), DataSpec(target="y", numeric_target=True))
    grown = grow_tree(Binned.from_dataset(ds), ds, TreeParams().grow_params(ds), ordered=False)
    pruner, sequence = LevelPruner(grown), PruningSequence(grown)
    links = pruner.links()
    assert len(links) > 100 and list(links) == sorted(links)
    for alpha in (links[10], links[len(links) // 2], links[-3]):
        level, exact = pruner.pruned(alpha), sequence.at(alpha)
        assert level.n_nodes == exact.n_nodes < grown.n_nodes
        assert np.array_equal(level.feature, exact.feature) and np.allclose(level.value, exact.value)
