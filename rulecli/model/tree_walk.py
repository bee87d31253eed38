"""Compiled tree walks for large batches: every tree, row by row, in one native loop.

NumPy walks a tree a level at a time over all rows, which costs a dozen array passes per
level per tree: a 100-tree forest scored 82,000 rows/s that way. Here one Numba kernel
takes blocks of rows (on every core), lays each block out once in cache, and walks it
down every tree in turn. It makes the tests of :func:`rulecli.model.tree.leaves_of` on
the packed arrays of :class:`rulecli.model.tree.Packed`, and adds the trees' leaf values
in the same order, so its sums are bit-identical to the NumPy walk's.

Importing Numba costs about 0.3 s and a first compilation a few seconds (then cached on
disk beside this file, or in the user's cache directory), so small batches stay with NumPy
(:data:`rulecli.model.tree.MIN_WORK`).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

# Numba caches compiled kernels beside this file; an installation it cannot write to (a
# system site-packages) would otherwise fall back to the user's cache directory, or fail
# where there is none: a directory of our own under the temporary one always works
if not os.access(Path(__file__).parent, os.W_OK):
    os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(tempfile.gettempdir()) / "rulecli-numba"))
# OpenMP's threads otherwise spin between parallel loops; on a busy machine (another
# process on a core) each of the covering learners' thousands of short loops then waits
# for a spinner the system has put aside: a 1,000-row count took 16 ms instead of 0.3
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numba
import numpy as np

# rows walked together: their features stay in cache while each tree is walked over them
# (fewer than 2**16: a waiting row is its node and its index in the block in one word)
_BLOCK = 512


@numba.njit(cache=True, inline="always")
def fill(numeric, codes, is_categorical, unseen, lo, hi, cells):
    """Rows lo..hi as the walk reads them: row-major, two cells per feature, so that
    no test has to look for missing values. Feature j's cell 2j holds its number
    with a missing one as +inf (past every threshold: it goes right), cell 2j + 1
    with a missing one as -inf (it goes left). A present +inf becomes the largest
    float, which compares with every threshold as +inf does under the trees' rule
    that a +inf threshold sends present values left. A categorical feature holds
    its level code (``unseen`` for a missing or unseen level) in cell 2j and the code
    negated in cell 2j + 1 (see :func:`pack_plain`)."""
    top = np.finfo(np.float64).max
    for j in range(numeric.shape[0]):  # feature by feature: reads stay sequential
        for i in range(hi - lo):
            if is_categorical[j]:
                c = codes[j, lo + i] if codes[j, lo + i] >= 0 else unseen
                cells[i, 2 * j] = c
                cells[i, 2 * j + 1] = -c
            else:
                x = numeric[j, lo + i]
                if np.isnan(x):
                    cells[i, 2 * j] = np.inf
                    cells[i, 2 * j + 1] = -np.inf
                else:
                    cells[i, 2 * j] = cells[i, 2 * j + 1] = top if x == np.inf else x


@numba.njit(cache=True, inline="always")
def _step(i, at, cells, meta, test, waiting, n_waiting):
    """Row i one level down from its node by its numeric test. Returns whether it moved
    (a leaf keeps it) and the count of ``waiting``, where a row at a categorical node
    is put (with its node) for :func:`_settle` to send on. A branch here on the kind of
    node, taken at random as rows meet categorical nodes, cost a fifth of the walk (100
    trees of depth 8 with 4 categorical features of 20, 300,000 rows, one core: 0.85 ->
    0.70 s); a test of both kinds at every step, with no branch, cost as much."""
    node = at[i]
    m = meta[node]
    x = cells[i, np.uint64(m >> 32 & 0x7FFFFFFF)]
    nxt = np.uint64(m & 0xFFFFFFFF) + np.uint64(x >= test[node])
    at[i] = nxt
    waiting[n_waiting] = node << np.uint64(16) | i
    return nxt != node, n_waiting + np.uint64(m < 0)


@numba.njit(cache=True, inline="always")
def _step_plain(i, at, cells, meta, test):
    """:func:`_step` where no node is categorical."""
    node = at[i]
    m = meta[node]
    x = cells[i, np.uint64(m >> 32 & 0x7FFFFFFF)]
    nxt = np.uint64(m & 0xFFFFFFFF) + np.uint64(x >= test[node])
    at[i] = nxt
    return nxt != node


@numba.njit(cache=True, inline="always")
def _settle(waiting, n_waiting, at, cells, meta, test, directions):
    """The rows :func:`_step` put in ``waiting``, sent on by their level's direction."""
    for a in range(n_waiting):
        i = waiting[a] & np.uint64(0xFFFF)
        node = waiting[a] >> np.uint64(16)
        m = meta[node]
        x = cells[i, np.uint64(m >> 32 & 0x7FFFFFFF)]
        at[i] = np.uint64(m & 0xFFFFFFFF) + np.uint64(directions[np.uint64(test[node]), np.uint64(x)] != 1)


