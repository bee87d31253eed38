"""Linear models in the nodes of a regression tree, as M5′ fits, prunes and smooths them
(Quinlan 1992, "Learning with continuous classes"; Wang & Witten 1997, "Inducing model
trees for continuous classes").

Every node's model is fitted on the node's rows from the attributes tested in its subtree
(a leaf's is a constant), a text attribute as indicators of its levels ordered by their
mean target (M5′'s synthetic binary attributes: ``x in {the first i levels}``); its terms
are then dropped greedily while that lowers the estimated error: the root mean squared
error on the node's rows times (n + 2v) / (n − v), v the model's parameters, which charges
a model for what it fitted (as Weka's M5 does; M5 itself used the mean absolute error and
n + v). A subtree whose estimated error — its leaves' squared errors, its parameters all
its leaves' models' and one per split — is not below its root's model's becomes a leaf
with that model, from the leaves up. A leaf's prediction is smoothed along its path: at
each step up, p' = (n p + k q) / (n + k), n the rows below, q the parent's model, k = 15.
Linear models compose, so the smoothed prediction is one formula.

Everything is computed from each leaf's sums of products of [1, x, y] (a Gram matrix): a
node's sums are its children's added, and the squared error of any formula on the node's
rows follows from them without touching the rows again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rulecli.model.tree import TreeNodes, levels

SMOOTHING = 15.0  # M5's k
PRUNING_MULTIPLIER = 2.0
RIDGE = 1e-9  # relative: keeps the normal equations of collinear columns solvable


@dataclass(frozen=True)
class Standardised:
    """The numeric features and target as z-scores (missing values at the mean, 0), so that
    the normal equations stay well conditioned whatever the columns' scales."""

    x: np.ndarray  # (rows, d)
    y: np.ndarray
    mean: np.ndarray  # per feature, then the target's
    scale: np.ndarray

    @classmethod
    def of(cls, columns: list[np.ndarray], y: np.ndarray, weights: np.ndarray | None) -> Standardised:
        """``columns`` standardised into one matrix; each is emptied as it is copied, so
        that a million rows' design is held once, not twice."""
        w = np.ones(y.size) if weights is None else weights
        x = np.empty((y.size, len(columns)))
        means, scales = np.zeros(len(columns) + 1), np.ones(len(columns) + 1)
        for j, values in enumerate([*columns, y]):
            present = ~np.isnan(values)
            means[j], scales[j] = _centre(values[present], w[present])
            out = x[:, j] if j < len(columns) else np.empty(y.size)
            np.subtract(values, means[j], out=out)
            out /= scales[j]
            out[~present] = 0.0
            if j < len(columns):
                columns[j] = np.empty(0)
        return cls(x, out, means, scales)

    def with_target(self, y: np.ndarray, weights: np.ndarray | None) -> Standardised:
        """The same features with another target (a committee's next member's)."""
        means, scales = self.mean.copy(), self.scale.copy()
        means[-1], scales[-1] = _centre(y, np.ones(y.size) if weights is None else weights)
        return Standardised(self.x, (y - means[-1]) / scales[-1], means, scales)


