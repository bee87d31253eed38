"""Monotone constraints: which way each feature may move a model's prediction, a tree's
values kept in that order, and the pooling that makes a rule list's probabilities follow
its rules' order."""

from __future__ import annotations

import dataclasses

import numpy as np

from rulecli.dataset import Dataset
from rulecli.engines import EngineTable
from rulecli.errors import ParamError
from rulecli.model.tree import TreeNodes, levels
from rulecli.schema import Kind


def monotone_signs(text: str | None, ds: Dataset | EngineTable) -> tuple[int, ...] | None:
    """``'age:+,debt:-'`` as a sign per feature in the table's order (+1 rising, -1 falling,
    0 free); None for no constraints. Only a number or a date has an order, and only a
    numeric target or two classes have one prediction to constrain."""
    if text is None or not text.strip():
        return None
    if not ds.regression and len(ds.classes) > 2:
        raise ParamError(
            f"needs a numeric target or two classes; '{ds.target}' has {len(ds.classes)} "
            "(one class's share can only rise if others fall)",
            param="monotone",
        )
    signs = dict.fromkeys(ds.schema.feature_names, 0)
    for item in text.split(","):
        name, _, sign = item.strip().rpartition(":")
        if sign not in ("+", "-") or not name:
            raise ParamError(f"'{item.strip()}' is not COLUMN:+ or COLUMN:-", param="monotone")
        if name not in signs:
            raise ParamError(f"'{name}' is not a feature of this table", param="monotone")
        if ds.schema.feature(name).kind != Kind.NUMERIC:
            raise ParamError(f"'{name}' is categorical: its levels have no order to follow", param="monotone")
        if signs[name]:
            raise ParamError(f"'{name}' is constrained twice", param="monotone")
        signs[name] = 1 if sign == "+" else -1
    return tuple(signs.values())


def refuse_monotone(text: str | None, why: str) -> None:
    """A learner whose search cannot honour monotone constraints, asked for them."""
    if text is not None and text.strip():
        raise ParamError(f"is refused here: {why}", param="monotone")


def pooled_non_increasing(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The non-increasing sequence nearest ``values`` in weighted squared error: adjacent
    violators pooled into their weighted mean (Ayer et al. 1955; Barlow et al. 1972)."""
    blocks: list[list[float]] = []  # [weighted mean, weight, length]
    for value, weight in zip(values.tolist(), np.maximum(weights, 1e-12).tolist(), strict=True):
        blocks.append([value, weight, 1])
        while len(blocks) > 1 and blocks[-2][0] < blocks[-1][0]:
            mean, w, n = blocks.pop()
            before = blocks[-1]
            total = before[1] + w
            before[0] = (before[0] * before[1] + mean * w) / total
            before[1], before[2] = total, before[2] + n
    return np.repeat([b[0] for b in blocks], [b[2] for b in blocks]).astype(np.float64)


def _level_slots(nodes: TreeNodes, split: np.ndarray, n_features: int) -> tuple[np.ndarray, ...]:
    """Categorical columns' level slots (each level a split names, then one for the rest):
    each column's first slot and end, and per node which slots go left."""
    named: dict[int, dict[str, int]] = {}
    for node in split[np.isnan(nodes.threshold[split])].tolist():
        slots = named.setdefault(int(nodes.feature[node]), {})
        for level in (*nodes.left_levels[node], *nodes.right_levels[node]):
            slots.setdefault(level, len(slots))
    slot_of = np.full(n_features, -1, dtype=np.int64)
    slot_end = np.full(n_features, -1, dtype=np.int64)
    start = 0
    for j in sorted(named):
        slot_of[j] = start
        start += len(named[j]) + 1
        slot_end[j] = start
    goes = np.zeros((nodes.n_nodes, max(start, 1)), dtype=bool)
    for j, slots in named.items():
        for node in split[nodes.feature[split] == j].tolist():
            row = goes[node, slot_of[j] : slot_end[j]]
            row[:] = bool(nodes.missing_left[node])  # the rest go as missing values do
            row[[slots[v] for v in nodes.left_levels[node]]] = True
            row[[slots[v] for v in nodes.right_levels[node]]] = False
    return slot_of, slot_end, goes


def monotone_tree(nodes: TreeNodes, signs: tuple[int, ...], regression: bool) -> TreeNodes:
    """``nodes`` with values that never move against ``signs`` (per feature: +1, -1, 0).

    The tree's growth is replayed breadth first. Its leaves so far partition the rows; a
    split replaces one of them by its two children, and each child's value is kept within
    the values of the leaves it must stay above or below: those whose box meets the
    child's in every column but one constrained column, and lies wholly on one side of it
    there. The parent was within those bounds, so they never cross; two children split on
    a constrained column the wrong way round are pooled into their weighted mean. Every
    leaf set on the way, the last included, is then monotone, and the bounds come from the
    values actually grown, not halved at each split (LightGBM's "intermediate" constraints
    against its "basic" ones, which held such trees well below the unconstrained tree's
    accuracy). A class share is written back as the two class weights that give it, the
    node's weight kept; a mean as the mean. Compiled: a forest replays every tree."""
    from rulecli.counting import kernel

    value = nodes.value[:, 0].astype(np.float64) if regression else _shares(nodes.value)
    split = np.flatnonzero(nodes.feature >= 0)
    order = np.concatenate(
        [level[nodes.feature[level] >= 0] for level in levels(nodes.feature, nodes.left, nodes.right)]
    )
    slot_of, slot_end, goes = _level_slots(nodes, split, len(signs))
    kernel.ordered_values(
        order.astype(np.int64),
        nodes.feature.astype(np.int64),
        nodes.threshold.astype(np.float64),
        nodes.missing_left.astype(bool),
        nodes.left.astype(np.int64),
        nodes.right.astype(np.int64),
        value,
        nodes.n_samples.astype(np.float64),
        np.array(signs, dtype=np.int64),
        slot_of,
        slot_end,
        goes,
    )
    if regression:
        fitted = value[:, None]
    else:
        total = nodes.value.sum(axis=1)
        fitted = np.column_stack([total * (1 - value), total * value])
    return dataclasses.replace(nodes, value=fitted)


def _shares(value: np.ndarray) -> np.ndarray:
    total = value.sum(axis=1)
    return np.divide(value[:, 1], total, out=np.zeros_like(total, dtype=np.float64), where=total > 0)