@numba.njit(cache=True, inline="always")
def descend(root, depth, listed_from, plain, cells, meta, test, directions, at, active, waiting):
    """Walk a block's rows down one tree a level at a time. A leaf is its own left
    child and always sends rows left, so every row can take the same steps.

    From level ``listed_from`` on, where the training rows say fewer than an eighth of
    the rows are still above a leaf, only those are walked on: ``active`` lists them,
    and a row that stays on its leaf drops out without a branch. A deep tree's rows
    mostly stop long before its deepest leaf, where one row kept the whole block walking
    (100 full trees over 30,000 rows: 0.43 -> 0.28 s). The level is the tree's, not
    counted as the rows go: the count cost a tenth of the steps of trees of depth 8,
    whose rows mostly walk to the end (300,000 rows, one core: 0.70 -> 0.58 s).
    Node ids and indices are unsigned: Numba checks a signed index for a negative
    value on every read, which cost a fifth of the walk."""
    at[:] = root
    n_rows = at.size
    n_active = 0
    for level in range(depth):
        n_waiting = np.uint64(0)
        if level < listed_from and plain:
            for i in range(n_rows):
                _step_plain(np.uint64(i), at, cells, meta, test)
        elif level < listed_from:
            for i in range(n_rows):
                _, n_waiting = _step(np.uint64(i), at, cells, meta, test, waiting, n_waiting)
        else:
            if level == listed_from:  # list the rows not on a leaf (its own left child)
                for i in range(n_rows):
                    active[n_active] = i
                    n_active += np.uint64(meta[at[i]] & 0xFFFFFFFF) != at[i]  # both unsigned: not compared as floats
            moved = 0
            for a in range(n_active):
                i = active[a]
                active[moved] = i
                if plain:
                    moved += _step_plain(i, at, cells, meta, test)
                else:
                    step, n_waiting = _step(i, at, cells, meta, test, waiting, n_waiting)
                    moved += step
            n_active = moved
        _settle(waiting, n_waiting, at, cells, meta, test, directions)
        if level >= listed_from and n_active == 0:
            break