def _centre(values: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """Weighted mean and standard deviation of present values (0 and 1 where there are
    none, 1 where they do not vary)."""
    total = float(w.sum())
    if total <= 0:
        return 0.0, 1.0
    mean = float(w @ values / total)
    variance = float(w @ (values - mean) ** 2 / total)
    return mean, float(np.sqrt(variance)) if variance > 0 else 1.0


def gram(z: Standardised, rows: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """Sums of products of [1, x, y] over ``rows`` (weighted)."""
    block = np.column_stack([np.ones(rows.size), z.x[rows], z.y[rows]])
    weighted = block if weights is None else block * weights[rows, None]
    return weighted.T @ block


def node_grams(
    nodes: TreeNodes, leaf_of_row: np.ndarray, rows: np.ndarray, z: Standardised, weights: np.ndarray | None
) -> np.ndarray:
    """Each node's Gram matrix: the leaves' from their rows (``rows[i]``, the row of ``z``
    that reached ``leaf_of_row[i]``), the splits' as their children's sum."""
    width = z.x.shape[1] + 2
    grams = np.zeros((nodes.n_nodes, width, width))
    order = np.argsort(leaf_of_row, kind="stable")
    leaves, starts = np.unique(leaf_of_row[order], return_index=True)
    ends = [*starts[1:], order.size]
    for leaf, start, end in zip(leaves.tolist(), starts.tolist(), ends, strict=True):
        grams[leaf] = gram(z, rows[order[start:end]], weights)
    for level in reversed(levels(nodes.feature, nodes.left, nodes.right)):
        inner = level[nodes.feature[level] >= 0]
        grams[inner] = grams[nodes.left[inner]] + grams[nodes.right[inner]]
    return grams


def squared_error(g: np.ndarray, beta: np.ndarray) -> float:
    """Σ w (y − [1, x]·beta)² from a Gram matrix: beta over [1, x], in the standardised scale."""
    full = np.append(beta, -1.0)
    return max(float(full @ g @ full), 0.0)


def fit(g: np.ndarray, terms: list[int]) -> np.ndarray:
    """Least squares on the intercept and the ``terms`` (feature indices), as a coefficient
    vector over [1, x] (zeros elsewhere)."""
    return fits(g, [terms])[0]


def fits(g: np.ndarray, term_sets: list[list[int]]) -> list[np.ndarray]:
    """:func:`fit` on each of ``term_sets`` (as many terms each), the systems solved as one
    batch: the same LAPACK solve of each, so the same coefficients, without a Python call a
    model (a model's term dropping fits one per term and step: 21,794 on the issue's
    2,000-row example). Should a system be singular, each is solved alone, by least squares
    where it must."""
    if not term_sets:
        return []
    d = g.shape[0] - 2
    chosen = np.array([[0, *(t + 1 for t in terms)] for terms in term_sets])  # (s, k)
    a = g[chosen[:, :, None], chosen[:, None, :]]
    b = g[chosen, d + 1]
    ridge = RIDGE * np.maximum(np.trace(a, axis1=1, axis2=2), 1.0)
    a = a + ridge[:, None, None] * np.diag([0.0, *([1.0] * (chosen.shape[1] - 1))])[None, :, :]
    try:
        solved = np.linalg.solve(a, b[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:
        solved = np.array([_solved(x, y) for x, y in zip(a, b, strict=True)])
    betas = np.zeros((len(term_sets), d + 1))
    betas[np.arange(len(term_sets))[:, None], chosen] = solved
    return list(betas)


def _solved(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(a, b, rcond=None)[0]


def penalty(n: float, parameters: float) -> float:
    """M5's factor on a model's error for the parameters it fitted: (n + 2v) / (n − v)
    (Weka's M5 doubles v above the line), 10 where the rows do not outnumber them."""
    return (n + PRUNING_MULTIPLIER * parameters) / (n - parameters) if n > parameters else 10.0


def estimated_error(g: np.ndarray, beta: np.ndarray, parameters: int) -> float:
    """The model's root mean squared error on the node's rows times :func:`penalty`."""
    n = float(g[0, 0])
    if n <= 0:
        return 0.0
    return float(np.sqrt(squared_error(g, beta) / n) * penalty(n, parameters))


def simplified(g: np.ndarray, terms: list[int]) -> tuple[np.ndarray, list[int], float]:
    """The model on ``terms`` with terms dropped, one at a time, while the estimated error
    does not rise (the term whose loss helps most first); its coefficients, terms and error."""
    beta = fit(g, terms)
    error = estimated_error(g, beta, len(terms) + 1)
    while terms:
        fewer = fits(g, [[u for u in terms if u != t] for t in terms])
        trials = [(estimated_error(g, b, len(terms)), t, b) for t, b in zip(terms, fewer, strict=True)]
        best_error, dropped, best_beta = min(trials, key=lambda trial: (trial[0], trial[1]))
        if best_error > error:
            break
        terms = [u for u in terms if u != dropped]
        beta, error = best_beta, best_error
    return beta, terms, error


@dataclass(frozen=True)
class NodeModels:
    """A pruned model tree: which nodes are leaves now, and each node's model."""

    leaf: np.ndarray  # bool per node: a leaf of the pruned tree
    removed: np.ndarray  # bool per node: below a pruned split
    beta: np.ndarray  # (nodes, d + 1): each node's model over [1, x], standardised
    rows: np.ndarray  # each node's rows (by weight)


def fit_and_prune(nodes: TreeNodes, grams: np.ndarray, columns_of: list[list[int]]) -> NodeModels:
    """Every node's simplified model, and the tree pruned from the leaves up (M5′).
    ``columns_of``: per model feature, its columns in the standardised matrix (a number's
    one, a text column's indicators, none for a date)."""
    n = nodes.n_nodes
    d = grams.shape[1] - 2
    beta = np.zeros((n, d + 1))
    sse = np.zeros(n)  # the squared error of the node as pruned (its model, or its subtree), on its rows
    parameters = np.ones(n)  # ... and its parameters (a subtree's: its leaves' and one per split)
    leaf = nodes.feature < 0
    tested: list[set[int]] = [set() for _ in range(n)]
    for level in reversed(levels(nodes.feature, nodes.left, nodes.right)):
        for node in level.tolist():
            g = grams[node]
            if nodes.feature[node] < 0:
                beta[node] = fit(g, [])
                sse[node] = squared_error(g, beta[node])
                continue
            left, right = int(nodes.left[node]), int(nodes.right[node])
            tested[node] = tested[left] | tested[right] | set(columns_of[int(nodes.feature[node])])
            beta[node], terms, own = simplified(g, sorted(tested[node]))
            rows = float(g[0, 0])
            below_sse, below_parameters = sse[left] + sse[right], parameters[left] + parameters[right] + 1
            below = np.sqrt(below_sse / rows) * penalty(rows, below_parameters) if rows > 0 else 0.0
            if own <= below:
                leaf[node] = True
                sse[node], parameters[node] = squared_error(g, beta[node]), len(terms) + 2
            else:
                sse[node], parameters[node] = below_sse, below_parameters
    removed = np.zeros(n, dtype=bool)
    for level in levels(nodes.feature, nodes.left, nodes.right):
        inner = level[nodes.feature[level] >= 0]
        cut = removed[inner] | leaf[inner]
        removed[nodes.left[inner]] = cut
        removed[nodes.right[inner]] = cut
    return NodeModels(leaf & ~removed, removed, beta, grams[:, 0, 0].copy())


def smoothed(models: NodeModels, nodes: TreeNodes, node: int, smoothing: float = SMOOTHING) -> np.ndarray:
    """A leaf's model smoothed with its ancestors', as one coefficient vector."""
    parent = np.full(nodes.n_nodes, -1, dtype=np.int64)
    inner = np.flatnonzero(nodes.feature >= 0)
    parent[nodes.left[inner]] = inner
    parent[nodes.right[inner]] = inner
    beta = models.beta[node].copy()
    child = node
    while parent[child] >= 0:
        up = int(parent[child])
        n = models.rows[child]
        beta = (n * beta + smoothing * models.beta[up]) / (n + smoothing)
        child = up
    return beta