@numba.njit(cache=True, parallel=True)
def walk(
    numeric,
    codes,
    is_categorical,
    unseen,
    roots,
    depths,
    listed_from,
    plain,
    meta,
    test,
    directions,
    shares,
    use,
    out,
):
    """Per row, the sum over trees, in tree order, of the reached leaves' rows of
    ``shares``, added into ``out`` (n_rows, K); with ``use`` (n_trees, n_rows), only the
    trees it marks for a row (a forest's out-of-bag sums), else every tree."""
    n_rows = numeric.shape[1]
    every = use.shape[0] == 0
    for b in numba.prange((n_rows + _BLOCK - 1) // _BLOCK):
        lo = b * _BLOCK
        hi = min(lo + _BLOCK, n_rows)
        cells = np.empty((hi - lo, 2 * numeric.shape[0]))
        fill(numeric, codes, is_categorical, unseen, lo, hi, cells)
        at = np.empty(hi - lo, dtype=np.uint64)
        active = np.empty(hi - lo, dtype=np.uint64)
        waiting = np.empty(hi - lo, dtype=np.uint64)
        for t in range(roots.size):
            descend(
                np.uint64(roots[t]),
                depths[t],
                listed_from[t],
                plain,
                cells,
                meta,
                test,
                directions,
                at,
                active,
                waiting,
            )
            # class by class: a loop over the classes inside the loop over rows cost a
            # tenth of the walk (100 trees of depth 8, 300,000 rows: 0.61 -> 0.53 s)
            for k in range(shares.shape[1]):
                if every:
                    for i in range(hi - lo):
                        out[lo + i, k] += shares[at[i], k]
                else:
                    for i in range(hi - lo):
                        if use[t, lo + i]:
                            out[lo + i, k] += shares[at[i], k]


def summed(packed: Any, numeric: np.ndarray, codes: np.ndarray, use: np.ndarray | None = None) -> np.ndarray:
    """Per row, the sum over trees, in tree order, of the reached leaves' ``packed.shares``
    (with ``use``, over the trees it marks for the row)."""
    is_categorical = np.zeros(numeric.shape[0], dtype=np.bool_)
    is_categorical[packed.categorical] = True
    out = np.zeros((numeric.shape[1], packed.shares.shape[1]))
    walk(
        np.ascontiguousarray(numeric, dtype=np.float64),
        np.ascontiguousarray(codes, dtype=np.int32),
        is_categorical,
        packed.directions.shape[1] - 1,
        packed.roots,
        packed.depths,
        packed.listed_from,
        packed.plain,
        packed.meta,
        packed.test,
        packed.directions,
        packed.shares,
        np.zeros((0, 0), dtype=np.bool_) if use is None else np.ascontiguousarray(use, dtype=np.bool_),
        out,
    )
    return out


@numba.njit(cache=True)
def pack(feature, threshold, missing_left, left, right, offsets, categorical_node, slot, weight):
    """The packed walk's nodes of trees laid end to end (tree t's nodes are
    ``offsets[t]:offsets[t + 1]``, their ``left`` and ``right`` local to the tree): each
    tree renumbered breadth-first, as :func:`rulecli.model.tree.levels` orders it, and
    each node's word and test as :class:`rulecli.model.tree.Packed` describes them.
    Returns the new order of the nodes, each tree's depth and the level from which its
    walk lists the rows still moving (see :func:`descend`: where the training rows'
    ``weight`` above a leaf falls under an eighth of the root's; a tree without weights,
    from a file that has none, counts each node as half its parent), the words and the
    tests."""
    n = feature.size
    order = np.empty(n, dtype=np.int64)
    at = np.empty(n, dtype=np.int64)
    depths = np.zeros(offsets.size - 1, dtype=np.int64)
    listed_from = np.zeros(offsets.size - 1, dtype=np.int64)
    for t in range(offsets.size - 1):
        start = offsets[t]
        order[start] = start
        weighed = weight[start] > 0
        head, tail, level_end, depth, above, share = start, start + 1, start + 1, 0, 0.0, 1.0
        listed_from[t] = -1
        while head < tail:  # a queue: children join in the order their parents left it
            if head == level_end:
                if listed_from[t] < 0 and 8 * above < (weight[start] if weighed else 1.0):
                    listed_from[t] = depth
                depth += 1
                level_end = tail
                above = 0.0
                share /= 2
            node = order[head]
            head += 1
            if feature[node] >= 0:
                order[tail] = left[node] + start
                order[tail + 1] = right[node] + start
                tail += 2
                above += weight[node] if weighed else share
        depths[t] = depth
        if listed_from[t] < 0:
            listed_from[t] = depth
    for k in range(n):
        at[order[k]] = k
    meta = np.empty(n, dtype=np.int64)
    test = np.empty(n, dtype=np.float64)
    t = 0
    for k in range(n):
        while k >= offsets[t + 1]:
            t += 1
        node = order[k]
        if feature[node] < 0:  # a leaf: its own left child, through a test every row passes
            meta[k] = k | (np.int64(1) << 32)
            test[k] = np.inf
            continue
        pair = at[left[node] + offsets[t]]
        if categorical_node[node]:
            meta[k] = pair | (np.int64(2 * feature[node]) << 32) | np.int64(-(2**63))
            test[k] = slot[node]
        else:
            meta[k] = pair | (np.int64(2 * feature[node] + missing_left[node]) << 32)
            test[k] = threshold[node]
    return order, depths, listed_from, meta, test


@numba.njit(cache=True, inline="always")
def _runs(directions, row, starts, sides):
    """The runs of equal direction along a level-set row (codes in order): each run's
    first code and side (1 left); returns how many."""
    r = 0
    for c in range(directions.shape[1]):
        if c == 0 or directions[row, c] != directions[row, c - 1]:
            starts[r] = c
            sides[r] = directions[row, c]
            r += 1
    return r


@numba.njit(cache=True)
def _added(k):
    """Nodes a split on k runs of levels adds to the one it replaces (see :func:`pack_plain`)."""
    if k <= 2:
        return 0
    return 2 + (_added(k // 2) if k // 2 >= 3 else 0) + (_added(k - k // 2) if k - k // 2 >= 3 else 0)


@numba.njit(cache=True)
def _steps(k):
    """Steps from a split on k runs of levels to one of its two children."""
    return 1 if k <= 2 else 1 + _steps(k - k // 2)


@numba.njit(cache=True)
def split_steps(categorical_node, slot, directions):
    """Per categorical node, the steps its split takes as threshold tests (:func:`_steps`
    of its runs of levels; 1 for a node that is not categorical)."""
    starts = np.empty(directions.shape[1], dtype=np.int64)
    sides = np.empty(directions.shape[1], dtype=np.int64)
    steps = np.ones(categorical_node.size, dtype=np.int64)
    for v in range(categorical_node.size):
        if categorical_node[v]:
            steps[v] = _steps(_runs(directions, slot[v], starts, sides))
    return steps


@numba.njit(cache=True)
def added_nodes(offsets, categorical_node, slot, directions):
    """Per tree, the nodes :func:`pack_plain` adds to the trees before it (and in all)."""
    starts = np.empty(directions.shape[1], dtype=np.int64)
    sides = np.empty(directions.shape[1], dtype=np.int64)
    extra = np.zeros(offsets.size, dtype=np.int64)
    for t in range(offsets.size - 1):
        added = 0
        for v in range(offsets[t], offsets[t + 1]):
            if categorical_node[v]:
                added += _added(_runs(directions, slot[v], starts, sides))
        extra[t + 1] = extra[t] + added
    return extra


@numba.njit(cache=True)
def pack_plain(
    feature, threshold, missing_left, left, right, offsets, categorical_node, slot, directions, weight, added, steps
):
    """:func:`pack` with every split on a level set made numeric: the levels' codes in
    order fall in runs that go the same way, and a split on runs is a small tree of
    threshold tests on the code (cell 2j holds it, cell 2j + 1 its negation, so that
    a test sends the lower codes right as easily as left). Two runs are one test on the
    node's own children; more are split in halves down to pairs of runs, each pair a
    test on the node's children again (the nodes are shared: the trees become graphs)
    and a lone run a forwarding node, whose test every row passes, to its child.

    The walk then makes no categorical test: the rows listed at categorical nodes took
    40 % of the walk (100 trees of depth 8, 4 categorical features of 20). Returns each
    packed node's source (-1 if added), each tree's root, depth (longest path) and
    listed level, the words and the tests."""
    size = offsets + added  # where each tree's nodes begin
    n = size[-1]
    kind = np.zeros(n, dtype=np.int64)  # 0 leaf, 1 test, 2 forwarding
    cell = np.zeros(n, dtype=np.int64)
    thr = np.zeros(n, dtype=np.float64)
    pairs = np.zeros((n, 3), dtype=np.int64)  # the children side by side (local ids); a forward's side
    source = np.full(n, -1, dtype=np.int64)
    w = np.zeros(n, dtype=np.float64)
    starts = np.empty(directions.shape[1], dtype=np.int64)
    sides = np.empty(directions.shape[1], dtype=np.int64)
    for t in range(offsets.size - 1):
        base, start = size[t], offsets[t]
        nxt = offsets[t + 1] - start  # the next added node's local id
        for v in range(offsets[t + 1] - start):
            g = start + v
            source[base + v], w[base + v] = g, weight[g]
            if feature[g] < 0:
                continue
            kind[base + v] = 1
            pairs[base + v, 0], pairs[base + v, 1] = left[g], right[g]
            if not categorical_node[g]:
                cell[base + v] = 2 * feature[g] + missing_left[g]
                thr[base + v] = threshold[g]
                continue
            r = _runs(directions, slot[g], starts, sides)
            if r == 1:  # every level one way: a test every row passes, or none does
                cell[base + v] = 2 * feature[g]
                thr[base + v] = np.inf if sides[0] == 1 else -np.inf
                continue
            nxt = _split_runs(base, v, nxt, r, starts, sides, 2 * feature[g], weight[g], kind, cell, thr, pairs, w)
    depths = _longest_paths(feature, left, right, offsets, steps)
    order, listed_from = _placed(kind, pairs, w, size, depths)
    meta, test = _words(order, kind, cell, thr, pairs, size)
    return source[order], size[:-1].copy(), depths, listed_from, meta, test


@numba.njit(cache=True)
def _words(order, kind, cell, thr, pairs, size):
    """The words and tests of the nodes in their packed order (see :func:`pack_plain`)."""
    n = order.size
    at = np.empty(n, dtype=np.int64)
    at[order] = np.arange(n)
    meta = np.empty(n, dtype=np.int64)
    test = np.empty(n, dtype=np.float64)
    t = 0
    for j in range(n):
        u = order[j]
        while u >= size[t + 1]:
            t += 1
        if kind[u] == 0:  # a leaf, as in pack
            meta[j], test[j] = j | (np.int64(1) << 32), np.inf
        elif kind[u] == 2:  # forwarding: "left" always, to its child
            meta[j], test[j] = at[size[t] + pairs[u, pairs[u, 2]]] | (np.int64(1) << 32), np.inf
        else:
            meta[j], test[j] = at[size[t] + pairs[u, 0]] | (cell[u] << 32), thr[u]
    return meta, test


@numba.njit(cache=True)
def _split_runs(base, v, nxt, r, starts, sides, code_cell, weight, kind, cell, thr, pairs, w):
    """Node v's split on r runs of levels as tests on the code (see :func:`pack_plain`),
    added nodes numbered from nxt; returns the next free number."""
    todo = np.empty((r + 1, 3), dtype=np.int64)
    todo[0, 0], todo[0, 1], todo[0, 2] = v, 0, r
    n_todo = 1
    children = pairs[base + v, 0], pairs[base + v, 1]
    while n_todo:
        n_todo -= 1
        u, lo, hi = todo[n_todo, 0], todo[n_todo, 1], todo[n_todo, 2]
        kind[base + u], w[base + u] = 1, weight
        if hi - lo == 2:  # a pair of runs: the node's own children
            pairs[base + u, 0], pairs[base + u, 1] = children
            if sides[lo] == 1:  # lower codes left: code >= the upper run's first
                cell[base + u], thr[base + u] = code_cell, starts[lo + 1] - 0.5
            else:  # lower codes right: -code >= -(the upper run's first - 1/2)
                cell[base + u], thr[base + u] = code_cell + 1, 0.5 - starts[lo + 1]
            continue
        mid = (lo + hi) // 2
        cell[base + u], thr[base + u] = code_cell, starts[mid] - 0.5
        pairs[base + u, 0], pairs[base + u, 1] = nxt, nxt + 1
        for half in range(2):
            a, b, k = (lo, mid, nxt) if half == 0 else (mid, hi, nxt + 1)
            if b - a == 1:  # a lone run forwards to its child
                kind[base + k], w[base + k] = 2, weight
                pairs[base + k, 0], pairs[base + k, 1] = children
                pairs[base + k, 2] = 0 if sides[a] == 1 else 1
            else:
                todo[n_todo, 0], todo[n_todo, 1], todo[n_todo, 2] = k, a, b
                n_todo += 1
        nxt += 2
    return nxt


@numba.njit(cache=True)
def _longest_paths(feature, left, right, offsets, steps):
    """Each tree's longest path once its level splits are made numeric: down the tree as
    grown, each split takes its ``steps`` (see :func:`split_steps`)."""
    depths = np.zeros(offsets.size - 1, dtype=np.int64)
    for t in range(offsets.size - 1):
        start = offsets[t]
        reach = np.zeros(offsets[t + 1] - start, dtype=np.int64)
        queue = np.empty(offsets[t + 1] - start, dtype=np.int64)
        queue[0], head, tail = 0, 0, 1
        while head < tail:
            v = queue[head]
            head += 1
            g = start + v
            if feature[g] < 0:
                depths[t] = max(depths[t], reach[v])
                continue
            for child in (left[g], right[g]):
                reach[child] = reach[v] + steps[g]
                queue[tail] = child
                tail += 1
    return depths


@numba.njit(cache=True)
def _placed(kind, pairs, w, size, depths):
    """The nodes breadth first over each tree's graph, a pair of children side by side
    once, and the level from which the walk lists rows (as in :func:`pack`)."""
    n = kind.size
    order = np.empty(n, dtype=np.int64)
    placed = np.zeros(n, dtype=np.bool_)
    listed_from = np.full(size.size - 1, -1, dtype=np.int64)
    k = 0
    for t in range(size.size - 1):
        base = size[t]
        head, level_end, above, total, level = k, k + 1, 0.0, w[base], 0
        weighed = total > 0  # else each node counts as half its parent
        order[k] = base
        k += 1
        while head < k:
            if head == level_end:
                if listed_from[t] < 0 and 8 * above < (total if weighed else 1.0):
                    listed_from[t] = level
                level, level_end, above = level + 1, k, 0.0
            u = order[head]
            head += 1
            if kind[u] == 0:
                continue
            above += w[u] if weighed else 0.5**level
            a, b = base + pairs[u, 0], base + pairs[u, 1]
            if not placed[a]:
                placed[a] = placed[b] = True
                order[k], order[k + 1] = a, b
                k += 2
        if listed_from[t] < 0 or listed_from[t] > depths[t]:
            listed_from[t] = depths[t]
    return order, listed_from
